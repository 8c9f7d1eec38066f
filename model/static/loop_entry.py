"""A `for` loop over a non-empty display of constants: which item its header binds next, so where a step from it lands.

`for t in ["Racecar", "hello"]:` certainly binds `t` and runs its body once the header runs, and the header's
target is not yet bound the first time the frame stops on it (a name the frame does not show). From such a stop a
Step Into or a Step Over lands on the body's first line: the loop cannot end, nothing is called (the items are
constants), the frame cannot return. Later stops on the header show the item the loop is at, where only this loop
binds its targets, no other loop of the scope holds it (so the header is not reached again by a new run) and the items'
reprs differ: the step then lands on the body with the next item, or after the last one leaves the loop (its ``else``,
or the line after it). `entering_loop` narrows a `FlowSet` so; the shipped model had stepped from such a header past
the loop, and later walked a Continue round it until its time ran out (`bench/programs/palindrome.py`). Nothing is run
and no value is computed: the rule reads the source and which names and reprs the previous stop shows.

`item_literals` gives the values the step binds: the reprs of the next item (parsed by `ast.literal_eval`, never run),
which the step into the body certainly shows (`model.static.line_effects.kept_locals`).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache

from model.static.flow import EXIT, Continue, FlowSet, FlowUnavailable, program_flow
from model.static.frame_names import _header_lines
from protocol.debugger import ActionKind, Frame, State, StopReason

NARROWED = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER})


def entering_loop(flow: FlowSet, program: str, previous: State, action: ActionKind) -> FlowSet:
    """`flow` (after `action` from `previous`) with its step stops narrowed where `previous` stops on the header of a
    `for` loop over a non-empty display of constants and `loop_position` knows which item comes next: the body's first
    line while one is left, the loop's way out (its ``else`` or the line after it) once the last has run.
    Breakpoint and exception stops are left as they are; unchanged whenever any of that is not certain."""
    top = previous.top
    if flow.unconstrained or action not in NARROWED or top is None or top.file is not None:
        return flow
    if previous.finished or previous.reason is StopReason.EXCEPTION:
        return flow
    position = loop_position(program, top)
    if position is None:
        return flow
    loop, index = position
    try:
        scopes = program_flow(program).scope_at(top.name, top.line)
    except FlowUnavailable:
        return flow
    if len(scopes) != 1:
        return flow
    succ = scopes[0].succ.get(top.line, set())
    if index < _length(loop.node):
        lines = frozenset(succ & _header_lines(loop.node.body[0], scopes[0].lines))
    else:
        last = loop.node.body[-1]
        body = set(range(loop.node.body[0].lineno, (last.end_lineno or last.lineno) + 1))
        lines = frozenset(succ - body)
        if EXIT in lines:
            return flow  # the frame returns: the stop is the caller's, which this rule does not place
    if not lines:
        return flow
    return replace(flow, step=[Continue(len(previous.frames) - 1, lines)], returned=frozenset())


def loop_position(program: str, top: Frame) -> tuple[_Loop, int] | None:
    """The constant loop whose header `top` stops on and the index of the item its header binds next: 0 when the frame
    does not show the loop's targets yet (its first run), else one past the item whose reprs the targets show, where
    only this loop binds them in its scope, no other loop holds it (so a stop on its header with the targets shown
    goes on with the same run) and the items' reprs tell them apart. None when any of that is not certain."""
    loop = _constant_loops(program).get(top.line)
    if loop is None:
        return None
    shown = loop.names & set(top.locals)
    if not shown:
        return loop, 0
    if shown != loop.names or not loop.alone:
        return None
    items = _item_reprs(loop.node)
    current = {name: top.locals[name] for name in loop.names}
    matches = [i for i, item in enumerate(items or []) if item == current]
    return (loop, matches[0] + 1) if len(matches) == 1 else None


def item_literals(program: str, top: Frame) -> dict[str, str]:
    """Target name -> the repr debugpy shows for it after the step from `top` on a constant loop's header binds its next
    item (`loop_position`; a string runs over its characters; a tuple target takes a tuple item's elements), for the
    names whose value `model.static.call_args.literal_repr` writes in full. Empty anywhere else."""
    position = loop_position(program, top)
    if position is None:
        return {}
    loop, index = position
    if index >= _length(loop.node) or isinstance(loop.node.iter, ast.Set):  # a set runs in its hash order
        return {}
    return _unpacked(loop.node.target, _items(loop.node)[index])


