"""OracleDebugger: replays tracegen's fast recorder exactly; step back through history."""
from __future__ import annotations

from pathlib import Path

import pytest

from model.oracle import OracleDebugger
from model.session import entry_state
from model.session_api import DebugSession, SessionError
from protocol.debugger import Action, ActionKind, StopReason

fast = pytest.importorskip("tracegen.fast")

PROGRAM = """\
def add(a, b):
    c = a + b
    return c

x = add(1, 2)
y = [x, x * 2]
print(y)
"""
SCRIPT = [Action.parse(a) for a in ["stepIn", "stepIn", "stepIn", "stepOut", "next", "continue"]]


def test_oracle_matches_the_fast_recorder_and_steps_back_exactly() -> None:
    oracle = OracleDebugger(PROGRAM, path=None)
    first = oracle.start()
    assert isinstance(oracle, DebugSession)
    assert first == entry_state(PROGRAM)  # the neural session's entry state is the real one
    expected = fast.replay(fast.record_program(PROGRAM), SCRIPT, [])
    got = [first] + [oracle.step(a) for a in SCRIPT[: len(expected) - 1]]
    assert got == expected
    assert got[-1].finished and got[-1].stdout == "[3, 6]\n"
    with pytest.raises(SessionError, match="exited"):
        oracle.step(SCRIPT[0])
    for state in reversed(got[:-1]):
        assert oracle.step_back() == state
    with pytest.raises(SessionError, match="start of the recording"):
        oracle.step_back()
    assert oracle.confidence() == {}


def test_breakpoints_changes_apply_to_later_steps(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    oracle = OracleDebugger(PROGRAM, path=str(program))
    assert oracle.set_breakpoints([2, 4, 6]) == [2, 6]
    oracle.start()
    stop = oracle.step(Action(kind=ActionKind.CONTINUE))
    assert stop.reason is StopReason.BREAKPOINT and stop.location == [("add", 2), ("<module>", 5)]
    assert oracle.confidence() == {"a": 1.0, "b": 1.0}
    oracle.set_breakpoints([])
    assert oracle.step(Action(kind=ActionKind.CONTINUE)).finished
    assert oracle.history[0].state == stop
    edited = oracle.step_back()
    assert oracle.set_variable("a", "10").top.locals["a"] == "10" and edited.top.locals["a"] == "1"


def test_inverse_actions_are_refused() -> None:
    oracle = OracleDebugger(PROGRAM)
    with pytest.raises(SessionError, match="not started"):
        oracle.step(SCRIPT[0])
    oracle.start()
    with pytest.raises(SessionError, match="step_back"):
        oracle.step(Action(kind=ActionKind.INV_STEP_INTO))
