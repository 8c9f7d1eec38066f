"""A `for` loop over a non-empty display of constants enters its body the first time its header runs.

`for t in ["Racecar", "hello"]:` certainly binds `t` and runs its body once the header runs, and the header's
target is not yet bound the first time the frame stops on it (a name the frame does not show). From such a stop a
Step Into or a Step Over lands on the body's first line: the loop cannot end, nothing is called (the items are
constants), the frame cannot return. `entering_loop` narrows a `FlowSet` so; the shipped model had stepped from
such a header past the loop (`bench/programs/palindrome.py`). Nothing is run and no value is computed: the rule reads
the source and which names the previous stop shows.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from functools import lru_cache

from model.static.flow import Continue, FlowSet, FlowUnavailable, program_flow
from model.static.frame_names import _header_lines
from protocol.debugger import ActionKind, State, StopReason

NARROWED = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER})


def entering_loop(flow: FlowSet, program: str, previous: State, action: ActionKind) -> FlowSet:
    """`flow` (after `action` from `previous`) with its step stops narrowed to the body's first line, when `previous`
    stops on the header of a `for` loop over a non-empty display of constants whose target it does not show yet.
    Breakpoint and exception stops are left as they are; unchanged whenever any of that is not certain."""
    top = previous.top
    if flow.unconstrained or action not in NARROWED or top is None or top.file is not None:
        return flow
    if previous.finished or previous.reason is StopReason.EXCEPTION:
        return flow
    loop = _constant_loops(program).get(top.line)
    if loop is None:
        return flow
    targets, first = loop
    if targets & set(top.locals):
        return flow
    try:
        scopes = program_flow(program).scope_at(top.name, top.line)
    except FlowUnavailable:
        return flow
    if len(scopes) != 1:
        return flow
    lines = frozenset(scopes[0].succ.get(top.line, set()) & _header_lines(first, scopes[0].lines))
    if not lines:
        return flow
    return replace(flow, step=[Continue(len(previous.frames) - 1, lines)], returned=frozenset())


@lru_cache(maxsize=32)
def _constant_loops(program: str) -> dict[int, tuple[frozenset[str], ast.stmt]]:
    """Header line -> (target names, the body's first statement) of each one-line `for`
    header over a non-empty display of constants, whose target names are plain names no statement deletes or declares
    `global` / `nonlocal` anywhere in the program."""
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
    for node in ast.walk(tree):
        if not isinstance(node, ast.For) or not node.body or node.iter.lineno != node.lineno or node.iter.end_lineno != node.lineno:
            continue
        names = _target_names(node.target)
        if not names or names & unsafe or any(n.startswith("__") for n in names) or not _non_empty_constants(node.iter):
            continue
        out[node.lineno] = (frozenset(names), node.body[0])
    return out


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

