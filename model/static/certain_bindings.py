"""Which new names a single step certainly shows (static, nothing is run).

`model.static.line_effects` says what a step cannot change; this module says what it must add. When a frame stops
on line L and its next *step* stop is another line of the same frame, L's statement ran to its end (an exception
would have left the frame or stopped at the exception; one caught by the same frame is excluded below). If L is
``name = <value>`` the frame then holds ``name``, and debugpy shows it unless the value is a function, class or
module (or the name a dunder). So a name L binds, that the frame did not show before, must be among the next
stop's locals when the value is certainly shown:

- a literal, a container display or comprehension, a generator expression, an f-string;
- a call of a builtin that returns a plain value (``len``, ``int``, ``str``, ``list``, ``sorted``, ``range``...;
  not one that returns an argument or whatever a dunder method returns, like ``max`` or ``abs``), when the
  program never rebinds that builtin's name;
- ``not``, ``in`` / ``is`` tests (always a bool); arithmetic and comparisons where no class of the program
  defines an operator method (builtin operators never return a function, class or module);
- ``a or b``, ``a if c else b`` of such values.

The same for a ``for`` loop over ``range(...)`` (its variable) or ``enumerate(...)`` (its counter), on the
step from the header into the body. Left out: a statement inside a ``try`` body or a ``with`` block (a caught
or suppressed exception goes on without the binding), a line with other statements on it, names a function
declares ``global`` / ``nonlocal``, functions that library code may call again (`model.static.flow`'s
``indirect``: the next stop may be a new call's first line), class bodies.

`certain_bindings(program)` maps (code object name, line L) to {next line: names}; `model.static.line_effects`
narrows it to the names the frame did not show (`KeptLocals.required`) and the flow grammar then makes a delta
(or the full locals) list them. Checked on recorded runs (tests/test_certain_bindings.py).
"""
from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

# builtins whose result is a plain value whatever their arguments are (no dunder decides the result's type)
PLAIN_RESULT_BUILTINS = frozenset({
    "len", "int", "float", "str", "bool", "repr", "format", "list", "dict", "set", "frozenset", "tuple", "sorted",
    "range", "enumerate", "zip", "map", "filter", "any", "all", "isinstance", "chr", "ord", "hex", "bin", "oct",
    "bytes", "bytearray", "complex",
})  # fmt: skip
_OPERATORS = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow", "lshift", "rshift",
              "and", "xor", "or", "neg", "pos", "invert", "abs", "lt", "le", "eq", "ne", "gt", "ge")  # fmt: skip
OPERATOR_METHODS = frozenset({f"__{n}__" for n in _OPERATORS} | {f"__r{n}__" for n in _OPERATORS})
_DISPLAYS = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
             ast.DictComp, ast.GeneratorExp)  # fmt: skip
_ALWAYS_BOOL = (ast.In, ast.NotIn, ast.Is, ast.IsNot)

Bindings = dict[tuple[str, int], dict[int, frozenset[str]]]


@dataclass(frozen=True)
class _Facts:
    """What the whole program says about values: the names it binds anywhere, and whether it overloads operators."""

    bound: frozenset[str]
    operators: bool


def certain_bindings(program: str) -> Bindings:
    """(code object name, stop line) -> {the frame's next step line: the names that step certainly binds and shows}."""
    return _certain_bindings(program)


