"""What a stop on a statement's line evaluates (static): a simple statement's nodes, a compound statement's header's,
a ``def``'s decorators, defaults and annotations. Shared by `model.static.line_effects` and `model.static.untouched`.
`statements_at` is cached per program text: the grammar asks it at every step (a long module's parse and walk cost
tens of milliseconds). Its statements are shared: callers must not change them."""
from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=32)
def statements_at(program: str) -> dict[int, tuple[ast.stmt, ...]]:
    """Line -> the statements whose lines hold it, outermost first (raises as `ast.parse` does)."""
    found: dict[int, list[ast.stmt]] = {}
    for node in ast.walk(ast.parse(program)):
        if isinstance(node, ast.stmt):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                found.setdefault(line, []).append(node)
    return {line: tuple(sorted(stmts, key=lambda n: (n.lineno, -(n.end_lineno or n.lineno)))) for line, stmts in found.items()}


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
