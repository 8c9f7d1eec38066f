"""The entry locals of a call, known before it runs: literal arguments and values the caller shows.

`entry_values(program, previous)` answers, for a `step_into` from `previous`: if the top frame's line
starts exactly one call, ``f(...)``, of a plain function of the program, which of ``f``'s parameters
have a value known now, and their reprs as the first stop in ``f`` will show them. A parameter is
known when its argument is

- a literal (``ast.literal_eval``: parsing, never running) of an immutable-or-fresh builtin kind
  whose repr debugpy shows in full (``3``, ``'abc'``, ``[1, (2, 'x')]``, ``{'a': 1}``; no sets, whose
  order is not the program's, and nothing long enough for debugpy to cut);
- a name the caller's frame shows among its locals: the call receives that very object, and
  nothing can change it between the stop and the call, because the statement holds no other call
  (so no code runs before ``f``'s), or because the call is the line's first and nothing before it runs code
  (`model.static.first_call`: ``out.append(f(x))``);
- left out, with a default that is an immutable literal (an int, a string, a tuple of those).

Only when nothing else can intervene: the statement (or compound statement's header) on that line
has one call (or the call is its quiet first one, as above) and no lambda, comprehension, ``await``, ``yield`` or ``:=``; ``f`` is a module-level
``def`` (not ``async``, not decorated, not a generator, no positional-only parameters) and the name ``f`` is bound nowhere else in
the program; the call has no ``*`` or ``**`` arguments and binds without a ``TypeError``. The
flow grammar (`model.static.flow_regex`) then writes those parameters' values as fixed text, and when every
parameter is known (`KnownEntry.complete`: a module-level function has no free variables), the
whole locals object.

A call of a plain class, ``C(...)`` (`_plain_classes`: bound once, no decorators or metaclass, bases only such classes
of the file, none with ``__new__``, ``__repr__`` or attribute hooks), enters the nearest ``__init__`` with ``self`` the
fresh object, shown by its default repr ``<module.C object at 0x?>`` (`file` names the module; the main script's is
``__main__``); `KnownEntry.lines` keeps the fixed text to that ``__init__``'s first lines.

`imported_entry_values(program, previous, modules)` answers the same for a call of another project file's plain
function or class, imported by a name bound once (``import m`` then ``m.f(...)``, or ``from m import f``), for
`model.decode.project_flow`.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from model.prompt import language as lang
from model.static.first_call import at_line_start, first_call_node, own_nodes
from protocol.debugger import State, display_key

MAX_ITEMS = 19  # debugpy's SafeRepr shows at most 19 items of a nested collection (59 at the top)
MAX_TEXT = 128  # ... cuts strings longer than 128 characters inside a collection, and shows [...] two levels down
MAX_REPR = 2000  # longer literal reprs are left to the model

_INTERVENING = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Await, ast.Yield,
                ast.YieldFrom, ast.NamedExpr)  # fmt: skip


@dataclass(frozen=True)
class Param:
    name: str
    has_default: bool
    default: str | None  # repr of an immutable literal default (None: none, or not known)


@dataclass(frozen=True)
class Signature:
    positional: tuple[Param, ...]  # positional-only and positional-or-keyword, in order
    keyword_only: tuple[Param, ...]
    varargs: str | None
    varkw: str | None
    instance: "Instance | None" = None  # a class's: the ``__init__`` a call of the class runs (its parameters after ``self``)


@dataclass(frozen=True)
class Instance:
    """What a call of a plain class shows at its ``__init__``'s first stop besides the arguments."""

    self_name: str  # the name of ``__init__``'s first parameter
    self_repr: str  # the new object's repr: ``<module.Class object at 0x?>`` (no ``__repr__`` of its own)
    init_line: int  # the ``def __init__`` line (which ``__init__`` it is: `KnownEntry.lines`)


Argument = tuple[str, str]  # ("repr", text) or ("name", identifier); an unknown argument is None


