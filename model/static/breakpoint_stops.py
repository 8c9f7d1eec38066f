"""Which breakpoint stops a step can make: its own line events on breakpoint lines.

debugpy checks breakpoints on line events before it ends a step: a Step Into, Over or Out whose stop is a line event
on a line holding a breakpoint reports ``breakpoint``, not ``step`` (recorded: every such stop of the training and dev
data, 2,435 of 2,435; a stop back on the calling line after a return is no line event and stays a ``step``). The
control-flow grammar (`model.static.flow`) allowed both reasons there, and the models wrote ``step`` (`bench` and the
dev sets: a class body's ``def`` line holding a breakpoint).

`breakpoint_line_events` adds those stops of a step's shapes, on breakpoint lines, to the breakpoint stops. It does
not take them from the step stops: the reason is the state's first token, and the shipped model, asked to choose
``breakpoint`` before the line, wrote ``step`` and then a line without a breakpoint (`bench/bench_session.py`:
Continue arrived 2 times in 11 instead of 7, its fine steps skipping `fib`'s loop). A Step Into stops at the very next
line event, so its breakpoint stops are exactly those (the grammar's "any stack with its top on a breakpoint line" is
for a Step Over or Out, whose calls run whole and may stop on a breakpoint inside them; that shape had let the shipped
model run into a repetition on the DebugClient Continue scenario). A Step Over from a line that runs nothing and
cannot leave its frame (`model.static.line_effects.quiet_lines`: ``results = {}``) has no call to run whole: it stops at
the very next line event too, so its breakpoint stops are those as well (the shipped model wrote ``breakpoint`` on
`examples/loops.py`'s ``results = {}``, then names no frame there has, and the step did not move). Nothing is run: the
rule reads the source, the stack and the breakpoint lines.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from model.static.flow import AnyStack, Continue, FlowSet, FlowUnavailable, Push, Shape, _adjust, program_flow
from protocol.debugger import ActionKind, State

STEPS = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN})


def breakpoint_line_events(flow: FlowSet, program: str, previous: State, action: ActionKind, breakpoints: Iterable[int]) -> FlowSet:
    """`flow` (after a step from `previous`) with its step stops that are line events on a breakpoint line among the
    breakpoint stops, and for a Step Into only those (see the module docstring). The step stops keep them: the state's
    reason comes before its location, and a model that writes ``step`` there first must still find the line (the session
    names such a stop a breakpoint when a coarse action's fine step reaches it). Unchanged for other actions, without
    breakpoints, or when unsure."""
    lines = _breakpoint_lines(program, breakpoints)
    if flow.unconstrained or action not in STEPS or not lines or not previous.frames:
        return flow
    next_event = action is ActionKind.STEP_INTO or (action is ActionKind.STEP_OVER and _runs_nothing(program, previous))
    moved: list[Shape] = []
    for shape in flow.step:
        if isinstance(shape, Continue):
            if shape.lines & lines:
                moved.append(Continue(shape.depth, shape.lines & lines))
        elif isinstance(shape, Push):
            go = frozenset((name, ls & lines) for name, ls in shape.frames if ls & lines)
            if go:
                moved.append(Push(shape.depth, go))
        elif isinstance(shape, AnyStack) and shape.top_lines is not None:
            if shape.top_lines & lines:
                moved.append(replace(shape, top_lines=shape.top_lines & lines))
        elif next_event:
            return flow  # a stop anywhere: unsure which breakpoint stops it may be
    if next_event:  # it stops at the next line event, whichever: its breakpoint stops are those
        return replace(flow, breakpoint=moved)
    if not moved:
        return flow
    return replace(flow, breakpoint=[*flow.breakpoint, *moved])


def _runs_nothing(program: str, previous: State) -> bool:
    """Whether the top frame stops on one of the program's `quiet_lines`: its step runs no call and stays in the frame."""
    from model.static.line_effects import quiet_lines

    top = previous.frames[0]
    return top.file is None and (top.name, top.line) in quiet_lines(program)


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
