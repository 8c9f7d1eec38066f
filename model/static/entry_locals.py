"""Which locals a function's first stop shows, known from its signature (static, nothing is run).

At the first stop of a new call (the function's first body line) the frame's locals are its
parameters and the free variables it reads from enclosing functions, nothing else: no body line has
run yet. debugpy lists them in pydevd's order (plain names, ``_x``, ``__x``; sorted within each
group) and hides dunders and values that are functions, classes or modules. So for every function
the analysis can place (`model.static.flow.program_flow`), `entry_locals(program)` gives, per (frame name,
entry line), the names that may appear there in order, and which of them must:

- a parameter must appear, unless its value may be hidden: it is called in the body (``key(x)``),
  named ``cls``/``mcs``/``metacls``, the first parameter of a ``classmethod``, annotated with a
  callable or class type, or defaulting to a name, attribute or lambda (``key=len``);
- a free variable may appear (its cell may still be empty, or hold a function);
- ``__class__`` (the cell ``super()`` uses) never appears (a dunder, and a class).

`entry_locals_regex` turns one spec into the locals part of the state grammar
(`model.prompt.language.FULL_LOCALS_RE` narrowed to those keys in that order). It narrows ``inv_step_call``,
whose answer is exactly such a first stop (CruxEval-I's arguments;
`model.decode.constraints.InverseCallConstraint`). Forward steps into a call are not narrowed: measured on
CruxEval-O, a model forced off the keys it wanted wrote values that never ended (docs/inference.md).
"""
from __future__ import annotations

import ast
import itertools
import re
import symtable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from model.prompt import language as lang
from model.static.flow import decorator_name
from model.static.flow_regex import alt, kept_frames
from model.static.param_kinds import bound_names, closed_program, param_starts
from model.static.value_kinds import starts_value_regex
from protocol.debugger import display_key

if TYPE_CHECKING:
    from protocol.debugger import State

MAX_OPTIONAL = 4  # more optional names than this: the spec is dropped (2**n alternatives)
_HIDDEN_NAMES = frozenset({"cls", "mcs", "metacls", "klass"})
_HIDDEN_ANNOTATIONS = ("Callable", "type", "Type", "ModuleType", "FunctionType")


@dataclass(frozen=True)
class EntryLocals:
    """The locals of a function's first stop: `names` in debugpy's order, `required` those that must appear."""

    names: tuple[str, ...]
    required: frozenset[str]
    starts: tuple[tuple[str, tuple[str, ...]], ...] = ()  # name -> its value's repr starts (`model.static.param_kinds`)

    def allows(self, keys: list[str]) -> bool:
        """Whether a first stop showing `keys` (in order) fits the spec."""
        return self.required <= set(keys) and keys == [n for n in self.names if n in keys]


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _frees(program: str) -> dict[tuple[str, int], frozenset[str]]:
    """Free variables per (function name, def line), from the symbol table."""
    out: dict[tuple[str, int], frozenset[str]] = {}
    todo = [symtable.symtable(program, "<program>", "exec")]
    while todo:
        table = todo.pop()
        todo.extend(table.get_children())
        if isinstance(table, symtable.Function):
            out[(table.get_name(), table.get_lineno())] = frozenset(table.get_frees())
    return out


def _maybe_hidden(arg: ast.arg, default: ast.expr | None, called: set[str], first_of_classmethod: bool) -> bool:
    if arg.arg in called or arg.arg in _HIDDEN_NAMES or first_of_classmethod:
        return True
    if arg.annotation is not None and any(word in ast.unparse(arg.annotation) for word in _HIDDEN_ANNOTATIONS):
        return True
    return isinstance(default, (ast.Name, ast.Attribute, ast.Lambda))


