"""Which variable names a frame can show on a given line, from the source alone (nothing is run).

debugpy shows a frame's locals: for a function, its parameters, the free variables it reads, and
the local names bound so far; for the module, its globals. A name that the function never binds,
or binds only on lines from which the stop's line cannot be reached, cannot be there. So
`frame_names(program)` gives, per (code object name, line), the names that may be visible:

- a function: parameters and free variables on every line; a local name on the lines reachable
  (one or more steps of the line graph, `model.static.flow.ScopeFlow.succ`) from a line of a statement that
  binds it (an assignment, ``for`` target, ``with ... as``, ``except ... as``, import, def, walrus);
- the module: its global names likewise, plus every name some function declares ``global`` (that
  function may have run);
- a class body: the names it binds, likewise, when the class's namespace is a plain dict (no keywords such as
  ``metaclass=``, every base one of the program's classes or a builtin type: a metaclass's ``__prepare__`` may fill
  the namespace first, as an Enum's does) and the body declares no ``global`` or ``nonlocal`` names;
- nothing in programs that can add names another way (``exec``, ``eval``, ``globals()``,
  ``locals()``, ``vars()``, ``setattr``, ``import *``, ``sys`` or ``__main__`` imports).

Other class bodies, lambdas, comprehensions and names two code objects share are left out (None: any
name). Dunders are never shown (hidden by debugpy). Used by the flow grammar
(`model.static.flow_regex`) for the locals of the stop's top frame. Checked on recorded runs
(tests/test_frame_names.py, `bench/flow_coverage.py`).
"""
from __future__ import annotations

import ast
import builtins
import importlib
import symtable
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from functools import lru_cache

from model.static.certain_bindings import decorators_return_the_class

_DYNAMIC_GLOBALS = frozenset({"exec", "eval", "globals", "vars", "setattr", "delattr", "__import__", "__dict__", "__main__",
                              "modules", "locals", "__builtins__"})  # fmt: skip
# Standard library modules whose names `from m import x` binds are judged by their value (a class, a routine: hidden):
# importing them runs no code of the program and has no side effect. (A program's own module of the same name would
# shadow one of these in a real run; not judged.)
HIDDEN_IMPORTS = frozenset({
    "abc", "array", "bisect", "calendar", "cmath", "collections", "collections.abc", "contextlib", "copy", "csv",
    "dataclasses", "datetime", "decimal", "enum", "fractions", "functools", "heapq", "itertools", "json", "math",
    "numbers", "operator", "pathlib", "pprint", "queue", "random", "re", "statistics", "string", "textwrap", "time",
    "typing", "uuid", "weakref",
})
_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.Match,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # fmt: skip


def frame_names(program: str) -> dict[tuple[str, int], frozenset[str]]:
    """(code object name, line) -> the names its frame may show there (missing: unknown, any name)."""
    return dict(_analyse(program)[0])


def calling_names(program: str) -> dict[tuple[str, int], frozenset[str]]:
    """(code object name, line) -> the names its frame may show while it waits on that line for a call it made (a frame
    below the top): those of `frame_names` plus the ones the line itself binds, which may be bound before the call
    (``(y := 1) + g()``, the target of ``for x in gen():`` from the second item on). Missing: unknown, any name."""
    return dict(_analyse(program)[1])


Analysed = tuple[tuple[tuple[str, int], frozenset[str]], ...]


