"""A step leaves a frame that cannot return from its line only as an exception passes through the calling line
(model.static.frame_exit), and a caller's line does not start again the call it made once (reach.without_recalled_top)."""
from __future__ import annotations

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.flow import next_locations
from model.static.frame_exit import staying_unless_caught
from model.static.reach import without_recalled_top
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.recorded import recorded_programs, recorded_steps

PROGRAM = """\
def cart_total(items, discount):
    total = 0
    for price, qty in items:
        total += price * qty
    if total > 50:
        total = total - discount
    return total


paid = cart_total([(12, 2), (30, 1)], 7)
print("paid", paid)
try:
    cart_total(None, 1)
except TypeError:
    pass
"""
INTO, OVER = ActionKind.STEP_INTO, ActionKind.STEP_OVER


def _in_cart(line: int, calling: int = 10) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="cart_total", line=line, locals={"total": "0"}), Frame(name="<module>", line=calling)])


def _module(line: int, value: str | None = None) -> State:
    shown = ReturnValue(name="cart_total", value=value) if value is not None else None
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line)], return_value=shown)


def test_a_frame_that_cannot_return_is_left_only_on_the_calling_line_with_none() -> None:
    previous = _in_cart(5)
    flow = next_locations(PROGRAM, previous, Action(kind=OVER))
    assert flow.allows(previous, _module(11, "60"))  # the flow alone: a return, then the caller's next line
    narrowed = staying_unless_caught(flow, PROGRAM, previous, OVER)
    assert not narrowed.allows(previous, _module(11, "60")) and narrowed.allows(previous, _module(10, "None"))
    assert narrowed.raised == {0}
    constraint = state_constraint(PROGRAM, previous, action=Action(kind=OVER))
    back = lang.render_state(_module(10, "60"), previous).removesuffix(lang.STOP_TOKEN)
    assert not constraint.complete(back) and constraint.complete(back.replace('"60"', '"None"'))
    assert staying_unless_caught(flow, PROGRAM, _in_cart(7), OVER) is flow  # a return line
    caught = _in_cart(5, calling=13)
    flow13 = next_locations(PROGRAM, caught, Action(kind=OVER))
    assert staying_unless_caught(flow13, PROGRAM, caught, OVER) is flow13  # the caller waits inside a try


def test_the_caller_does_not_call_again_what_it_called_once() -> None:
    previous = _in_cart(7)
    flow = next_locations(PROGRAM, previous, Action(kind=INTO))
    again = State(reason=StopReason.STEP, frames=[Frame(name="cart_total", line=2), Frame(name="<module>", line=10)])
    if flow.allows(previous, again):
        assert not without_recalled_top(flow, PROGRAM, previous, INTO).allows(previous, again)
    assert without_recalled_top(flow, PROGRAM, previous, ActionKind.CONTINUE) is flow


def test_every_recorded_step_is_allowed() -> None:
    """On real traces (the fast recorder reproduces debugpy's stops, an exception passing through a caller too)."""
    narrowed = 0
    sources = [PROGRAM, "def f(v):\n    if v < 0:\n        raise ValueError(v)\n    return v\n\nf(1)\nf(-1)\n",
               *(source for source, _ in recorded_programs(30, 13))]  # fmt: skip
    for step in recorded_steps(sources, (INTO, OVER), 150):
        for rule in (staying_unless_caught, without_recalled_top):
            cut = rule(step.flow, step.source, step.previous, step.kind)
            assert cut.allows(step.previous, step.state), (rule.__name__, step.source, step.previous.frames, step.state.frames)
            narrowed += cut is not step.flow
        text = lang.render_state(lang.canonical_state(step.state, step.source), step.previous).removesuffix(lang.STOP_TOKEN)
        assert state_constraint(step.source, step.previous, action=Action(kind=step.kind)).complete(text), (step.source, text)
    assert narrowed >= 20
