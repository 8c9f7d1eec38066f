"""Where a step can stop in a caller when its frame cannot return from its line: on the calling line, as it raises.

The control-flow grammar (`model.static.flow`) lets a step from any line end anywhere in its caller's rest of the
line and beyond: the line may raise, and a caller may catch it. A caller catches only where its calling line sits
inside a ``try`` (a handler or a ``finally``) or a ``with`` block (a context manager may swallow the exception);
anywhere else the exception goes on, and debugpy's step stops on the calling line as the exception passes through it
(``(return) f`` None; recorded: an uncaught ``raise`` two frames deep), before anything else of that line runs. So a
Step Into or Step Over from a line the top frame cannot return from (`EXIT` is not among its successors) stops in the
top frame (or a call it makes, or on the exception), or on the caller's calling line, when no frame below waits inside
a ``try`` or ``with`` and library code cannot stand between them (no generator, coroutine or library-called frame):
not on the caller's later lines, and not in a new call of the caller's line. The shipped model had answered such
steps with a return to the caller's next line (`bench/programs/cart.py`: from ``if total > 50:`` to the module's
``print``). Nothing is run: the rule reads the source and the previous stop's stack.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from functools import lru_cache

from model.static.flow import EXIT, Continue, FlowSet, FlowUnavailable, Push, ScopeFlow, Shape, program_flow
from protocol.debugger import ActionKind, State, StopReason

STEPS = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER})
_GUARDS = (ast.Try, ast.With, ast.AsyncWith, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def staying_unless_caught(flow: FlowSet, program: str, previous: State, action: ActionKind) -> FlowSet:
    """`flow` (after a step from `previous`) with its step stops in a caller narrowed to the calling line, showing the
    value None (`FlowSet.raised`), and no new frame in place of the top one, when the top frame cannot return from its line and no frame below can catch an
    exception (see the module docstring). Breakpoint and exception stops and the program's end are left as they are;
    unchanged when unsure."""
    top = previous.top
    if flow.unconstrained or action not in STEPS or top is None or len(previous.frames) < 2 or previous.finished:
        return flow
    if previous.reason is StopReason.EXCEPTION or any(f.file is not None for f in previous.frames):
        return flow
    try:
        analysis = program_flow(program)
    except FlowUnavailable:
        return flow
    scopes = [analysis.scope_at(f.name, f.line) for f in previous.frames]
    if any(len(found) != 1 or not _plain(found[0]) for found in scopes):
        return flow
    if EXIT in scopes[0][0].succ.get(top.line, {EXIT}):
        return flow
    guarded = _guarded_lines(program)
    if any(f.line in guarded for f in previous.frames[1:]):
        return flow
    depth = len(previous.frames) - 1  # the top frame's; a caller's stop, or a new frame in place of the top one, left it
    calling = frozenset({previous.frames[1].line})
    step: list[Shape] = []
    for shape in flow.step:
        if isinstance(shape, Push) and shape.depth <= depth:
            continue
        if isinstance(shape, Continue) and shape.depth < depth:
            if shape.depth == depth - 1 and shape.lines & calling:
                step.append(Continue(shape.depth, calling))
            continue
        step.append(shape)
    raised = any(isinstance(shape, Continue) and shape.depth == depth - 1 for shape in step)
    if step == flow.step and not raised:
        return flow
    return replace(flow, step=step, returned=flow.returned & {depth - 1}, raised=flow.raised | ({depth - 1} if raised else set()))


def _plain(scope: ScopeFlow) -> bool:
    """A module, or a function that is no generator or coroutine and that library code does not call."""
    if scope.kind == "module":
        return True
    return scope.kind == "function" and not scope.generator and not scope.indirect and not isinstance(scope.node, ast.AsyncFunctionDef)


@lru_cache(maxsize=32)
def _guarded_lines(program: str) -> frozenset[int]:
    """Every line inside a ``try`` statement (its handlers and ``finally`` too) or a ``with`` block."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, _GUARDS):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return frozenset(lines)
