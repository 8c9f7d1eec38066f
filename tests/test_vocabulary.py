from protocol.debugger import Action, ActionKind, Frame, State, StopReason, Trajectory, normalize_repr
import pytest


def test_action_parse_roundtrip():
    assert Action.parse("stepIn").kind is ActionKind.STEP_INTO
    assert Action.parse("next").kind is ActionKind.STEP_OVER
    assert Action.parse("breakpoint:7") == Action(kind=ActionKind.BREAKPOINT, line=7)
    assert str(Action.parse("breakpoint:7")) == "breakpoint:7"
    with pytest.raises(ValueError, match="unknown action"):
        Action.parse("jump")
    with pytest.raises(ValueError, match="line number"):
        Action.parse("breakpoint:x")


def test_state_json_roundtrip_and_normalize():
    s = State(reason=StopReason.STEP, frames=[Frame(name="f", line=3, source="x = 1", locals={"it": "<list_iterator object at 0x7f00ab>"})])
    t = Trajectory(program="x = 1\n", initial=s)
    assert Trajectory.model_validate_json(t.model_dump_json()) == t
    assert s.normalized().frames[0].locals["it"] == "<list_iterator object at 0x?>"
    assert normalize_repr("no address") == "no address"
    assert s.location == [("f", 3)]