@lru_cache(maxsize=32)
def _certain_bindings(program: str) -> Bindings:
    from model.static.flow import EXIT, FlowUnavailable, program_flow

    try:
        flow = program_flow(program)
        tree = ast.parse(program)
    except (FlowUnavailable, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    facts = _facts(tree)
    owners = Counter((scope.name, line) for scope in flow.scopes for line in scope.lines)  # a frame is named by its code object
    out: Bindings = {}
    for scope in flow.scopes:
        if scope.kind not in ("module", "function") or scope.indirect:
            continue
        body = tree.body if scope.kind == "module" else scope.node.body  # type: ignore[attr-defined]
        declared = _declared(body) if scope.kind == "function" else frozenset()
        starts = _statement_starts(body)
        for binding in _bindings(body, facts):
            names = frozenset(n for n in binding.names if not _hidden(n) and n not in declared)
            for line in binding.lines & scope.lines:
                if not names or starts.get(line, 0) > 1 or owners[(scope.name, line)] > 1:
                    continue  # other statements share the line, or two code objects of that name hold it
                nexts = {n for n in scope.succ.get(line, set()) if n != EXIT and binding.binds_before(n)}
                out.setdefault((scope.name, line), {}).update({n: names for n in nexts})
    return {key: nexts for key, nexts in out.items() if nexts}


@dataclass(frozen=True)
class _Binding:
    """A statement that certainly binds `names` to shown values: a stop on one of `lines`, then a step to a line
    `binds_before` accepts (outside the statement; for a loop header, inside the body) sees them bound."""

    names: tuple[str, ...]
    lines: frozenset[int]
    body: frozenset[int] | None = None  # a loop's body lines

    def binds_before(self, line: int) -> bool:
        return line in self.body if self.body is not None else line not in self.lines


def _bindings(body: list[ast.stmt], facts: _Facts, guarded: bool = False) -> Iterator[_Binding]:
    """The qualifying statements of `body` (nested blocks included, nested functions and classes not);
    `guarded`: inside a try body or a with block, where nothing qualifies."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if not guarded and _is_certain_assignment(stmt, facts):
            yield _Binding(tuple(_target_names(stmt)), _span(stmt.lineno, stmt.end_lineno))
        if isinstance(stmt, ast.For):
            counter = None if guarded else _loop_counter(stmt, facts)
            if counter is not None:
                last = stmt.body[-1]
                yield _Binding((counter,), _span(stmt.lineno, stmt.body[0].lineno - 1), _span(stmt.body[0].lineno, last.end_lineno or last.lineno))
            yield from _bindings(stmt.body + stmt.orelse, facts, guarded)
        elif isinstance(stmt, (ast.While, ast.If)):
            yield from _bindings(stmt.body + stmt.orelse, facts, guarded)
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.AsyncFor)):
            yield from _bindings(stmt.body, facts, True)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            yield from _bindings(stmt.body, facts, True)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                yield from _bindings(handler.body, facts, guarded)
            yield from _bindings(stmt.orelse + stmt.finalbody, facts, guarded)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                yield from _bindings(case.body, facts, guarded)


def _span(first: int, last: int | None) -> frozenset[int]:
    return frozenset(range(first, max(first, last or first) + 1))


def _is_certain_assignment(stmt: ast.stmt, facts: _Facts) -> bool:
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name) and stmt.value is not None and _shown(stmt.value, facts)
    if not isinstance(stmt, ast.Assign):
        return False
    for target in stmt.targets:
        if isinstance(target, ast.Name):
            if not _shown(stmt.value, facts):
                return False
        elif isinstance(target, (ast.Tuple, ast.List)):  # a, b = 1, [] (a display of as many values, no starred)
            value = stmt.value
            if not (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)):
                return False
            if not all(isinstance(t, ast.Name) and _shown(v, facts) for t, v in zip(target.elts, value.elts)):
                return False
        else:
            return False
    return True


def _loop_counter(stmt: ast.For, facts: _Facts) -> str | None:
    """The name a ``for`` over ``range(...)`` or ``enumerate(...)`` binds to an int, or None."""
    call = stmt.iter
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id not in facts.bound):
        return None
    if call.func.id == "range" and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    if call.func.id == "enumerate" and isinstance(stmt.target, ast.Tuple) and stmt.target.elts and isinstance(stmt.target.elts[0], ast.Name):
        return stmt.target.elts[0].id
    return None


def _target_names(stmt: ast.stmt) -> Iterator[str]:
    targets = [stmt.target] if isinstance(stmt, ast.AnnAssign) else stmt.targets  # type: ignore[attr-defined]
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                yield node.id


def _shown(expr: ast.expr, facts: _Facts) -> bool:
    """Whether `expr`'s value is certainly one debugpy lists (not a function, class or module)."""
    if isinstance(expr, _DISPLAYS):
        return True
    if isinstance(expr, ast.Call):
        return isinstance(expr.func, ast.Name) and expr.func.id in PLAIN_RESULT_BUILTINS and expr.func.id not in facts.bound
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, ast.Not) or not facts.operators
    if isinstance(expr, ast.Compare):
        return all(isinstance(op, _ALWAYS_BOOL) for op in expr.ops) or not facts.operators
    if isinstance(expr, ast.BinOp):
        return not facts.operators
    if isinstance(expr, ast.BoolOp):
        return all(_shown(v, facts) for v in expr.values)
    if isinstance(expr, ast.IfExp):
        return _shown(expr.body, facts) and _shown(expr.orelse, facts)
    return False


def _hidden(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _facts(tree: ast.Module) -> _Facts:
    bound: set[str] = set()
    operators = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            operators = operators or node.name in OPERATOR_METHODS
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
    return _Facts(frozenset(bound), operators)


def _declared(body: list[ast.stmt]) -> frozenset[str]:
    """Names the function declares ``global`` or ``nonlocal`` (its own statements, not nested functions')."""
    out: set[str] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return frozenset(out)


def _statement_starts(body: list[ast.stmt]) -> dict[int, int]:
    """Line -> how many statements of the scope start there."""
    counts: dict[int, int] = {}
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt):
            counts[node.lineno] = counts.get(node.lineno, 0) + 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
        todo.extend(ast.iter_child_nodes(node))
    return counts
