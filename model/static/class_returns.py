"""A Step Over from a class statement shows its class body's return value.

A class statement runs its body as a code object of the class's name, which returns before the name is bound; debugpy
(`showReturnValue`) shows the last frame that returned during a step, so the next step stop in the same frame shows
``(return) C`` (recorded, session 38: ``class Counter:`` of examples/demo.py, then ``(return) Counter = None``). The
value is None, or the ``__class__`` cell (``<cell at 0x?: type object at 0x?>``) where a method uses ``super`` or
``__class__``; a body that raises shows None too.

It holds where nothing of the program can return after the body and before the class is bound, and where the class
line's event comes once: the class undecorated (a decorator's line comes back after the body, and a decorator of the
program returns after it), without keywords (no metaclass), its bases classes of the program of that kind (or none, or
``object``), and no class of the program defining ``__init_subclass__`` or ``__set_name__`` (they run after the body).
Only for a Step Over from the class line as a line event in a frame of the main program (a stop there may show
what the step before returned, never the class's own body): `showing_class_return` sets
`FlowSet.known_return`, which the grammar writes as the only return value of those stops.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from functools import lru_cache

from model.static.first_call import LINE_EVENTS, statements_on
from model.static.flow import FlowSet, KnownReturn
from protocol.debugger import ActionKind, State

NONE = "None"
CELL = "<cell at 0x?: type object at 0x?>"
_AFTER_BODY = frozenset({"__init_subclass__", "__set_name__"})  # hooks of the program that run after a class body


def showing_class_return(flow: FlowSet, program: str, previous: State, action: ActionKind) -> FlowSet:
    """`flow` with the class body's return value known for a Step Over from a class statement (see the module)."""
    top = previous.top
    if action is not ActionKind.STEP_OVER or flow.unconstrained or top is None or top.file is not None:
        return flow
    if previous.finished or previous.reason not in LINE_EVENTS:
        return flow
    found = class_statement_return(program, top.name, top.line)
    if found is None:
        return flow
    name, values = found
    if previous.return_value is not None and previous.return_value.name == name:
        return flow  # back on the class line after its body returned (a Step Into went through it): no line event
    return replace(flow, known_return=KnownReturn(len(previous.frames) - 1, name, values))


@lru_cache(maxsize=256)
def class_statement_return(program: str, frame: str, line: int) -> tuple[str, frozenset[str]] | None:
    """(class name, the reprs its body may return) for the class statement whose ``class`` line is `line` in code object
    `frame`, where the module's conditions hold; None elsewhere."""
    lines = program.splitlines()
    if not 0 < line <= len(lines) or not lines[line - 1].lstrip().startswith("class"):
        return None  # most lines: no parse
    starting = statements_on(program, frame, line)
    if starting is None:
        return None
    tree = starting[1]
    found = [s for s in starting[2] if isinstance(s, ast.ClassDef)]
    if len(found) != 1 or not _settled(found[0], tree):
        return None
    node = found[0]
    return node.name, frozenset({NONE, CELL} if _uses_class_cell(node) else {NONE})


def _settled(node: ast.ClassDef, tree: ast.Module) -> bool:
    """Whether nothing of the program runs between `node`'s body returning and its name being bound."""
    if node.decorator_list or node.keywords or any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in _AFTER_BODY
                                                   for n in ast.walk(tree)):  # fmt: skip
        return False
    classes = _module_classes(tree)
    seen: set[str] = set()
    bases = list(node.bases)
    while bases:
        base = bases.pop()
        if isinstance(base, ast.Name) and base.id == "object":
            continue
        if not isinstance(base, ast.Name) or base.id not in classes or base.id in seen:
            return False
        seen.add(base.id)
        parent = classes[base.id]
        if parent.decorator_list or parent.keywords:
            return False
        bases.extend(parent.bases)
    return True


def _module_classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    """Module-level classes whose name only their class statement binds."""
    from model.static.reach import _rebound_names

    counts: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            counts[n.name] = counts.get(n.name, 0) + 1
    rebound = _rebound_names(tree)
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and counts[n.name] == 1 and n.name not in rebound}


def _uses_class_cell(node: ast.ClassDef) -> bool:
    """Whether a function in the class may make the compiler create its ``__class__`` cell (it names ``super`` or
    ``__class__``)."""
    return any(isinstance(n, ast.Name) and n.id in ("super", "__class__") for n in ast.walk(node))
