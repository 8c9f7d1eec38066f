"""Which values a function's parameters can hold at its first stop, from how the body uses them (nothing is run).

When the function returned normally, every expression it *certainly* evaluated did not fail. So if
the body certainly evaluates ``text.upper()`` on a parameter it never rebound before, the argument
has an attribute ``upper``: among builtin values a str, bytes or bytearray, never a list or an int.
`param_starts(function)` gives, per such parameter, the repr starts (`model.static.value_kinds`) of the
builtin values that have every attribute used that way; ``len(x)``, ``for _ in x`` and ``x[...]``
count as uses of ``__len__``, ``__iter__`` and ``__getitem__``.

Certainly evaluated: the function's top-level statements in order up to and including the first that
contains a ``return`` or ``raise`` (later ones may not run), skipping ``try`` statements (a failure
there may be caught) and the bodies of compound statements (only their headers: an ``if`` test, a
``for`` iterable, a ``while`` test, ``with`` items); inside an expression, everything but the later
operands of ``and`` / ``or``, the branches of ``a if c else b`` and the bodies of comprehensions and
lambdas. A parameter is followed until a statement rebinds it (the right-hand side of that statement
still counts).

Only for *closed* programs (`closed_program`: no imports, no classes), where every value is a builtin
one. Used for ``inv_step_call``'s answer (`model.static.entry_locals`), whose state is a first stop of a call
that returned.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from model.static.value_kinds import starts_with_attribute

_PROTOCOL_CALLS = {"len": "__len__"}


def closed_program(tree: ast.AST) -> bool:
    """No imports and no classes: every value the program makes is a builtin one."""
    return not any(isinstance(n, (ast.Import, ast.ImportFrom, ast.ClassDef)) for n in ast.walk(tree))


def bound_names(tree: ast.AST) -> frozenset[str]:
    """Every name the program binds anywhere (to tell a rebound builtin)."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    names |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    names |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return frozenset(names)


def param_starts(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                 shadowed: frozenset[str] = frozenset()) -> dict[str, tuple[str, ...]]:  # fmt: skip
    """Parameter -> the repr starts its argument can have (only parameters with a certain attribute use);
    `shadowed`: names the program rebinds (a rebound ``len`` says nothing)."""
    if isinstance(node, ast.Lambda):
        return {}
    args = node.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}  # *args / **kwargs: a tuple / dict
    attrs: dict[str, set[str]] = {}
    live = set(params)
    for stmt in node.body:
        if not live:
            break
        if isinstance(stmt, (ast.Try, ast.TryStar)):
            ends = _ends(stmt)
        else:
            for name, attr in _uses(stmt, shadowed):
                if name in live:
                    attrs.setdefault(name, set()).add(attr)
            ends = _ends(stmt)
        live -= _rebound(stmt)
        if ends:
            break
    out: dict[str, tuple[str, ...]] = {}
    for name, used in attrs.items():
        starts = set.intersection(*(set(starts_with_attribute(attr)) for attr in used))
        if starts:
            out[name] = tuple(sorted(starts))
    return out


def _ends(stmt: ast.stmt) -> bool:
    return any(isinstance(n, (ast.Return, ast.Raise)) for n in _walk_own(stmt))


def _rebound(stmt: ast.stmt) -> set[str]:
    names = set()
    for n in _walk_own(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
    return names


def _walk_own(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and its descendants, not entering nested functions, classes or lambdas."""
    todo = [node]
    while todo:
        sub = todo.pop()
        yield sub
        if sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(sub))


def _uses(stmt: ast.stmt, shadowed: frozenset[str]) -> Iterator[tuple[str, str]]:
    """(name, attribute) for each attribute use of a plain name that `stmt` certainly evaluates."""
    for expr in _certain_exprs(stmt):
        yield from _expr_uses(expr, shadowed)


def _certain_exprs(stmt: ast.stmt) -> Iterator[ast.expr]:
    if isinstance(stmt, (ast.Expr, ast.Return)):
        if stmt.value is not None:
            yield stmt.value
    elif isinstance(stmt, ast.Assign):
        yield stmt.value
        yield from (t for t in stmt.targets if not isinstance(t, ast.Name))  # x[i] = v evaluates x
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        if stmt.value is not None:
            yield stmt.value
        if not isinstance(stmt.target, ast.Name):
            yield stmt.target
    elif isinstance(stmt, (ast.If, ast.While)):
        yield stmt.test
    elif isinstance(stmt, ast.For):
        yield stmt.iter
        if isinstance(stmt.iter, ast.Name):
            yield ast.Attribute(value=stmt.iter, attr="__iter__", ctx=ast.Load())
    elif isinstance(stmt, ast.With):
        yield from (item.context_expr for item in stmt.items)
    elif isinstance(stmt, ast.Assert):
        yield stmt.test
    elif isinstance(stmt, ast.Raise) and stmt.exc is not None:
        yield stmt.exc


def _expr_uses(node: ast.expr, shadowed: frozenset[str]) -> Iterator[tuple[str, str]]:
    todo: list[ast.AST] = [node]
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and isinstance(sub.ctx, ast.Load):
            yield sub.value.id, sub.attr
        elif isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name):
            yield sub.value.id, "__getitem__" if isinstance(sub.ctx, ast.Load) else "__setitem__"
        elif (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in _PROTOCOL_CALLS
              and sub.func.id not in shadowed
              and len(sub.args) == 1 and isinstance(sub.args[0], ast.Name) and not sub.keywords):  # fmt: skip
            yield sub.args[0].id, _PROTOCOL_CALLS[sub.func.id]
        if isinstance(sub, ast.BoolOp):
            todo.append(sub.values[0])
        elif isinstance(sub, ast.IfExp):
            todo.append(sub.test)
        elif isinstance(sub, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            todo.append(sub.generators[0].iter)
        elif isinstance(sub, ast.Lambda):
            continue
        else:
            todo.extend(ast.iter_child_nodes(sub))
