"""A `for` over a non-empty display of constants enters its body the first time (model.static.loop_entry)."""
from __future__ import annotations

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.flow import next_locations
from model.static.loop_entry import entering_loop
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.recorded import recorded_programs
from tracegen.fast import record_program, replay_to_end

PROGRAM = """\
checks = []
for t in ["Racecar", "hello"]:
    checks.append(t.lower())
for n in names():
    print(n)
print(checks)
"""
OVER, INTO = ActionKind.STEP_OVER, ActionKind.STEP_INTO


def _at(line: int, **shown: str) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line, locals=dict(shown))])


def test_the_first_run_of_the_header_goes_into_the_body() -> None:
    first, again = _at(2, checks="[]"), _at(2, checks="['racecar']", t="'Racecar'")
    flow = next_locations(PROGRAM, first, Action(kind=OVER))
    assert flow.allows(first, _at(4, checks="[]"))  # the loop graph alone: the body or past the loop
    narrowed = entering_loop(flow, PROGRAM, first, OVER)
    assert narrowed.allows(first, _at(3, checks="[]", t="'Racecar'")) and not narrowed.allows(first, _at(4, checks="[]"))
    assert entering_loop(flow, PROGRAM, again, OVER) is flow  # `t` shown: a later run of the header, the loop may end
    assert entering_loop(flow, PROGRAM, _at(4, checks="[]"), OVER) is flow  # not over constants
    assert entering_loop(flow, PROGRAM, first, ActionKind.CONTINUE) is flow
    # and the constraint the session decodes with
    past = lang.render_state(_at(4, checks="[]"), first).removesuffix(lang.STOP_TOKEN)
    assert not state_constraint(PROGRAM, first, action=Action(kind=INTO)).allows(past)


def test_a_deleted_or_global_target_is_left_alone() -> None:
    for program in ("for t in [1, 2]:\n    del t\nprint(1)\n", "def f():\n    global t\n    for t in [1]:\n        pass\nf()\n"):
        state = _at(1) if program.startswith("for") else State(reason=StopReason.STEP, frames=[Frame(name="f", line=3), Frame(name="<module>", line=5)])
        flow = next_locations(program, state, Action(kind=OVER))
        assert entering_loop(flow, program, state, OVER) is flow


def test_every_recorded_step_from_such_a_header_is_allowed() -> None:
    """On real traces (the fast recorder reproduces debugpy's stops): all-Step-Into and all-Step-Over walks."""
    sources = [PROGRAM.replace("for n in names():\n    print(n)\n", ""), "for a, (b, c) in [(1, (2, 3)), (4, (5, 6))]:\n    if a:\n        print(b + c)\n",
               *(source for source, _ in recorded_programs(30, 11))]  # fmt: skip
    narrowed = 0
    for source in sources:
        trace = record_program(source)
        for kind in (INTO, OVER):
            states = replay_to_end(trace, [Action(kind=kind)] * 120)
            for previous, state in zip(states, states[1:]):
                flow = next_locations(source, previous, Action(kind=kind))
                if previous.finished or not flow.allows(previous, state):  # the walk's cut-off end (tests/test_flow.py checks the flow)
                    continue
                cut = entering_loop(flow, source, previous, kind)
                assert cut.allows(previous, state), (source, previous.frames, state.frames)
                narrowed += cut is not flow
    assert narrowed >= 4