@lru_cache(maxsize=64)
def _item_reprs(node: ast.For) -> list[dict[str, str]] | None:
    """The targets' reprs for each item, when every item gives every target one (None otherwise, or for a set)."""
    if isinstance(node.iter, ast.Set):
        return None
    names = _target_names(node.target) or set()
    out = [_unpacked(node.target, item) for item in _items(node)]
    return out if all(len(item) == len(names) for item in out) else None


def _items(node: ast.For) -> list[ast.expr]:
    """The loop's items as expressions: a str runs over its characters, bytes over ints."""
    if isinstance(node.iter, ast.Constant):
        return [ast.Constant(v) for v in node.iter.value]
    return list(node.iter.elts)  # type: ignore[attr-defined]


def _length(node: ast.For) -> int:
    return len(node.iter.value) if isinstance(node.iter, ast.Constant) else len(node.iter.elts)  # type: ignore[attr-defined]


def _unpacked(target: ast.expr, item: ast.expr) -> dict[str, str]:
    """Name -> repr for `target` bound to the constant `item` (a name, or a tuple / list of names over a display of
    as many items)."""
    from model.static.call_args import literal_repr

    if isinstance(target, ast.Name):
        text = literal_repr(item)
        return {} if text is None else {target.id: text}
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(item, (ast.Tuple, ast.List)) and len(item.elts) == len(target.elts):
        out: dict[str, str] = {}
        for inner, value in zip(target.elts, item.elts):
            out |= _unpacked(inner, value)
        return out
    return {}


@dataclass(frozen=True)
class _Loop:
    """A one-line `for` header over constants: its target `names`, the loop, and whether it is `alone` (no other loop
    of its scope holds it, no other statement of its scope binds its targets)."""

    names: frozenset[str]
    node: ast.For = field(compare=False)
    alone: bool


@lru_cache(maxsize=32)
def _constant_loops(program: str) -> dict[int, _Loop]:
    """Header line -> each one-line `for` header over a non-empty display of constants, whose target names are plain
    names no statement deletes or declares `global` / `nonlocal` anywhere in the program."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    unsafe = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            unsafe.update(node.names)
        elif isinstance(node, ast.Delete):
            unsafe.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    out = {}
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        for node, looped in _scope_loops(scope):
            if not constant_loop(node) or node.iter.lineno != node.lineno or node.iter.end_lineno != node.lineno:
                continue
            names = _target_names(node.target) or set()
            if not names or names & unsafe or any(n.startswith("__") for n in names):
                continue
            alone = not looped and not (_bound_in(scope, node.target) & names)
            out[node.lineno] = _Loop(frozenset(names), node, alone)
    return out


def _scope_loops(scope: ast.AST) -> Iterator[tuple[ast.For, bool]]:
    """Each `for` of `scope`'s own code, with whether another loop of the scope holds it."""
    todo: list[tuple[ast.AST, bool]] = [(child, False) for child in ast.iter_child_nodes(scope)]
    while todo:
        node, looped = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.For):
            yield node, looped
        inner = looped or isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        todo.extend((child, inner) for child in ast.iter_child_nodes(node))


def _bound_in(scope: ast.AST, target: ast.expr) -> set[str]:
    """Names bound in `scope`'s own code (parameters included) by anything but `target`."""
    mine = {id(n) for n in ast.walk(target)}
    out: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        out |= {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)}
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in mine:
            out.add(node.id)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        todo.extend(ast.iter_child_nodes(node))
    return out


def constant_loop(node: ast.For) -> bool:
    """A `for` with a body over a non-empty display of constants, binding plain names (its header runs no code)."""
    return bool(node.body) and _target_names(node.target) is not None and _non_empty_constants(node.iter)


def _target_names(target: ast.expr) -> set[str] | None:
    """The names a loop target binds when it is a name or a (nested) tuple / list of names; None otherwise."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        names: set[str] = set()
        for element in target.elts:
            inner = _target_names(element)
            if inner is None:
                return None
            names |= inner
        return names
    return None


def _non_empty_constants(node: ast.expr) -> bool:
    """A non-empty list, tuple or set display of constants (nested displays too), or a non-empty str / bytes constant."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes)) and len(node.value) > 0
    return isinstance(node, (ast.List, ast.Tuple, ast.Set)) and bool(node.elts) and all(_constant(e) for e in node.elts)


def _constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    return isinstance(node, (ast.List, ast.Tuple, ast.Set)) and all(_constant(e) for e in node.elts)

