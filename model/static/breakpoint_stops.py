"""Which reason a step's stop has on a breakpoint line: a line event there is a breakpoint stop.

debugpy checks breakpoints on line events before it ends a step: a Step Into, Over or Out whose stop is a line event
on a line holding a breakpoint reports ``breakpoint``, not ``step`` (recorded: every such stop of the training and dev
data, 2,435 of 2,435; a stop back on the calling line after a return is no line event and stays a ``step``). The
control-flow grammar (`model.static.flow`) allowed both reasons there, and the models wrote ``step`` (`bench` and the
dev sets: a class body's ``def`` line holding a breakpoint).

`breakpoint_line_events` moves those stops of a step's shapes to the breakpoint stops: a line of the top frame it goes
on to, a caller's line other than the one waiting on the call, and a new frame's first line; the top frame's own line
and a caller's calling line may be reached either way (a comprehension's next item is a line event on its line, a
return to the calling line is none), so they stay among the step stops and join the breakpoint stops. A Step Into stops at the very next line event, so its
breakpoint stops are exactly those (the grammar's "any stack with its top on a breakpoint line" is for a Step Over or
Out, whose calls run whole and may stop on a breakpoint inside them). Nothing is run: the rule reads the source, the
stack and the breakpoint lines.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from model.static.flow import AnyStack, Continue, FlowSet, FlowUnavailable, Push, Shape, _adjust, program_flow
from protocol.debugger import ActionKind, State

STEPS = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN})


def breakpoint_line_events(flow: FlowSet, program: str, previous: State, action: ActionKind, breakpoints: Iterable[int]) -> FlowSet:
    """`flow` (after a step from `previous`) with its step stops that are line events on a breakpoint line moved to the
    breakpoint stops (see the module docstring). Unchanged for other actions, without breakpoints, or when unsure."""
    lines = _breakpoint_lines(program, breakpoints)
    if flow.unconstrained or action not in STEPS or not lines or not previous.frames:
        return flow
    top = len(previous.frames) - 1
    step: list[Shape] = []
    moved: list[Shape] = []
    for shape in flow.step:
        if isinstance(shape, Continue):
            waiting = previous.frames[top - shape.depth].line if shape.depth <= top else None  # its own line, or the calling line
            events = (shape.lines & lines) - {waiting}
            kept, went = shape.lines - events, shape.lines & lines  # its waiting line may be either: a return, a line event
            if kept:
                step.append(Continue(shape.depth, kept))
            if went:
                moved.append(Continue(shape.depth, went))
        elif isinstance(shape, Push):
            stay = frozenset((name, ls - lines) for name, ls in shape.frames if ls - lines)
            go = frozenset((name, ls & lines) for name, ls in shape.frames if ls & lines)
            if stay:
                step.append(Push(shape.depth, stay))
            if go:
                moved.append(Push(shape.depth, go))
        elif isinstance(shape, AnyStack) and shape.top_lines is not None and action is ActionKind.STEP_INTO:  # split alike
            if shape.top_lines - lines:
                step.append(replace(shape, top_lines=shape.top_lines - lines))
            if shape.top_lines & lines:
                moved.append(replace(shape, top_lines=shape.top_lines & lines))
        else:
            step.append(shape)
            if action is ActionKind.STEP_INTO:
                return flow  # a stop anywhere: unsure which breakpoint stops it may be
    if action is ActionKind.STEP_INTO:  # it stops at the next line event, whichever: its breakpoint stops are those
        return replace(flow, step=step, breakpoint=moved)
    if not moved:
        return flow
    return replace(flow, step=step, breakpoint=[*flow.breakpoint, *moved])


def _breakpoint_lines(program: str, breakpoints: Iterable[int]) -> frozenset[int]:
    """The lines debugpy places `breakpoints` on (`model.static.flow._adjust`); empty when the program cannot be followed."""
    points = list(breakpoints)
    if not points:
        return frozenset()
    try:
        analysis = program_flow(program)
    except FlowUnavailable:
        return frozenset()
    return frozenset(_adjust(analysis, b) for b in points)
