"""Which of a frame's shown values a single step cannot change (static, nothing is run).

Between a stop on line L and the frame's next *step* stop after ``step_into``, ``step_over`` or
``step_return`` (the same frame, one line on, or back from a call; not a breakpoint, which a
``step_return`` may reach after more lines of the frame ran), this frame runs only line L's
statement (a compound statement: its header). Called code runs too, but it cannot rebind this
frame's names: only a ``global`` (for the module's frame) or ``nonlocal`` (for an enclosing
function's) declaration lets it. So a name that L does not bind and no function declares
``global``/``nonlocal`` keeps its object; if that object is immutable (its repr is an int, float,
complex, string, bytes, bool or None literal) it keeps its repr too. A mutable value (a list...)
may change through any alias, and stays free, unless no code the step runs can hold it (`model.static.untouched`).

`kept_locals(program, previous)` gives, per frame of the stack (outermost first), the names the
step may rebind there and the immutable values it must keep, from `model.static.frame_names`' binding
sites (so the same programs are left out: ``exec``, ``globals()``, class bodies...; a program that
defines ``__repr__`` too, since its reprs can look like literals). The flow grammar
(`model.static.flow_regex`) then allows a continued frame's delta to list only those names and, written in
full, the kept values unchanged. A *quiet* line (`quiet_lines`: binding names to constants, names and displays of
them, a ``for`` over constants, ``pass``...) runs no code at all, and when the frame's next stop is certainly on
another of its lines, every value of the stack keeps its repr, mutable ones too; so does a Step Into that enters a
line's first call with nothing run before it (`model.static.first_call`), and a step from the header of a loop over
a list, tuple, string or dict the frame shows (`model.static.loop_entry.iterates_shown_sequence`). For the stepping frame, `KeptLocals.required` adds the other side: the new names
the line certainly binds (`model.static.certain_bindings`), which the delta or the full locals must then list.
Checked on recorded runs (tests/test_line_effects.py, tests/test_certain_bindings.py).
"""
from __future__ import annotations

import ast
import symtable
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from model.static.certain_bindings import certain_bindings, literal_bindings
from model.static.line_nodes import definition_parts, header_nodes
from model.static.loop_entry import item_literals, iterates_shown_sequence, next_lines, shown_targets
from model.static.untouched import untouched
from protocol.debugger import ActionKind, State, StopReason

if TYPE_CHECKING:
    from model.static.flow import FlowSet

_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None))


@dataclass(frozen=True)
class KeptLocals:
    """A continued frame's locals after one step: `rebindable` names may change or appear; `kept` values may not."""

    rebindable: frozenset[str]
    kept: dict[str, str]
    shown: frozenset[str]  # the frame's keys before the step
    order: tuple[str, ...] = ()  # the same, in the order the frame showed them
    # next line -> new names the step certainly shows there (`model.static.certain_bindings`; the stepping frame only)
    required: dict[int, frozenset[str]] = field(default_factory=dict)
    fleeting: frozenset[str] = frozenset()  # names Python deletes when a handler ends (``except E as name``)
    shown_values: frozenset[str] = frozenset()  # names the line rebinds, if at all, to values debugpy shows
    # required names bound to a literal -> its repr (`model.static.certain_bindings.literal_bindings`)
    literals: dict[str, str] = field(default_factory=dict)

    def may_disappear(self) -> frozenset[str]:
        """The shown names the step may take out of the frame: rebound to a function (or deleted), or a handler's name."""
        return self.shown & ((self.rebindable - self.shown_values) | self.fleeting)

    def delta_keys(self, visible: frozenset[str]) -> frozenset[str]:
        """The keys a delta of the frame may list: changed values and new names."""
        return frozenset(k for k in visible if k not in self.kept and (k in self.shown or k in self.rebindable))

    def full_keys(self, visible: frozenset[str]) -> frozenset[str]:
        """The keys the frame written in full may hold (the kept ones only with their values)."""
        return frozenset(k for k in visible if k in self.shown or k in self.rebindable)