@dataclass(frozen=True)
class CallSite:
    function: str
    positional: tuple[Argument | None, ...]
    keywords: tuple[tuple[str, Argument | None], ...]


@dataclass(frozen=True)
class KnownEntry:
    """The known parameters of a call's first stop; `complete` when they are all the locals it shows."""

    values: dict[str, str]
    complete: bool
    lines: frozenset[int] | None = None  # for a name other code objects share (``__init__``): the first lines of this one

    def locals_text(self) -> str:
        """The first stop's locals object (for a `complete` entry), keys in debugpy's order."""
        return lang.json_locals({k: self.values[k] for k in sorted(self.values, key=display_key)}, delta=False)


def entry_values(program: str, previous: State, file: str | None = None) -> dict[str, KnownEntry]:
    """Function name -> its known entry for a call started on `previous`'s top line (see the module docstring);
    `file`: the project file `program` is (None: the main script), whose module name a new object's repr shows."""
    if previous.finished or not previous.frames or previous.frames[0].file is not None:
        return {}
    sites, signatures = _analysis(program, "__main__" if file is None else _module_name(file))
    known = _known_entry(program, previous, sites, signatures)
    if known is None:
        return {}
    name, entry = known
    return {"__init__" if signatures[name].instance is not None else name: entry}


def imported_entry_values(program: str, previous: State, modules: Mapping[str, str]) -> dict[tuple[str, str], KnownEntry]:
    """(file, code object name) -> the known entry of a call started on `previous`'s top line (a frame of `program`) of
    a plain module-level function or class (its ``__init__``) of another of a project's files (`modules`: path -> source) that `program` imports by a name
    bound once (``import m`` then ``m.f(...)``, or ``from m import f`` then ``f(...)``); the same rules as
    `entry_values`, the callee's signature read from its own file."""
    if previous.finished or not previous.frames or previous.frames[0].file is not None:
        return {}
    targets = _imported_functions(program, tuple(sorted(modules.items())))
    if not targets:
        return {}
    signatures = {key: sig for key, (_, _, sig) in targets.items()}
    sources = {key: modules[path] for key, (path, _, _) in targets.items()}
    known = _known_entry(program, previous, _sites(program, tuple(sorted(signatures.items()))), signatures, sources)
    if known is None:
        return {}
    key, entry = known
    path, function, sig = targets[key]
    return {(path, "__init__" if sig.instance is not None else function): entry}


def _known_entry(program: str, previous: State, sites: Mapping[int, "CallSite"], signatures: Mapping[str, "Signature"],
                 sources: Mapping[str, str] | None = None) -> "tuple[str, KnownEntry] | None":  # fmt: skip
    """The call on `previous`'s top line of one of `signatures` and its known entry, keyed by the callee's name as
    `program` calls it (`sources`: name -> the file the callee is defined in, where not `program`)."""
    top = previous.frames[0]
    site = sites.get(top.line) or (_first_site(program, top.name, top.line, signatures) if at_line_start(previous) else None)
    if site is None:
        return None
    sig = signatures[site.function]
    values = _bind(sig, site, top.locals)
    if not values:
        return None
    names = [p.name for p in sig.positional + sig.keyword_only] + [n for n in (sig.varargs, sig.varkw) if n]
    lines = None
    if sig.instance is not None:  # a class: its __init__ with the new object
        lines = _init_first_lines((sources or {}).get(site.function, program), sig.instance.init_line)
        if lines is None:
            return None
        values[sig.instance.self_name] = sig.instance.self_repr
        names.append(sig.instance.self_name)
    complete = set(values) == set(names) and not any(n.startswith("__") and n.endswith("__") for n in names)
    return site.function, KnownEntry(values, complete, lines)


