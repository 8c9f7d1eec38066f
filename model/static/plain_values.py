"""Whether a program's values of builtin shape are the builtins: iterating, indexing or showing them runs none of its code.

A repr that reads as a list, tuple, string or dict literal is one, and iterating such a value runs no code of the
program, unless the program defines ``__repr__``, ``__iter__`` or ``__getitem__`` or a class with a base outside its
own classes (a list subclass). `plain_containers` says so from the source alone; `model.static.loop_entry`,
`model.static.first_call` and `model.static.comprehension_entry` ask it. It imports nothing of the project.
"""
from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=32)
def plain_containers(program: str) -> bool:
    """Whether a value whose repr reads as a list, tuple, string or dict literal is one: the program defines no
    ``__repr__``, ``__iter__`` or ``__getitem__`` and no class with a base outside its own classes (a list subclass)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("__repr__", "__iter__", "__getitem__"):
            return False
        if isinstance(node, ast.ClassDef) and (node.keywords or any(not (isinstance(b, ast.Name) and b.id in classes) for b in node.bases)):
            return False
    return True
