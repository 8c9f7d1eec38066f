"""Which mutable values a single step cannot reach (static, nothing is run).

`model.static.line_effects` keeps a value's repr across a step when the value is immutable, or when the line runs no
code at all. A list, dict or set changes only through code that holds it. When the stop's line starts no code of the
program (no call of its functions or classes, no dunder, property or function passed as a value that library code may
call back, no generator it may resume; comprehensions written on the line are followed into), only the line's own
expressions and the library code they call run, and they hold only what the line names: its names' objects and what
those contain. So a shown mutable value stays as it is when

- its name is not among the names the line mentions (read, bound, deleted: any ``ast.Name`` of the statement, a
  compound statement's header, comprehensions and lambdas on it included), and
- every name the line reads either shows a value whose repr is a literal (``ast.literal_eval``: no object of a
  class, nothing cut short with ``...``) that neither contains the value's repr nor is contained in it (the same object
  shown under two names has one repr; one holding the other shows it inside), or shows no value and is only ever bound
  as a routine, class or module (a ``def``, ``class`` or ``import``; never bound: a builtin). A name bound otherwise and
  not shown holds a hidden routine, which may be a bound method of the value (``push = stack.append``).

Library code could keep a reference from an earlier call and use it later (a cache, a registry); this is not assumed.
The step must not leave its frame: a return (or a generator's yield) lets the caller's calling line run on, which
this rule does not read (the stop's line cannot return: `model.static.flow`'s line graph; a module's may end the run).
`untouched(program, previous, action)` gives, per frame depth, the names whose values a Step Into or Step Over from
`previous` keeps; `line_effects.kept_locals` adds them to the kept values. Checked on recorded runs
(tests/test_untouched.py).
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from functools import lru_cache

from model.static.line_nodes import header_nodes
from protocol.debugger import ActionKind, State

STEPS = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER})
_ATOMS = (int, float, complex, str, bytes, bool, type(None))
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def untouched(program: str, previous: State, action: ActionKind) -> dict[int, frozenset[str]]:
    """Depth (outermost frame 0) -> the names whose shown mutable values a step from `previous` cannot change (see the
    module docstring); empty when unsure."""
    top = previous.top
    if action not in STEPS or top is None or previous.finished or any(f.file is not None for f in previous.frames):
        return {}
    line = _line_names(program).get((top.name, top.line))
    if line is None or _may_leave(program, top.name, top.line):
        return {}
    read, mentioned = line
    shown: dict[str, list[str]] = {}
    for frame in previous.frames:
        for name, value in frame.locals.items():
            shown.setdefault(name, []).append(value)
    held: list[str] = []  # the reprs of the read names' values that can hold other values
    values = _bound_as_values(program)
    for name in read:
        if name not in shown:
            if values is None or name in values:
                return {}
            continue
        for text in shown[name]:
            literal, value = _literal(text)
            if not literal:
                return {}
            if not isinstance(value, _ATOMS):
                held.append(text)
    out: dict[int, frozenset[str]] = {}
    for depth, frame in enumerate(reversed(previous.frames)):
        names = frozenset(n for n, v in frame.locals.items() if n not in mentioned and _apart(v, held))
        if names:
            out[depth] = names
    return out


def _may_leave(program: str, name: str, line: int) -> bool:
    """Whether a step from `line` of function `name` may return (or yield) into its caller, whose calling line then
    runs on: the rule reads only the stepping line. (An exception stops at once, or in a handler before it runs.)"""
    from model.static.flow import EXIT, FlowUnavailable, program_flow

    try:
        scopes = program_flow(program).scope_at(name, line)
    except FlowUnavailable:
        return True
    if len(scopes) != 1:
        return True
    scope = scopes[0]
    return scope.kind != "module" and (scope.generator or EXIT in scope.succ.get(line, {EXIT}))


def _apart(text: str, held: Iterable[str]) -> bool:
    """Whether the mutable literal `text` is neither inside nor around any of the `held` reprs."""
    literal, value = _literal(text)
    if not literal or isinstance(value, _ATOMS):
        return False
    return all(text not in other and other not in text for other in held)


@lru_cache(maxsize=4096)
def _literal(text: str) -> tuple[bool, object]:
    """(True, the value) for a repr that is a literal with nothing cut short, else (False, None). Cached: a stop's values
    come back at every step (the value is only read)."""
    if len(text) > 10_000 or "..." in text:
        return False, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


@lru_cache(maxsize=32)
def _line_names(program: str) -> dict[tuple[str, int], tuple[frozenset[str], frozenset[str]]]:
    """(code object name, line) -> (the names the line's statements read, every name they mention), for the lines that
    start no code of the program; lines that may are left out."""
    from model.static.flow import FlowUnavailable, _statements, program_flow
    from model.static.frame_names import _header_lines

    try:
        flow = program_flow(program)
        tree = ast.parse(program)
    except (FlowUnavailable, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    if flow.anywhere:  # dunders or properties: any line may run the program's code
        return {}
    out: dict[tuple[str, int], list[tuple[str, bool]]] = {}
    unsure: set[tuple[str, int]] = set()
    for scope in flow.scopes:
        if scope.kind not in ("module", "function"):
            continue
        body = tree.body if scope.kind == "module" else scope.node.body  # type: ignore[attr-defined]
        for stmt in _statements(body):
            for line in _header_lines(stmt, scope.lines):
                key = (scope.name, line)
                out.setdefault(key, []).extend(_names(stmt))  # two statements (or code objects of one name): both
                if not _runs_no_program_code(flow, scope, line):
                    unsure.add(key)
    return {key: (frozenset(n for n, read in names if read), frozenset(n for n, _ in names))
            for key, names in out.items() if key not in unsure}


def _runs_no_program_code(flow, scope, line: int) -> bool:  # noqa: ANN001 - model.static.flow's ProgramFlow, ScopeFlow
    """Whether the line starts no code of the program: calls none of its functions or classes, gives library code no
    function to call back, resumes no generator; a comprehension on the line counts by its own lines."""
    calls = scope.calls.get(line)
    if calls is None:
        return True
    if any(n in flow.functions or n in flow.classes for n in calls.names) or any(a in flow.functions for a in calls.attrs):
        return False
    if (calls.calls and flow.escaping) or ((calls.calls or calls.iterates) and flow.resumable):
        return False
    for node in calls.scopes:
        if not isinstance(node, _COMPREHENSIONS):
            return False
        inner = [s for s in flow.scopes if s.node is node]
        if not inner or not all(_runs_no_program_code(flow, s, n) for s in inner for n in s.lines):
            return False
    return True


def _names(stmt: ast.stmt) -> Iterator[tuple[str, bool]]:
    """(name, whether its value is read) for every name the statement's line evaluates, binds or deletes (a compound
    statement: its header); an augmented assignment reads its target."""
    nodes = header_nodes(stmt)
    augmented = {id(n.target) for n in nodes if isinstance(n, ast.AugAssign)}
    for node in nodes:
        if isinstance(node, ast.Name):
            yield node.id, isinstance(node.ctx, ast.Load) or id(node) in augmented
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            yield from ((n, True) for n in node.names)


@lru_cache(maxsize=32)
def _bound_as_values(program: str) -> frozenset[str] | None:
    """The names the program binds other than as a routine, class or module (an undecorated ``def`` or ``class``,
    ``import m``, ``P = namedtuple(...)``): a name outside this set that a frame does not show is one of those, or a
    builtin. None: unknown."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: set[str] = set()
    classes = {id(t) for n in ast.walk(tree) if isinstance(n, ast.Assign) and _makes_class(n.value) for t in n.targets}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
            out.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in classes:
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and getattr(node, "name", None):
            out.add(node.name)  # type: ignore[arg-type]
    return frozenset(out)




def _makes_class(node: ast.expr) -> bool:
    """``namedtuple(...)`` or ``collections.namedtuple(...)``: a class, whose instances the library's code builds from
    the arguments alone."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "namedtuple") or (
        isinstance(func, ast.Attribute) and func.attr == "namedtuple" and isinstance(func.value, ast.Name) and func.value.id == "collections")