def _init_first_lines(source: str, def_line: int) -> frozenset[int] | None:
    """The first lines (`model.static.flow`) of the ``__init__`` defined on `def_line` of `source`."""
    from model.static.flow import EXIT, FlowUnavailable, program_flow

    try:
        scopes = program_flow(source).functions.get("__init__", [])
    except FlowUnavailable:
        return None
    lines = [s.entry - {EXIT} for s in scopes if getattr(s.node, "lineno", None) == def_line]
    return lines[0] if len(lines) == 1 and lines[0] else None


def literal_repr(node: ast.expr) -> str | None:
    """The repr debugpy shows for a literal argument, or None (not a literal, a set, or long enough to be cut)."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value_repr(value)


def value_repr(value: object) -> str | None:
    """The repr debugpy shows for a literal `value` (parsed from source or from a shown repr), or None where SafeRepr
    would not show it as `repr` does (`_shown_in_full`) or it is long enough to be cut."""
    if not _shown_in_full(value):
        return None
    text = repr(value)
    return text if len(text) <= MAX_REPR else None


def _shown_in_full(value: object, level: int = 0) -> bool:
    """Whether debugpy's SafeRepr shows `value` as `repr` does: containers only two levels deep, few items, short inner strings."""
    if value is None or isinstance(value, (bool, int, float, complex)):
        return not isinstance(value, int) or abs(value) < 10**100
    if isinstance(value, (str, bytes)):
        return level == 0 or len(value) <= MAX_TEXT
    if level >= 2:
        return False  # SafeRepr shows a container nested this deep as [...]
    if isinstance(value, (list, tuple)):
        return len(value) <= MAX_ITEMS and all(_shown_in_full(v, level + 1) for v in value)
    if isinstance(value, dict):
        return len(value) <= MAX_ITEMS and all(_shown_in_full(k, level + 1) and _shown_in_full(v, level + 1) for k, v in value.items())
    return False  # sets and frozensets (iteration order), bytes-likes and the rest


def _immutable(value: object) -> bool:
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return True
    return isinstance(value, tuple) and all(_immutable(v) for v in value)


# ------------------------------------------------------------------------------ static part


@lru_cache(maxsize=64)
def _analysis(program: str, module: str = "__main__") -> tuple[dict[int, CallSite], dict[str, Signature]]:
    """Call sites by line and the signatures of the plain module-level functions and classes (of module `module`) they call."""
    tree = _parse(program)
    signatures = {**_plain_functions(tree), **_plain_classes(tree, module)} if tree is not None else {}
    return (_sites(program, tuple(sorted(signatures.items()))), signatures) if signatures else ({}, {})


@lru_cache(maxsize=64)
def _sites(program: str, signatures: tuple[tuple[str, Signature], ...]) -> dict[int, CallSite]:
    """The lines of `program` that start exactly one call of a function among `signatures` (called by name or
    ``module.name``), and that call."""
    tree = _parse(program)
    if tree is None or not signatures:
        return {}
    known = dict(signatures)
    found: dict[int, list[CallSite | None]] = {}
    for node in ast.walk(tree):
        for line, expressions in _evaluated_parts(node):
            found.setdefault(line, []).append(_site(expressions, known))
    # a line with two statements (`if f(1): g(2)`) is not judged
    return {line: only[0] for line, only in found.items() if len(only) == 1 and only[0] is not None}


