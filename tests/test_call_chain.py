"""Stacks are chains of calls (`model.static.call_chain`): the rule, the constraint, and recorded stacks."""
from __future__ import annotations

import pytest

from model.prompt import language as lang
from model.static.call_chain import ChainCheckedConstraint, callable_from, chain_problem
from model.decode.constraints import state_constraint
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.recorded import recorded_programs
from tracegen.trees import InverseChain

PROGRAM = "def g():\n    return 1\n\ndef h():\n    return g()\n\nh()\n"
HEAD = "<|reason_breakpoint|><|call_sep|><module><|line_sep|>7{}"


def test_a_frame_must_be_startable_by_the_line_below() -> None:
    assert callable_from(PROGRAM, "h", 5) is not None and "g" in callable_from(PROGRAM, "h", 5)
    assert chain_problem(PROGRAM, HEAD + "<|call_sep|>h<|line_sep|>5{}<|call_sep|>g<|line_sep|>2{}") is None
    assert chain_problem(PROGRAM, HEAD + "<|call_sep|>g<|line_sep|>2{}") == "<module> on line 7 cannot start g"
    assert "cannot start h" in (chain_problem(PROGRAM, HEAD + "<|call_sep|>h<|line_sep|>5{}<|call_sep|>h<|line_sep|>") or "")


def test_unknown_programs_and_other_files_are_not_judged() -> None:
    assert chain_problem("def f(:\n", HEAD + "<|call_sep|>g<|line_sep|>2{}") is None
    other = HEAD + '<|call_sep|>h<|src_sep|>"m.py"<|line_sep|>5{}<|call_sep|>h<|line_sep|>'
    assert chain_problem(PROGRAM, other) is None


def test_forward_steps_get_the_chain_check() -> None:
    previous = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=7, source="h()")])
    constraint = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.CONTINUE), breakpoints=[2, 5])
    assert isinstance(constraint, ChainCheckedConstraint)
    assert constraint.allows(HEAD + "<|call_sep|>h<|line_sep|>")
    assert not constraint.allows(HEAD + "<|call_sep|>g<|line_sep|>")
    assert constraint.complete(HEAD + "<|call_sep|>h<|line_sep|>5{}")


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_stack_is_a_chain_of_calls(seed: int) -> None:
    checked = 0
    for source, trace in recorded_programs(15, seed):
        for state in InverseChain(trace, max_states=400).states:
            if state.finished or len(state.frames) < 2:
                continue
            checked += 1
            assert chain_problem(source, lang.render_state(state, None)) is None, (source, state.frames)
    assert checked > 50


def test_a_new_frame_name_is_judged_as_it_is_written() -> None:
    """A name no startable function begins with is refused at once: writing `<|line_sep|>` in pieces after a refused
    `<module>` frame was a dead end (no token allowed, the step staying where it was)."""
    previous = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=7, source="h()")])
    constraint = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.CONTINUE), breakpoints=[2, 5])
    assert constraint.allows(HEAD + "<|call_sep|>")
    assert constraint.allows(HEAD + "<|call_sep|>h")
    assert not constraint.allows(HEAD + "<|call_sep|>g")
    assert not constraint.allows(HEAD + "<|call_sep|><mod")
    assert constraint.allows(HEAD + "<|call_sep|>h<|line_sep|>5{}<|call_sep|>g")
    # a marker written in pieces is judged as the marker it becomes: no prefix is left without a way on
    assert not constraint.allows(HEAD + "<|call_sep|><|line_sep")
    assert not constraint.allows(HEAD + "<|call_sep|>h<|line_sep|>5{}<|call_sep|>h<|line_sep|>2{}<|call_sep|")
    assert constraint.allows(HEAD + "<|call_sep|>h<|line_sep|>5{}<|call_sep|")