def signature_locals(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, frees: frozenset[str]) -> EntryLocals | None:
    """The spec of one function node with its free variables (None: too many optional names)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs: list[tuple[ast.arg, ast.expr | None]] = list(zip(positional, defaults))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults))
    pairs += [(a, None) for a in (args.vararg, args.kwarg) if a is not None]
    body = node.body if isinstance(node.body, list) else [node.body]
    called = {n.func.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    classmethod_ = not isinstance(node, ast.Lambda) and any(decorator_name(d) == "classmethod" for d in node.decorator_list)
    required: set[str] = set()
    names: set[str] = set()
    for index, (arg, default) in enumerate(pairs):
        if _is_dunder(arg.arg):
            continue
        names.add(arg.arg)
        if not _maybe_hidden(arg, default, called, classmethod_ and index == 0):
            required.add(arg.arg)
    names |= {f for f in frees if not _is_dunder(f)}
    if len(names - required) > MAX_OPTIONAL:
        return None
    return EntryLocals(tuple(sorted(names, key=display_key)), frozenset(required))


def entry_locals(program: str) -> dict[tuple[str, int], EntryLocals]:
    """Per (frame name, first body line): the first stop's locals (see the module docstring).

    Generators and coroutines are left out: each resumption is a new frame on the stack, which may
    start on the first line with more locals (and ``inv_step_call`` from inside one goes back to the
    start of that resumption, not to the call). Empty when the program cannot be analysed; a (name,
    line) that two code objects share is left out.
    """
    return _entry_specs(program)[0]


@lru_cache(maxsize=32)
def _entry_specs(program: str) -> tuple[dict[tuple[str, int], EntryLocals], frozenset[str]]:
    """(`entry_locals`, the names of functions some of whose first stops have no spec)."""
    from model.static.flow import EXIT, FlowUnavailable, program_flow

    try:
        flow = program_flow(program)
        frees = _frees(program)
        tree = ast.parse(program)
    except (FlowUnavailable, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, frozenset()
    closed, shadowed = closed_program(tree), bound_names(tree)
    specs: dict[tuple[str, int], EntryLocals | None] = {}
    for scope in flow.scopes:
        node = scope.node
        if scope.kind not in ("function", "lambda"):
            continue
        if scope.generator or isinstance(node, ast.AsyncFunctionDef):
            specs.update({(scope.name, line): None for line in scope.entry - {EXIT}})
            continue
        spec = signature_locals(node, frees.get((scope.name if scope.kind == "function" else "lambda", node.lineno), frozenset()))  # type: ignore[attr-defined]
        if spec is not None and closed:
            starts = param_starts(node, shadowed)  # type: ignore[arg-type]
            spec = EntryLocals(spec.names, spec.required, tuple(sorted((n, s) for n, s in starts.items() if n in spec.names)))
        for line in scope.entry - {EXIT}:
            key = (scope.name, line)
            specs[key] = None if key in specs else spec  # shared by two code objects: unknown
    # a line another code object of the same name stops on (a generator resuming there) is not only an entry
    for scope in flow.scopes:
        for line in scope.lines:
            if (scope.name, line) in specs and (line not in scope.entry or scope.generator):
                specs[(scope.name, line)] = None
    unknown = frozenset(name for (name, _), spec in specs.items() if spec is None)
    return {key: spec for key, spec in specs.items() if spec is not None}, unknown


def _pair(name: str, starts: dict[str, tuple[str, ...]]) -> str:
    value = starts_value_regex(starts[name]) if name in starts else lang.JSON_STRING_RE
    return re.escape(lang.json_string(name)) + ":" + value


def entry_locals_regex(spec: EntryLocals, *, typed: bool = False) -> str:
    """The full-locals object of a first stop: the required names and any of the optional ones, in order.

    `typed`: each value begins as `spec.starts` says (only for a call known to have returned normally).
    """
    optional = [n for n in spec.names if n not in spec.required]
    starts = dict(spec.starts) if typed else {}
    options = []
    for r in range(len(optional) + 1):
        for chosen in itertools.combinations(optional, r):
            keys = [n for n in spec.names if n in spec.required or n in chosen]
            options.append(r"\{" + ",".join(_pair(n, starts) for n in keys) + r"\}")
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


def inverse_call_regex(program: str, later: "State", *, include_end: bool = True, typed: bool = True,
                       names: bool = True) -> str | None:  # fmt: skip
    """The state text ``inv_step_call`` may predict from `later`: the first stop of a call (None: unknown).

    Just after a call returned (`later` has a return value ``f`` or ``Class.f``): the stack below
    the caller unchanged, the caller on one of its lines, then a new frame of ``f`` on its first
    line with its entry locals. Inside a function: its frame continued on its first line, with
    those locals in full (or as a delta when no local was added since: when `later` shows a name
    the entry cannot have, that name disappeared, and the language writes the locals in full). A
    step stop, no return value or exception; printed text may follow. Frames of other files: None. After a return, with
    `typed`, each argument begins as `model.static.param_kinds` says (the call returned normally, so what
    it certainly evaluated did not fail). Without `names`, the first stop is placed but its locals are any
    object (`model.decoding`'s plain rules).
    """
    from protocol.debugger import StopReason

    if later.finished or not later.frames or any(f.file is not None for f in later.frames):
        return None
    info = lang.program_info(program)
    specs, unknown = _entry_specs(program)
    old = list(reversed(later.frames))
    line_sep = re.escape(lang.LINE_SEP)
    kept = kept_frames(old, len(old) - 1)
    top = old[-1]
    if later.return_value is not None:
        name = later.return_value.name.rsplit(".", 1)[-1]
        caller_lines = info.lines_of(top.name) or frozenset({top.line})
        caller = f"{re.escape(lang.FRAME_SEP)}{re.escape(top.name)}{line_sep}{alt(str(n) for n in sorted(caller_lines))}{lang.LOCALS_ANY_RE}"
        # the call returned: what it certainly evaluated did not fail (a None may be a frame left by an exception)
        firsts = _firsts(specs, name, typed=typed and later.return_value.value != "None", names=names)
        if not firsts or name in unknown:
            return None
        stack = kept + caller + re.escape(lang.CALL_SEP) + re.escape(name) + line_sep + alt(firsts)
    else:
        if top.name == "<module>":
            return None
        firsts = _firsts(specs, top.name, delta=True, later_names=frozenset(top.locals), names=names)
        if not firsts or top.name in unknown:
            return None
        stack = kept + re.escape(lang.FRAME_SEP) + re.escape(top.name) + line_sep + alt(firsts)
    tail = f"(?:{re.escape(lang.STDOUT)}{lang.JSON_STRING_RE})?"
    end = re.escape(lang.STATE_END) if include_end else ""
    return re.escape(lang.REASON_TOKENS[StopReason.STEP]) + stack + tail + end


def _firsts(specs: dict[tuple[str, int], EntryLocals], name: str, delta: bool = False, typed: bool = False,
            later_names: frozenset[str] = frozenset(), names: bool = True) -> list[str]:  # fmt: skip
    """`line` + locals for each first line of the functions called `name` (`typed`: values narrowed by `EntryLocals.starts`;
    `delta`: a delta against a frame showing `later_names` is allowed too, when none of them disappears at the entry;
    without `names`, any full locals object)."""
    out = []
    for (spec_name, line), spec in sorted(specs.items()):
        if spec_name == name:
            if not names:
                out.append(f"{line}(?:{lang.FULL_LOCALS_RE}|{lang.DELTA_LOCALS_RE})" if delta else f"{line}{lang.FULL_LOCALS_RE}")
                continue
            body = entry_locals_regex(spec, typed=typed)
            deltas = delta and later_names <= set(spec.names)
            out.append(f"{line}(?:{body}|{lang.DELTA_LOCALS_RE})" if deltas else f"{line}{body}")
    return out