@lru_cache(maxsize=64)
def _imported_functions(program: str, modules: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, str, Signature]]:
    """How `program` calls the plain module-level functions and classes of the project's other files it imports at
    module level: ``m.f`` or ``f`` -> (the file, the function or class, its signature). Only names `program` binds once (the import)."""
    tree = _parse(program)
    if tree is None:
        return {}
    files = {_module_name(path): path for path, _ in modules}
    sources = dict(modules)
    bindings = _binding_counts(tree)
    found: dict[str, tuple[str, str, Signature]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                path = files.get(alias.name)
                local = alias.asname or alias.name
                if path is not None and "." not in local and bindings.get(local) == 1:
                    found |= {f"{local}.{name}": (path, name, sig) for name, sig in _plain_signatures(sources[path], alias.name).items()}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in files:
            path = files[node.module]
            signatures = _plain_signatures(sources[path], node.module)
            for alias in node.names:
                local = alias.asname or alias.name
                if alias.name in signatures and bindings.get(local) == 1:
                    found[local] = (path, alias.name, signatures[alias.name])
    return found


def _module_name(path: str) -> str:
    """The dotted module name of a project file's path (``pkg/mod.py`` -> ``pkg.mod``, ``pkg/__init__.py`` -> ``pkg``)."""
    parts = path.replace("\\", "/").removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


@lru_cache(maxsize=64)
def _plain_signatures(source: str, module: str) -> dict[str, Signature]:
    """The plain functions and classes of module `module` (its `source`)."""
    tree = _parse(source)
    return {**_plain_functions(tree), **_plain_classes(tree, module)} if tree is not None else {}


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _plain_functions(tree: ast.Module) -> dict[str, Signature]:
    bindings = _binding_counts(tree)
    plain: dict[str, Signature] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.decorator_list or node.args.posonlyargs or bindings.get(node.name) != 1:
            continue
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(node)):
            continue
        plain[node.name] = _signature(node.args)
    return plain


_OWN_OBJECT_METHODS = frozenset({"__new__", "__repr__", "__init_subclass__", "__class_getitem__", "__getattribute__", "__setattr__"})


def _plain_classes(tree: ast.Module, module: str) -> dict[str, Signature]:
    """Module-level classes whose call certainly runs a plain ``__init__`` of this file on a fresh object of the default
    repr: bound once, no decorators, no metaclass, bases only such classes of the file (or ``object``), none with a
    ``__new__``, ``__repr__`` or attribute hooks, the nearest ``__init__`` a plain ``def`` (no decorators, no
    positional-only parameters, not a generator) whose first parameter is ``self``'s."""
    bindings = _binding_counts(tree)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and bindings.get(n.name) == 1}
    found: dict[str, Signature] = {}
    for name, node in classes.items():
        init = _nearest_init(node, classes)
        if init is None or not init.args.args:
            continue
        plain = _signature(init.args)
        instance = Instance(init.args.args[0].arg, f"<{module}.{name} object at 0x?>", init.lineno)
        found[name] = Signature(plain.positional[1:], plain.keyword_only, plain.varargs, plain.varkw, instance)
    return found


def _nearest_init(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef]) -> ast.FunctionDef | None:
    """The ``__init__`` a call of class `node` runs, where its whole class chain is plain (`_plain_classes`); else None."""
    chain = [node]
    while chain[-1].bases and not (isinstance(chain[-1].bases[0], ast.Name) and chain[-1].bases[0].id == "object"):
        base = chain[-1].bases[0]
        if len(chain) > 8 or not isinstance(base, ast.Name) or base.id not in classes or classes[base.id] in chain:
            return None
        chain.append(classes[base.id])
    init: ast.FunctionDef | None = None
    for cls in chain:
        if cls.decorator_list or cls.keywords or len(cls.bases) > 1:
            return None
        assigned = {t.id for s in cls.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                    for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) if isinstance(t, ast.Name)}  # fmt: skip
        defs = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if assigned & (_OWN_OBJECT_METHODS | {"__init__"}) or set(defs) & _OWN_OBJECT_METHODS:
            return None
        found = defs.get("__init__")
        if init is None and found is not None:
            if not isinstance(found, ast.FunctionDef) or found.decorator_list or found.args.posonlyargs:
                return None
            if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(found)):
                return None
            init = found
    return init


def _binding_counts(tree: ast.Module) -> dict[str, int]:
    """How many times each name is bound anywhere in `tree`."""
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        for name in _bound_names(node):
            counts[name] = counts.get(name, 0) + 1
    return counts


