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
- a call of one of the program's functions whose every return is typed (`model.static.return_kinds`: builtin
  kinds only), or of one of its classes (an instance; no ``__new__``, metaclass or other decorator than
  ``dataclass`` / ``total_ordering``), when the program binds that name once;
- ``not``, ``in`` / ``is`` tests (always a bool); arithmetic and comparisons where no class of the program
  defines an operator method (builtin operators never return a function, class or module);
- ``a or b``, ``a if c else b`` of such values.

The same for a ``for`` loop over ``range(...)`` (its variable), ``enumerate(...)`` (its counter), a display of
such values or a string literal, on the step from the header into the body. Left out: a statement inside a ``try`` body or a ``with`` block (a caught
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
PLAIN_DECORATORS = frozenset({"dataclass", "total_ordering"})

Bindings = dict[tuple[str, int], dict[int, frozenset[str]]]


@dataclass(frozen=True)
class _Facts:
    """What the whole program says about values: the names it binds anywhere, whether it overloads operators, and
    its own functions and classes whose call certainly gives a shown value."""

    bound: frozenset[str]
    operators: bool
    plain_calls: frozenset[str] = frozenset()


def certain_bindings(program: str) -> Bindings:
    """(code object name, stop line) -> {the frame's next step line: the names that step certainly binds and shows}."""
    return _certain_bindings(program)[0]


def literal_bindings(program: str) -> dict[tuple[str, int], dict[str, str]]:
    """(code object name, stop line) -> {name: the repr debugpy shows} for the names of `certain_bindings` bound there
    to a literal (``ast.literal_eval``: parsed, never run; `model.static.call_args.literal_repr`'s limits): where the
    step binds them, their value is that literal's, since nothing else runs between the line and the next stop."""
    return _certain_bindings(program)[1]


@lru_cache(maxsize=32)
def _certain_bindings(program: str) -> tuple[Bindings, dict[tuple[str, int], dict[str, str]]]:
    from model.static.flow import EXIT, FlowUnavailable, program_flow

    try:
        flow = program_flow(program)
        tree = ast.parse(program)
    except (FlowUnavailable, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, {}
    facts = _facts(program, tree)
    owners = Counter((scope.name, line) for scope in flow.scopes for line in scope.lines)  # a frame is named by its code object
    out: Bindings = {}
    literals: dict[tuple[str, int], dict[str, str]] = {}
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
                if nexts and binding.literals:
                    literals.setdefault((scope.name, line), {}).update({n: v for n, v in binding.literals.items() if n in names})
    return {key: nexts for key, nexts in out.items() if nexts}, {key: values for key, values in literals.items() if values}


@dataclass(frozen=True)
class _Binding:
    """A statement that certainly binds `names` to shown values: a stop on one of `lines`, then a step to a line
    `binds_before` accepts (outside the statement; for a loop header, inside the body) sees them bound."""

    names: tuple[str, ...]
    lines: frozenset[int]
    body: frozenset[int] | None = None  # a loop's body lines
    literals: dict[str, str] | None = None  # name -> the repr of the literal it is bound to (`literal_bindings`)

    def binds_before(self, line: int) -> bool:
        return line in self.body if self.body is not None else line not in self.lines


def _bindings(body: list[ast.stmt], facts: _Facts, guarded: bool = False) -> Iterator[_Binding]:
    """The qualifying statements of `body` (nested blocks included, nested functions and classes not);
    `guarded`: inside a try body or a with block, where nothing qualifies."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if not guarded and _is_certain_assignment(stmt, facts):
            yield _Binding(tuple(_target_names(stmt)), _span(stmt.lineno, stmt.end_lineno), literals=_literals(stmt))
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


def _literals(stmt: ast.stmt) -> dict[str, str] | None:
    """Name -> repr for an assignment of literals: ``name = <literal>`` (one target) or ``a, b = <literal>, <literal>``."""
    from model.static.call_args import literal_repr

    if isinstance(stmt, ast.AnnAssign) or len(stmt.targets) != 1:  # type: ignore[attr-defined]
        return None  # `x: float = 1` is the int 1, but one kind of statement is enough here
    target, value = stmt.targets[0], stmt.value  # type: ignore[attr-defined]
    pairs = [(target, value)] if isinstance(target, ast.Name) else list(zip(target.elts, value.elts))  # type: ignore[attr-defined]
    out = {}
    for name, node in pairs:
        text = literal_repr(node) if isinstance(name, ast.Name) else None
        if text is not None:
            out[name.id] = text  # type: ignore[attr-defined]
    return out or None


def _loop_counter(stmt: ast.For, facts: _Facts) -> str | None:
    """The name a ``for`` certainly binds to a shown value: over ``range(...)``, the counter of ``enumerate(...)``,
    the items of a display of shown values or the characters of a string literal; or None."""
    loop, target = stmt.iter, stmt.target
    if isinstance(loop, ast.Call) and isinstance(loop.func, ast.Name) and loop.func.id not in facts.bound:
        if loop.func.id == "range" and isinstance(target, ast.Name):
            return target.id
        if loop.func.id == "enumerate" and isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
            return target.elts[0].id
        return None
    items = isinstance(loop, (ast.List, ast.Tuple, ast.Set)) and all(not isinstance(e, ast.Starred) and _shown(e, facts) for e in loop.elts)
    text = isinstance(loop, ast.JoinedStr) or (isinstance(loop, ast.Constant) and isinstance(loop.value, str))
    return target.id if (items or text) and isinstance(target, ast.Name) else None


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
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
        name = expr.func.id
        return (name in PLAIN_RESULT_BUILTINS and name not in facts.bound) or name in facts.plain_calls
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


def _facts(program: str, tree: ast.Module) -> _Facts:
    from model.static.return_kinds import return_kinds

    bound: Counter[str] = Counter()
    operators = False
    definitions: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound[node.id] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] += 1
            definitions[node.name] = node
            operators = operators or node.name in OPERATOR_METHODS
        elif isinstance(node, ast.arg):
            bound[node.arg] += 1
        elif isinstance(node, ast.alias):
            bound[(node.asname or node.name).split(".")[0]] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound[node.name] += 1
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound[node.name] += 1
    typed = return_kinds(program)  # builtin kinds only: never a function, class or module
    plain = {name for name, node in definitions.items() if bound[name] == 1 and (
        (isinstance(node, ast.FunctionDef) and name in typed) or (isinstance(node, ast.ClassDef) and _plain_class(node, "__new__" in bound)))}
    return _Facts(frozenset(bound), operators, frozenset(plain))


def _plain_class(node: ast.ClassDef, new_defined: bool) -> bool:
    """Whether calling the class certainly gives an instance (shown as an object): no ``__new__`` in the program,
    not a metaclass, none named, no decorator but ``dataclass`` / ``total_ordering`` (which return the class)."""
    bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
    metaclass = any(b == "type" or b.endswith("Meta") for b in bases)  # calling a metaclass makes a class: hidden
    return not new_defined and not node.keywords and not metaclass and decorators_return_the_class(node)


def decorators_return_the_class(node: ast.ClassDef) -> bool:
    """Whether every decorator of the class gives back the class it decorates (`PLAIN_DECORATORS`, called or not)."""
    decorators = {d.func if isinstance(d, ast.Call) else d for d in node.decorator_list}
    names = {d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", None) for d in decorators}
    return names <= PLAIN_DECORATORS


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
