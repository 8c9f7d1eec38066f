"""What a stop on a statement's line evaluates (static): a simple statement's nodes, a compound statement's header's,
a ``def``'s decorators, defaults and annotations. Shared by `model.static.line_effects` and `model.static.untouched`."""
from __future__ import annotations

import ast


def header_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """The nodes a stop on `stmt`'s line evaluates: a simple statement's, a compound statement's header's."""
    if isinstance(stmt, ast.For):
        return [*ast.walk(stmt.target), *ast.walk(stmt.iter)]
    if isinstance(stmt, ast.While):
        return list(ast.walk(stmt.test))
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [n for part in definition_parts(stmt) for n in ast.walk(part)]
    return list(ast.walk(stmt))


def definition_parts(stmt: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """The expressions a ``def`` statement evaluates: its decorators, defaults and annotations."""
    args = stmt.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a is not None)]
    annotations = [a.annotation for a in every if a.annotation is not None] + ([stmt.returns] if stmt.returns is not None else [])
    return [*stmt.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d is not None), *annotations]
