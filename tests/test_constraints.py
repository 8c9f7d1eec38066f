"""Constrained decoding: real recorded states always satisfy their constraint; cut-off text can be closed."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from model.prompt import language as lang
from model.decode.constraints import (
    RegexConstraint,
    StateConstraint,
    close_text,
    state_constraint,
)
from model.decode.cut_values import trim_runaway
from protocol.debugger import Action, ActionKind
from tests.sample_programs import CHECK_RUN_DEFS

if TYPE_CHECKING:
    from model.decode.repr_check import CheckedConstraint
    from protocol.debugger import State

PROGRAM = CHECK_RUN_DEFS + """
res = run([1, -1])
print(res)
"""


def test_regex_constraint_prefixes() -> None:
    c = RegexConstraint(r'(12|13) \{("[a-z]+": "[^"]*")?\}')
    assert c.allows("") and c.allows("1") and c.allows('12 {"ab": "x')
    assert not c.allows("14") and not c.allows("12 {x")
    assert c.complete('13 {"a": ""}') and not c.complete("13 {")


@pytest.fixture(scope="module")
def recorded_states() -> list:
    fast = pytest.importorskip("tracegen.fast")
    trace = fast.record_program(PROGRAM)
    return fast.replay(trace, [Action(kind=ActionKind.STEP_INTO)] * 60, [])


def test_every_true_state_satisfies_its_constraint(recorded_states: list) -> None:
    assert recorded_states[-1].finished, "the script should reach the end"
    for previous, state in zip(recorded_states, recorded_states[1:]):
        text = lang.render_state(state, previous)
        assert text.endswith(lang.STATE_END)
        body = text[: -len(lang.STATE_END)]
        constraint = state_constraint(PROGRAM, previous)
        assert constraint.complete(body), body
        for cut in range(0, len(body), 7):
            assert constraint.allows(body[:cut]), body[:cut]
        assert lang.parse_state(body, previous, PROGRAM) == lang.canonical_state(state, PROGRAM)


def test_constraint_rejects_impossible_states(recorded_states: list) -> None:
    previous = recorded_states[3]
    constraint = StateConstraint(PROGRAM, previous)
    assert not constraint.allows(f"{lang.REASON_STEP}{lang.CALL_SEP}<module>{lang.LINE_SEP}5{{")  # line 5 is blank
    assert not constraint.allows(f"{lang.REASON_STEP}{lang.CALL_SEP}nosuchfunction")
    assert not constraint.allows(f'{lang.REASON_STEP}{lang.CALL_SEP}<module>{lang.LINE_SEP}15{{"x":3')  # values are strings
    assert constraint.regex.endswith(re.escape(lang.STATE_END))  # vLLM's pattern ends with the stop token


def test_close_text_truncates_an_unfinished_value(recorded_states: list) -> None:
    previous = recorded_states[5]
    constraint = StateConstraint(PROGRAM, previous)
    cut = f'{lang.REASON_STEP}{lang.CALL_SEP}<module>{lang.LINE_SEP}15{{"res":"[1, 2, 3'
    assert constraint.allows(cut) and not constraint.complete(cut)
    closed = close_text(cut, constraint)
    assert closed is not None and closed.startswith(cut[:-3]) and constraint.complete(closed)
    state = lang.parse_state(closed, previous, PROGRAM)
    assert state.top is not None and state.top.line == 15


def _inverse_call(params: str, call: str, value: str) -> tuple[str, State, CheckedConstraint]:
    """A program `def f(params): return ...` called on line 4 as `call`, the stop after it returned
    `value`, and the (repr-checked) constraint on the answer to ``inv_step_call`` from there."""
    from model.decode.constraints import InverseCallConstraint
    from model.decode.repr_check import CheckedConstraint
    from protocol.debugger import Frame, ReturnValue, State, StopReason

    program = f"def f({params}):\n    return {params.split(',')[0]}\n\nresult = {call}\n"
    later = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=4, source=call)],
                  return_value=ReturnValue(name="f", value=value))
    return program, later, CheckedConstraint(InverseCallConstraint.or_state(program, later), program)


INVERSE_CALL_HEAD = f"{lang.REASON_STEP}{lang.FRAME_SEP}<module>{lang.LINE_SEP}4{{..}}{lang.CALL_SEP}f{lang.LINE_SEP}2{{"


def test_close_text_fills_in_what_the_grammar_still_requires() -> None:
    """inv_step_call's grammar needs every parameter: a cut after the first is completed, not dropped."""
    program, later, constraint = _inverse_call("a, b", "f(1, 2)", "1")
    cut = INVERSE_CALL_HEAD + '"a":"[1, 2'
    assert constraint.allows(cut)
    closed = close_text(cut, constraint)
    assert closed is not None and constraint.complete(closed) and closed.startswith(cut)
    state = lang.parse_state(closed, later, program)
    assert state.top is not None and set(state.top.locals) == {"a", "b"} and state.top.locals["a"] == "[1, 2]"


def test_a_runaway_inverse_call_is_trimmed_closed_and_completed() -> None:
    """CruxEval-I's answer cut inside a repeating list: trimmed, the list closed, missing parameters filled."""
    program, later, constraint = _inverse_call("text, lower, upper", "f(...)", "'x'")
    cut = INVERSE_CALL_HEAD + '"lower":"[\'p\'' + ", 'u'" * 200
    assert constraint.allows(cut)
    closed = close_text(trim_runaway(cut), constraint, close_values=True)
    assert closed is not None and constraint.complete(closed)
    state = lang.parse_state(closed, later, program)
    assert state.top is not None and set(state.top.locals) == {"text", "lower", "upper"}
    assert state.top.locals["lower"] == "['p', 'u', 'u']"