def _bound_names(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _signature(args: ast.arguments) -> Signature:
    positional = list(args.posonlyargs) + list(args.args)
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    return Signature(
        positional=tuple(Param(a.arg, d is not None, _default(d)) for a, d in zip(positional, defaults)),
        keyword_only=tuple(Param(a.arg, d is not None, _default(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults)),
        varargs=args.vararg.arg if args.vararg else None,
        varkw=args.kwarg.arg if args.kwarg else None,
    )


def _default(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return literal_repr(node) if _immutable(value) else None


def _evaluated_parts(node: ast.AST) -> list[tuple[int, list[ast.expr]]]:
    """(line, expressions evaluated by a stop on that line) for a simple statement or a compound header."""
    if isinstance(node, (ast.Expr, ast.Return)) and node.value is not None:
        return [(node.lineno, [node.value])]
    if isinstance(node, ast.Assign):
        return [(node.lineno, [node.value, *node.targets])]
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
        return [(node.lineno, [node.value, node.target])]
    if isinstance(node, (ast.If, ast.While)):
        return [(node.lineno, [node.test])]
    return []


def _site(expressions: list[ast.expr], signatures: Mapping[str, Signature]) -> CallSite | None:
    nodes = [n for e in expressions for n in ast.walk(e)]
    calls = [n for n in nodes if isinstance(n, ast.Call)]
    if len(calls) != 1 or any(isinstance(n, _INTERVENING) for n in nodes):
        return None
    call = calls[0]
    callee = _callee_key(call.func)
    if callee is None or callee not in signatures:
        return None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    return CallSite(callee, tuple(_argument(a) for a in call.args), tuple((k.arg, _argument(k.value)) for k in call.keywords))  # type: ignore[misc]


def _callee_key(func: ast.expr) -> str | None:
    """``f`` for a call of a name, ``m.f`` for a call of a module's attribute."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _first_site(program: str, frame: str, line: int, signatures: Mapping[str, Signature]) -> CallSite | None:
    """The line's first call where nothing runs before it (`model.static.first_call`: its arguments are read just
    before it), on a line with more calls."""
    call = first_call_node(program, frame, line)
    return None if call is None else _site([call], signatures)


def _argument(node: ast.expr) -> Argument | None:
    if isinstance(node, ast.Name):
        return ("name", node.id)
    text = literal_repr(node)
    return ("repr", text) if text is not None else None


# ------------------------------------------------------------------------------ binding


def _bind(sig: Signature, site: CallSite, caller_locals: dict[str, str]) -> dict[str, str]:
    """{parameter: repr} for the parameters whose value is known; {} when the call would not bind."""

    def value(arg: Argument | None) -> str | None:
        if arg is None:
            return None
        kind, text = arg
        return text if kind == "repr" else caller_locals.get(text)

    bound: dict[str, str | None] = {}
    for param, arg in zip(sig.positional, site.positional):
        bound[param.name] = value(arg)
    extra = site.positional[len(sig.positional):]
    if extra and sig.varargs is None:
        return {}
    if sig.varargs is not None:
        bound[sig.varargs] = None if extra else "()"  # the extra arguments' reprs nested in a tuple may be cut
    names = {p.name for p in sig.positional} | {p.name for p in sig.keyword_only}
    leftover: dict[str, str | None] = {}
    for key, arg in site.keywords:
        if key in bound:
            return {}  # given twice: a TypeError, no frame
        if key in names:
            bound[key] = value(arg)
        elif sig.varkw is not None:
            leftover[key] = value(arg)
        else:
            return {}
    for param in sig.positional + sig.keyword_only:
        if param.name not in bound:
            if not param.has_default:
                return {}  # missing: a TypeError
            bound[param.name] = param.default
    if sig.varkw is not None:
        bound[sig.varkw] = None if leftover else "{}"
    return {k: v for k, v in bound.items() if v is not None}