@lru_cache(maxsize=32)
def _analyse(program: str) -> tuple[Analysed, Analysed]:
    """`frame_names` and `calling_names`, as sorted tuples."""
    from model.static.flow import FlowUnavailable, program_flow

    try:
        flow = program_flow(program)
        tree = ast.parse(program)
        top = symtable.symtable(program, "<program>", "exec")
    except (FlowUnavailable, SyntaxError, ValueError, RecursionError, MemoryError):
        return (), ()
    if _dynamic_globals(tree):  # exec / locals() can also add names to a function's frame dictionary
        return (), ()
    tables = {(t.get_name(), t.get_lineno()): t for t in _tables(top) if isinstance(t, symtable.Function)}
    declared_global = {name for t in tables.values() for name in t.get_identifiers() if t.lookup(name).is_declared_global()}
    out: dict[tuple[str, int], frozenset[str] | None] = {}
    calling: dict[tuple[str, int], frozenset[str] | None] = {}
    for scope in flow.scopes:
        names: dict[int, set[str]] | None = None
        sites: list[tuple[str, ast.AST]] = []
        if scope.kind == "function":
            table = tables.get((scope.name, scope.node.lineno))  # type: ignore[attr-defined]
            if table is not None:
                names, sites = _function_names(scope, table)
        elif scope.kind == "module":
            sites = list(_bindings(tree.body))
            names = _scope_names(scope, set(), _bound_lines(scope, sites), extra=declared_global)
        elif scope.kind == "class" and _plain_namespace(scope.node, flow.classes):  # type: ignore[arg-type]
            sites = list(_bindings(scope.node.body))  # type: ignore[attr-defined]
            names = _scope_names(scope, set(), _bound_lines(scope, sites))
        on_line = _bound_on_lines(scope, sites)
        for line in scope.lines:
            key = (scope.name, line)
            shared = key in out or names is None
            out[key] = None if shared else _shown(names.get(line, set()))  # type: ignore[union-attr]
            calling[key] = None if shared else _shown(names.get(line, set()) | on_line.get(line, set()))  # type: ignore[union-attr]
    return _known(out), _known(calling)


def _shown(names: Iterable[str]) -> frozenset[str]:
    return frozenset(n for n in names if not _dunder(n))


def _known(names: dict[tuple[str, int], frozenset[str] | None]) -> Analysed:
    return tuple(sorted((k, v) for k, v in names.items() if v is not None))


def _bound_on_lines(scope, sites: list[tuple[str, ast.AST]]) -> dict[int, set[str]]:  # noqa: ANN001
    """Line -> the names a statement or header on that line binds."""
    out: dict[int, set[str]] = {}
    for name, stmt in sites:
        for line in _header_lines(stmt, scope.lines):
            out.setdefault(line, set()).add(name)
    return out


