"""Inside a statement over several lines, line events come in its bytecode's order (model.static.line_order)."""
from __future__ import annotations

from model.static.flow import next_locations
from model.static.line_order import in_statement_order, statement_runs
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.recorded import recorded_programs, recorded_steps

PROGRAM = """\
class Sample:
    def __init__(self, sensor, value):
        self.sensor = sensor
        self.value = value


points = [
    Sample('left', 1e-05),
    Sample(sensor='core',
           value=0.5),
]
total = sum(
    p.value for p in points
)
label = (
    "a" if total else "b"
)
print(points, total, label)
"""
OVER, INTO = ActionKind.STEP_OVER, ActionKind.STEP_INTO


def _at(line: int, *above: Frame, returned: ReturnValue | None = None) -> State:
    return State(reason=StopReason.STEP, frames=[*above, Frame(name="<module>", line=line)], return_value=returned)


def test_runs_follow_the_bytecode() -> None:
    runs = statement_runs(PROGRAM)
    assert (runs[7].first, runs[7].last, runs[7].order) == (7, 11, (8, 9, 10, 9, 7))  # items, back to the keyword call's line, binding
    assert 15 not in runs  # a conditional expression jumps: no fixed order
    assert 1 not in runs and 18 not in runs  # one-line statements


def test_steps_into_and_through_the_statement_go_in_that_order() -> None:
    def lines(previous: State, kind: ActionKind) -> set[int]:
        flow = in_statement_order(next_locations(PROGRAM, previous, Action(kind=kind)), PROGRAM, previous, kind)
        return {line for shape in flow.step if getattr(shape, "depth", None) == 0 and hasattr(shape, "lines") for line in shape.lines}

    assert lines(_at(1), OVER) == {8}  # entering: its first run
    assert lines(_at(8), OVER) == {9}
    assert lines(_at(10), OVER) == {9}
    assert lines(_at(9), OVER) == set(lines(_at(9), OVER))  # line 9 is two runs: left as the flow says
    init = Frame(name="__init__", line=4, locals={"self": "<__main__.Sample object at 0x?>"})
    assert lines(_at(8, init), OVER) <= {8, 9}  # from the callee's last line: the caller's next run (or back on its line)
    assert 8 in lines(_at(8, init), ActionKind.STEP_RETURN)  # Step Out stops back on the calling line


def test_every_recorded_step_is_allowed() -> None:
    """On real traces (examples/, seeded programs, this one): all-Step-Into and all-Step-Over walks."""
    narrowed = 0
    sources = [PROGRAM, *(source for source, _ in recorded_programs(30, 38))]
    for step in recorded_steps(sources, (INTO, OVER), 200):
        flow = in_statement_order(step.flow, step.source, step.previous, step.kind)
        assert flow.allows(step.previous, step.state), (step.source, step.previous, step.state)
        narrowed += flow != step.flow
    assert narrowed >= 8