def kept_locals(program: str, previous: State, action: ActionKind = ActionKind.STEP_INTO) -> dict[int, KeptLocals]:
    """Depth (outermost frame 0) -> what `action` (a step) from `previous` may change in that frame (missing: not known).

    The stepping (top) frame after ``step_return`` is left out (it stops there only at a breakpoint), and
    so are the frames below it after ``step_over``/``step_return`` from a generator or coroutine: a
    return at a ``yield`` is not a stop, so the caller may run many lines before the next one.
    """
    rebinds, suspendable = _rebinds(program)
    if not rebinds or previous.finished or not previous.frames:
        return {}
    top = len(previous.frames) - 1
    below_ok = action is ActionKind.STEP_INTO or previous.frames[0].name not in suspendable
    stepping = previous.frames[0]
    quiet = action in QUIET_STEPS and stepping.file is None and (stepping.name, stepping.line) in quiet_lines(program)
    quiet = quiet or (action is ActionKind.STEP_INTO and _enters_first_call(program, previous))
    quiet = quiet or (action in QUIET_STEPS and stepping.file is None and iterates_shown_sequence(program, stepping))
    reached_not = {} if quiet else untouched(program, previous, action)  # mutable values no code of the step holds
    out: dict[int, KeptLocals] = {}
    for depth, frame in enumerate(reversed(previous.frames)):
        if frame.file is not None or (depth == top and action is ActionKind.STEP_RETURN) or (depth < top and not below_ok):
            continue
        names = rebinds.get((frame.name, frame.line))
        if names is None:
            continue
        kept = {k: v for k, v in frame.locals.items() if k not in names and (quiet or is_immutable_repr(v) or k in reached_not.get(depth, ()))}
        bound = certain_bindings(program).get((frame.name, frame.line), {}) if depth == top else {}
        required = {n: frozenset(new) for n, names in bound.items() if (new := names - frame.locals.keys())}
        shown_values = frozenset().union(*bound.values())
        literals = {n: v for n, v in literal_bindings(program).get((frame.name, frame.line), {}).items() if n not in frame.locals}
        if depth == top and (items := item_literals(program, frame)):
            literals |= items  # a loop's next item: a new name, or a shown one the step rebinds
            changed = frozenset(n for n, v in items.items() if frame.locals.get(n) != v)
            for line in next_lines(program, frame):
                required[line] = required.get(line, frozenset()) | changed
        if depth == top and action in QUIET_STEPS:
            targets, body = shown_targets(program, frame)  # a loop over shown values: entering its body shows every target
            for line in body:
                required[line] = required.get(line, frozenset()) | (targets - frame.locals.keys())
        out[depth] = KeptLocals(names, kept, frozenset(frame.locals), tuple(frame.locals), required, _handler_names(program), shown_values,
                                literals)  # fmt: skip
    return out


@lru_cache(maxsize=32)
def _handler_names(program: str) -> frozenset[str]:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    return frozenset(node.name for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler) and node.name)


def is_immutable_repr(text: str) -> bool:
    """Whether `text` is the repr of an immutable builtin atom (parsed as a literal, never run)."""
    if len(text) > 10_000:
        return False
    try:
        return isinstance(ast.literal_eval(text), _IMMUTABLE)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


@lru_cache(maxsize=32)
def _rebinds(program: str) -> tuple[dict[tuple[str, int], frozenset[str]], frozenset[str]]:
    """((code object name, line) -> the names a step from a stop there may rebind in that frame, the names of
    generator and coroutine code objects)."""
    from model.static.flow import FlowUnavailable, program_flow
    from model.static.frame_names import _bindings, _header_lines, frame_names

    if "__repr__" in program or not frame_names(program):
        return {}, frozenset()
    try:
        flow = program_flow(program)
        tree = ast.parse(program)
        top = symtable.symtable(program, "<program>", "exec")
    except (FlowUnavailable, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, frozenset()
    suspendable = frozenset(s.name for s in flow.scopes if s.generator or isinstance(s.node, ast.AsyncFunctionDef))
    declared_global, declared_nonlocal = _declared(top)
    out: dict[tuple[str, int], frozenset[str] | None] = {}
    for scope in flow.scopes:
        if scope.kind == "module":
            body, always = tree.body, declared_global
        elif scope.kind == "function":
            body, always = scope.node.body, declared_nonlocal  # type: ignore[attr-defined]
        else:
            continue
        at: dict[int, set[str]] = {line: set(always) for line in scope.lines}
        for name, stmt in _bindings(body):
            lines = _header_lines(stmt, scope.lines) or scope.lines  # no line event of its own: any step may bind it
            for line in lines:
                at[line].add(name)
        for line, names in at.items():
            key = (scope.name, line)
            out[key] = None if key in out else frozenset(names)  # two code objects share the name and line: unknown
    return {k: v for k, v in out.items() if v is not None}, suspendable


QUIET_STEPS = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER})


def _enters_first_call(program: str, previous: State) -> bool:
    """Whether a Step Into from `previous` stops as its line's first call begins, nothing having run before it
    (`model.static.first_call`): every value of the stack then keeps its repr, as after a quiet line."""
    from model.static.first_call import at_line_start, first_call

    top = previous.frames[0]
    return top.file is None and at_line_start(previous) and first_call(program, top.name, top.line) is not None
# expressions whose evaluation runs no code of the program (no call, operator, attribute, iteration or format)
_QUIET_EXPRESSIONS = (ast.Constant, ast.Name, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Load)
_QUIET_STATEMENTS = (ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)


def quiet_lines(program: str) -> frozenset[tuple[str, int]]:
    """(code object name, line) of the stops whose step runs nothing but binding names and from which the frame cannot
    return: every statement with a line event there is ``pass``/``break``/``continue``/``global``, an assignment of a
    quiet expression (constants, names and displays of them, ``-1``) to plain names (a display of as many on the right
    for a tuple target), a ``for`` over a display of constants, ``while True``, or an undecorated ``def`` whose defaults
    and annotations are quiet expressions. Nothing runs between such a stop and
    the next (reading an unbound name raises, which changes no value either), so no value of the stack can change but
    the names the line binds. Empty for programs `kept_locals` leaves out."""
    return _quiet(program)[0]


