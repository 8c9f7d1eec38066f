"""Edit and re-predict: the program's file is edited between two DAP requests while stopped."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from adapter.source_edit import map_lines, move_breakpoints, move_state
from model.session import NeuralDebugger, executable_lines
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.dap_client import DapTestClient, TcpAdapter

BEFORE = "a = 1\nb = 2\nc = a + b\nprint(c)\n"
AFTER = "z = 10\nw = z * 3\n\na = 1\nb = 2\nc = a + b + z\nprint(c)\n"  # two lines and a blank above; line 3 edited


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


def outputs(client: DapTestClient, since: int, wait_for: str = "neural debugger: ", timeout: float = 10.0) -> str:
    """The Debug Console text since event `since`, once it holds `wait_for` (events follow their response)."""
    deadline = time.monotonic() + timeout
    while True:
        text = "".join(e["body"]["output"] for e in list(client.all_events)[since:] if e["event"] == "output")
        if wait_for in text or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


def start(client: DapTestClient, path: Path, **extra: object) -> None:
    client.ok("initialize", {"adapterID": "neural"})
    client.ok("launch", {"program": str(path), "stopOnEntry": True, **extra}, timeout=240)
    client.ok("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": [{"line": 3}, {"line": 4}]})
    client.ok("configurationDone", timeout=120)
    client.wait_event("stopped", timeout=120)


@pytest.mark.slow  # loads a (tiny) model in the adapter
def test_the_model_predicts_from_the_edited_source(adapter, tmp_path: Path, tiny_checkpoint: Path) -> None:
    path = tmp_path / "prog.py"
    path.write_text(BEFORE)
    with adapter.client(timeout=120) as client:
        start(client, path, model=str(tiny_checkpoint))  # stopped on entry, line 1
        since = len(client.all_events)
        path.write_text(AFTER)  # the user edits and saves while stopped
        client.ok("stackTrace", {"threadId": 1})  # this request notices the edit
        said = outputs(client, since)
        assert "prog.py changed on disk: line 1 is now line 4" in said, said
        assert "breakpoints checked again: 6, 7)" in said, said
        assert client.wait_event("stopped")["body"]["reason"] == "step"  # the views move to the new line
        assert client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]["line"] == 4
        assert client.ok("source", {"source": {"path": str(path)}, "sourceReference": 0})["content"] == AFTER
        seen = len(client.all_events)
        reply = client.request("next", {"threadId": 1}, timeout=120)
        assert reply["success"], reply
        deadline = time.monotonic() + 60
        while not any(e["event"] in ("stopped", "terminated") for e in client.all_events[seen:]):
            assert time.monotonic() < deadline, "no stop and no end after next"
            time.sleep(0.05)
        if any(e["event"] == "stopped" for e in client.all_events[seen:]):  # an untrained model may also predict the end
            line = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]["line"]
            assert line in {5, 6, 7}, line  # lines only the edited program has: the prediction read it
        client.ok("disconnect")


def test_the_oracle_cannot_follow_an_edit_of_code_that_ran_and_says_so(adapter, tmp_path: Path) -> None:
    path = tmp_path / "prog.py"
    path.write_text(BEFORE)
    with adapter.client(timeout=90) as client:
        start(client, path, backend="oracle", compareWith="debugpy")
        since = len(client.all_events)
        path.write_text("a = (\n")  # saved half-written: does not compile
        client.ok("threads")
        assert "changed on disk but does not compile" in outputs(client, since, "compile")
        path.write_text(AFTER)  # two lines above the stop: the edited program, run again, first stops on `z = 10`
        since = len(client.all_events)
        client.ok("next", {"threadId": 1})
        said = outputs(client, since, "Restart")
        assert "comparison with debugpy no longer applies: the program was edited" in said, said
        assert "does not reach this stop with the same values" in said and "Restart" in said, said
        client.wait_event("stopped")
        assert client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]["line"] == 2  # the old run goes on
        client.ok("disconnect")


def test_the_oracle_follows_an_edit_below_the_stop(adapter, tmp_path: Path) -> None:
    """Lines inserted below the stop: the oracle runs the edited program again to this stop and goes on from
    there, so the next stop is the inserted line, with the values of the real run."""
    path = tmp_path / "prog.py"
    path.write_text(BEFORE)
    with adapter.client(timeout=90) as client:
        start(client, path, backend="oracle", stopOnEntry=False)  # the breakpoint on line 3: a and b set
        path.write_text("a = 1\nb = 2\nc = a + b\nd = c * 10\nprint(c)\n")  # a line inserted below the stop
        since = len(client.all_events)
        client.ok("next", {"threadId": 1})
        said = outputs(client, since, "predicted from the edited source")
        assert "prog.py changed on disk: the stop stays on line 3" in said and "breakpoints checked again: 3, 5)" in said, said
        client.wait_event("stopped")
        frame = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
        assert frame["line"] == 4  # the inserted line: only the edited program has it
        client.ok("next", {"threadId": 1})
        client.wait_event("stopped")
        frame = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
        scope = client.ok("scopes", {"frameId": frame["id"]})["scopes"][0]
        values = {v["name"]: v["value"] for v in client.ok("variables", {"variablesReference": scope["variablesReference"]})["variables"]}
        assert frame["line"] == 5 and values == {"a": "1", "b": "2", "c": "3", "d": "30"}, (frame, values)
        client.ok("disconnect")


def test_line_mapping() -> None:
    mapping = map_lines(BEFORE, AFTER)
    assert mapping == {1: 4, 2: 5, 3: 6, 4: 7}  # 3 -> 6 was edited in place (a block of the same size)
    assert map_lines("x = 1\ny = 2\n", "y = 2\n") == {2: 1}
    state = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=3, source="c = a + b")])
    moved = move_state(state, AFTER, mapping, executable_lines(AFTER))
    assert isinstance(moved, State) and (moved.top.line, moved.top.source) == (6, "c = a + b + z")
    assert "changed or deleted" in move_state(state, "c = 3\n", map_lines(BEFORE, "c = 3\n"), {1})
    assert move_breakpoints([2, 3, 9], mapping, executable_lines(AFTER)) == ([5, 6], [9])


def test_session_prompt_holds_the_edited_source(tiny_checkpoint: Path) -> None:
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, BEFORE, "prog.py")
    session.start()
    state = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=5, source="b = 2", locals={"z": "10", "w": "30", "a": "1"})])
    session.replace_program(AFTER, state)
    assert session.state == state and session.history == []
    prompt = session.tokenizer.decode(session._prompt_ids(Action(kind=ActionKind.STEP_OVER)))
    assert "w = z * 3" in prompt and "c = a + b + z" in prompt
