"""A step's line event on a breakpoint line is a breakpoint stop (model.static.breakpoint_stops), and a run stops only
on breakpoint lines it can still reach (model.static.reach.without_unreachable_breakpoints, per line)."""
from __future__ import annotations

import random

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.breakpoint_stops import breakpoint_line_events
from model.static.flow import next_locations, program_flow
from model.static.reach import without_unreachable_breakpoints
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.recorded import recorded_programs
from tracegen.fast import ReplaySession, record_program

PROGRAM = """\
class Student:
    kind = 'pupil'

    def __init__(self, name, score):
        self.name = name
        self.score = score


def main():
    pupils = [Student('hana', 70.0), Student('jo', 62.25)]
    return pupils


main()
"""
BREAKPOINTS = [2, 6]
OVER = ActionKind.STEP_OVER


def _in_class_body() -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="Student", line=1), Frame(name="<module>", line=1)])


def test_a_step_onto_a_breakpoint_line_stops_as_a_breakpoint() -> None:
    previous = _in_class_body()
    flow = next_locations(PROGRAM, previous, Action(kind=OVER), BREAKPOINTS)
    moved = breakpoint_line_events(flow, PROGRAM, previous, OVER, BREAKPOINTS)
    there = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="Student", line=2), Frame(name="<module>", line=1)])
    assert moved.allows(previous, there) and moved.allows(previous, there.model_copy(update={"reason": StopReason.STEP}))
    constraint = state_constraint(PROGRAM, previous, action=Action(kind=OVER), breakpoints=BREAKPOINTS)
    assert constraint.complete(lang.render_state(there, previous).removesuffix(lang.STOP_TOKEN))
    # a Step Into's breakpoint stops are its own line events there: no deeper stack, no other line
    into = breakpoint_line_events(next_locations(PROGRAM, previous, Action(kind=ActionKind.STEP_INTO), BREAKPOINTS), PROGRAM, previous,
                                  ActionKind.STEP_INTO, BREAKPOINTS)  # fmt: skip
    assert into.allows(previous, there)
    elsewhere = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="__init__", line=6), Frame(name="main", line=10), Frame(name="<module>", line=14)])
    assert not into.allows(previous, elsewhere) and flow.allows(previous, elsewhere)
    assert breakpoint_line_events(flow, PROGRAM, previous, ActionKind.CONTINUE, BREAKPOINTS) is flow
    assert breakpoint_line_events(flow, PROGRAM, previous, OVER, []) is flow


def test_a_step_over_a_line_that_runs_nothing_stops_at_its_next_line_event() -> None:
    """`results = {}` runs no call: a Step Over from it stops on the next line as a Step Into would, so no breakpoint
    stop elsewhere (examples/loops.py's shape: the shipped model wrote a breakpoint there and the step did not move)."""
    program = "def f(n):\n    return n + 1\n\n\nresults = {}\nfor start in range(3):\n    results[start] = f(start)\nlast = max(results)\n"
    previous = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=5)])
    flow = next_locations(program, previous, Action(kind=OVER), [2, 8])
    moved = breakpoint_line_events(flow, program, previous, OVER, [2, 8])
    elsewhere = [State(reason=StopReason.BREAKPOINT, frames=[Frame(name="f", line=2), Frame(name="<module>", line=7)]),
                 State(reason=StopReason.BREAKPOINT, frames=[Frame(name="<module>", line=8)])]
    assert any(flow.allows(previous, s) for s in elsewhere) and not any(moved.allows(previous, s) for s in elsewhere)
    assert moved.allows(previous, State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=6)]))
    calling = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=7)])  # runs f: a breakpoint in it stops the Step Over
    inside = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="f", line=2), Frame(name="<module>", line=7)])
    assert breakpoint_line_events(next_locations(program, calling, Action(kind=OVER), [2, 8]), program, calling, OVER, [2, 8]).allows(calling, inside)


def test_a_class_body_line_is_not_stopped_on_again() -> None:
    previous = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="Student", line=2), Frame(name="<module>", line=1)])
    flow = next_locations(PROGRAM, previous, Action(kind=ActionKind.CONTINUE), BREAKPOINTS)
    again = previous.model_copy(deep=True)
    inside = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="__init__", line=6), Frame(name="main", line=10), Frame(name="<module>", line=14)])
    narrowed = without_unreachable_breakpoints(flow, PROGRAM, previous, ActionKind.CONTINUE, BREAKPOINTS)
    assert flow.allows(previous, again) and not narrowed.allows(previous, again)
    assert narrowed.allows(previous, inside)


def test_every_recorded_stop_with_breakpoints_is_allowed() -> None:
    """Random actions and breakpoints over recorded programs (the fast recorder reproduces debugpy's stops)."""
    rng = random.Random(5)
    kinds = [ActionKind.STEP_INTO, OVER, ActionKind.STEP_RETURN, ActionKind.CONTINUE]
    moved = narrowed = 0
    for source, trace in [(PROGRAM, record_program(PROGRAM)), *recorded_programs(30, 14)]:
        lines = sorted(program_flow(source).code_lines)
        for _ in range(3):
            points = sorted(rng.sample(lines, min(len(lines), rng.randint(1, 3))))
            session = ReplaySession(trace, points)
            previous = session.start()
            for _ in range(25):
                if previous.finished:
                    break
                action = Action(kind=rng.choice(kinds))
                state = session.step(action)
                flow = next_locations(source, previous, action, points)
                if flow.allows(previous, state):
                    reach = without_unreachable_breakpoints(flow, source, previous, action.kind, points)
                    cut = breakpoint_line_events(reach, source, previous, action.kind, points)
                    assert cut.allows(previous, state), (source, points, action.kind, previous.frames, state)
                    moved += cut is not reach
                    narrowed += reach is not flow
                previous = state
    assert moved >= 10 and narrowed >= 10