def _tables(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    yield table
    for child in table.get_children():
        yield from _tables(child)


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _plain_namespace(node: ast.ClassDef, classes: Mapping[str, tuple[ast.ClassDef, Any]], seen: frozenset[str] = frozenset()) -> bool:
    """Whether the body of class `node` runs in a plain dict that only its own statements fill: no keywords
    (``metaclass=``), every base a builtin type or one of the program's classes (`classes`) that is plain too, and no
    ``global`` or ``nonlocal`` declaration in the body."""
    if node.keywords or node.name in seen:
        return False
    if any(isinstance(sub, (ast.Global, ast.Nonlocal)) for stmt in node.body for sub in _own_nodes(stmt)):
        return False
    for base in node.bases:
        if not isinstance(base, ast.Name):
            return False
        if base.id in classes:
            if not _plain_namespace(classes[base.id][0], classes, seen | {node.name}):
                return False
        elif not isinstance(getattr(builtins, base.id, None), type):
            return False
    return True


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and the nodes under it that run in the same scope (not inside a nested def, lambda or class)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _own_nodes(child)


def _dynamic_globals(tree: ast.Module) -> bool:
    """Whether the module's globals may be added to other than by its own binding statements."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return True
        if isinstance(node, ast.Name) and node.id in _DYNAMIC_GLOBALS:
            return True
        if isinstance(node, ast.Attribute) and node.attr in _DYNAMIC_GLOBALS:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(a.name in ("__main__", "sys") for a in node.names):
            return True
    return False


def _function_names(scope, table: symtable.Function) -> tuple[dict[int, set[str]], list[tuple[str, ast.AST]]]:  # noqa: ANN001
    """Line -> the names a function's frame may show there: parameters and free variables always, locals once bound;
    and the statements binding its locals."""
    params = set(table.get_parameters())
    always = params | set(table.get_frees())
    local = {n for n in table.get_locals() if n not in params}
    node = scope.node
    sites = [(name, stmt) for name, stmt in _bindings(node.body) if name in local]
    return _scope_names(scope, always, _bound_lines(scope, sites)), sites


def _scope_names(scope, always: set[str], bound: dict[str, set[int]], *, extra: Iterable[str] = ()) -> dict[int, set[str]]:  # noqa: ANN001
    """Line -> the names visible there: `always` and `extra` everywhere, the others where they may be bound."""
    base = set(always) | set(extra)
    return {line: base | {n for n, lines in bound.items() if line in lines} for line in scope.lines}


def _bound_lines(scope, sites: list[tuple[str, ast.AST]]) -> dict[str, set[int]]:  # noqa: ANN001
    """Name -> the lines where it may be bound to a value debugpy shows: reachable in one or more steps from a line of a
    binding statement (names only ever bound to a hidden value, `_hidden_only`, are never shown)."""
    from model.static.flow import EXIT

    hidden = _hidden_only(sites)
    starts: dict[str, set[int]] = {}
    at: dict[str, set[int]] = {}
    for name, stmt in sites:
        if name in hidden:
            continue
        lines = _header_lines(stmt, scope.lines)
        if lines:
            starts.setdefault(name, set()).update(lines)
        else:  # no line event of its own (e.g. `except E as e:`): bound from the next executable line on
            following = [n for n in scope.lines if n >= stmt.lineno]  # type: ignore[attr-defined]
            if following:
                at.setdefault(name, set()).add(min(following))
    out: dict[str, set[int]] = {}
    for name in set(starts) | set(at):
        reach = _reachable(scope.succ, starts.get(name, set()), EXIT) | _reachable(scope.succ, at.get(name, set()), EXIT)
        out[name] = reach | at.get(name, set())
    return out


def _hidden_only(sites: list[tuple[str, ast.AST]]) -> set[str]:
    """The names every site binds to a value the recorder hides (`tracegen.child_runner.hidden_local`): an undecorated
    ``def``, a ``class`` undecorated or decorated only by what gives it back (`certain_bindings.PLAIN_DECORATORS`: a
    ``_``-name's class may have a metaclass, then shown), ``import m``, or
    ``from m import x`` of a routine, class or module of one of the standard library's modules in `HIDDEN_IMPORTS`."""
    hidden: dict[str, bool] = {}
    for name, stmt in sites:
        hidden[name] = hidden.get(name, True) and _binds_hidden(name, stmt)
    return {name for name, only in hidden.items() if only}


def _binds_hidden(name: str, stmt: ast.AST) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name == name and not stmt.decorator_list
    if isinstance(stmt, ast.ClassDef):  # ``@dataclass`` gives back the class it decorates
        return stmt.name == name and decorators_return_the_class(stmt) and not name.startswith("_")
    if isinstance(stmt, ast.Import):
        return True
    if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module in HIDDEN_IMPORTS:
        return any((a.asname or a.name) == name and _imported_hidden(stmt.module, a.name, name) for a in stmt.names)
    return False


@lru_cache(maxsize=1024)
def _imported_hidden(module: str, attribute: str, name: str) -> bool:
    """Whether ``from module import attribute as name`` binds a value the recorder hides; the module is one of
    `HIDDEN_IMPORTS` (standard library modules whose import runs no code of the program and has no side effect)."""
    from tracegen.child_runner import hidden_local

    try:
        value = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError):
        return False
    return hidden_local(name, value)


def _reachable(succ: dict[int, set[int]], sources: set[int], exit_line: int) -> set[int]:
    seen: set[int] = set()
    todo = deque(n for s in sources for n in succ.get(s, ()) if n != exit_line)
    while todo:
        line = todo.popleft()
        if line in seen:
            continue
        seen.add(line)
        todo.extend(n for n in succ.get(line, ()) if n != exit_line and n not in seen)
    return seen


def _header_lines(stmt: ast.AST, executable: Iterable[int]) -> set[int]:
    """The executable lines of a simple statement, or of a compound statement's header."""
    first = stmt.lineno  # type: ignore[attr-defined]
    if isinstance(stmt, ast.ExceptHandler):
        last = stmt.body[0].lineno - 1 if stmt.body else stmt.end_lineno
    elif isinstance(stmt, _COMPOUND):
        inner = [s for s in getattr(stmt, "body", []) if hasattr(s, "lineno")]
        last = inner[0].lineno - 1 if inner and inner[0].lineno > first else first
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([first, *(d.lineno for d in stmt.decorator_list)])
            last = stmt.end_lineno or last  # the name is bound after the whole definition
    else:
        last = stmt.end_lineno or first  # type: ignore[attr-defined]
    return {n for n in executable if first <= n <= last}


def _bindings(body: list[ast.stmt]) -> Iterator[tuple[str, ast.AST]]:
    """(name, the statement or handler binding it) for the names bound in `body`'s scope."""
    for stmt in body:
        yield from _stmt_bindings(stmt)


def _stmt_bindings(stmt: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name, stmt
        for expr in [*stmt.decorator_list, *_defaults(stmt)]:
            yield from ((n, stmt) for n in _walrus_names(expr))
        return
    header: list[ast.AST] = []
    children: list[ast.AST] = []
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        header, children = [stmt.target, stmt.iter], [*stmt.body, *stmt.orelse]
    elif isinstance(stmt, (ast.While, ast.If)):
        header, children = [stmt.test], [*stmt.body, *stmt.orelse]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        header, children = list(stmt.items), list(stmt.body)
    elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        children = [*stmt.body, *stmt.handlers, *stmt.orelse, *stmt.finalbody]  # type: ignore[attr-defined]
    elif isinstance(stmt, ast.ExceptHandler):
        if stmt.name:
            yield stmt.name, stmt
        if stmt.type is not None:
            header = [stmt.type]
        children = list(stmt.body)
    elif isinstance(stmt, ast.Match):
        header = [stmt.subject]
        for case in stmt.cases:
            yield from ((n, stmt) for n in _pattern_names(case.pattern))
            if case.guard is not None:
                yield from ((n, stmt) for n in _walrus_names(case.guard))
            children.extend(case.body)
    else:
        header = [stmt]
    for part in header:
        for name in _stored_names(part):
            yield name, stmt
    for child in children:
        yield from _stmt_bindings(child)


def _defaults(node: ast.AST) -> list[ast.expr]:
    args = getattr(node, "args", None)
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)] if args is not None else []


def _stored_names(node: ast.AST) -> Iterator[str]:
    """Names a simple statement or header expression binds in the current scope (walrus in comprehensions included)."""
    todo = [node]
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.AnnAssign) and sub.value is None:
            continue  # ``x: int`` alone binds nothing
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            yield sub.id
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            yield from ((a.asname or a.name).split(".")[0] for a in sub.names)
        elif isinstance(sub, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            yield from _walrus_names(sub)  # a comprehension's walrus binds in the enclosing scope
            continue
        elif isinstance(sub, ast.Lambda):
            continue
        todo.extend(ast.iter_child_nodes(sub))


def _walrus_names(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
            yield sub.target.id


def _pattern_names(pattern: ast.AST) -> Iterator[str]:
    for sub in ast.walk(pattern):
        name = getattr(sub, "name", None) if isinstance(sub, (ast.MatchAs, ast.MatchStar)) else None
        if isinstance(sub, ast.MatchMapping) and sub.rest:
            yield sub.rest
        if name:
            yield name