def silent_lines(program: str) -> frozenset[tuple[str, int]]:
    """The `quiet_lines` that read no name, so cannot raise: a step from one stops on one of the frame's own lines."""
    return _quiet(program)[1]


def staying(flow: FlowSet, program: str, previous: State, action: ActionKind) -> FlowSet:
    """`flow` (after a step from `previous`) with its step stops narrowed to the stepping frame's own lines and no
    exception or exit, when `previous` stops on one of `silent_lines` (the flow alone lets any line raise into a caller's
    handler). Unchanged otherwise."""
    from model.static.flow import Continue

    top = previous.top
    if flow.unconstrained or action not in QUIET_STEPS or top is None or top.file is not None:
        return flow
    if previous.finished or previous.reason is StopReason.EXCEPTION or (top.name, top.line) not in silent_lines(program):
        return flow
    depth = len(previous.frames) - 1
    shapes = [shape for shape in flow.step if isinstance(shape, Continue) and shape.depth == depth]
    if not shapes:
        return flow
    return replace(flow, step=shapes, exception=[], exit=False, returned=frozenset())


@lru_cache(maxsize=32)
def _quiet(program: str) -> tuple[frozenset[tuple[str, int]], frozenset[tuple[str, int]]]:
    from model.static.flow import EXIT, FlowUnavailable, _statements, program_flow
    from model.static.frame_names import _header_lines

    if not _rebinds(program)[0]:
        return frozenset(), frozenset()
    try:
        flow = program_flow(program)
        tree = ast.parse(program)
    except (FlowUnavailable, SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(), frozenset()
    shared = {name for name, count in Counter(scope.name for scope in flow.scopes).items() if count > 1}
    quiet: set[tuple[str, int]] = set()
    silent: set[tuple[str, int]] = set()
    for scope in flow.scopes:
        if scope.kind not in ("module", "function") or scope.name in shared:  # a name two code objects share: unsure
            continue
        body = tree.body if scope.kind == "module" else scope.node.body  # type: ignore[attr-defined]
        loud: set[int] = set()
        calm: set[int] = set()
        reads: set[int] = set()
        for stmt in _statements(body):
            lines = _header_lines(stmt, scope.lines)
            (calm if _quiet_statement(stmt) else loud).update(lines)
            if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) for n in header_nodes(stmt)):
                reads.update(lines)
        for line in calm - loud:
            if EXIT not in scope.succ.get(line, {EXIT}):
                quiet.add((scope.name, line))
                if line not in reads:
                    silent.add((scope.name, line))
    return frozenset(quiet), frozenset(silent)


def _quiet_statement(stmt: ast.stmt) -> bool:
    from model.static.loop_entry import constant_loop

    if isinstance(stmt, _QUIET_STATEMENTS):
        return True
    if isinstance(stmt, ast.Assign):
        return all(_quiet_target(target, stmt.value) for target in stmt.targets) and _quiet_expression(stmt.value)
    if isinstance(stmt, ast.For):
        return constant_loop(stmt)
    if isinstance(stmt, ast.While):
        return isinstance(stmt.test, ast.Constant) and stmt.test.value is True
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):  # makes a function: its defaults and annotations run
        return not stmt.decorator_list and all(_quiet_expression(n) for n in definition_parts(stmt))
    return False


def _quiet_target(target: ast.expr, value: ast.expr) -> bool:
    """A plain name, or a tuple / list of plain names over a display of as many values (no iteration protocol runs)."""
    if isinstance(target, ast.Name):
        return True
    return (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts) and all(isinstance(t, ast.Name) for t in target.elts))  # fmt: skip


def _quiet_expression(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Dict) and not all(isinstance(key, ast.Constant) for key in node.keys):
        return False  # ``{**other}`` runs a mapping's keys(), a key of the program's class its __hash__
    if isinstance(node, ast.Set) and not all(isinstance(item, ast.Constant) for item in node.elts):
        return False
    return isinstance(node, _QUIET_EXPRESSIONS) and all(_quiet_expression(c) for c in ast.iter_child_nodes(node))


def _declared(table: symtable.SymbolTable) -> tuple[frozenset[str], frozenset[str]]:
    """Names some function declares ``global``, and names some function declares ``nonlocal``."""
    glob: set[str] = set()
    nonloc: set[str] = set()
    todo = [table]
    while todo:
        t = todo.pop()
        todo.extend(t.get_children())
        for name in t.get_identifiers():
            symbol = t.lookup(name)
            if symbol.is_declared_global():
                glob.add(name)
            elif symbol.is_nonlocal() or (symbol.is_free() and symbol.is_assigned()):
                nonloc.add(name)
    return frozenset(glob), frozenset(nonloc)
