"""Stop parity: the adapter on the oracle backend shows exactly what real debugpy shows.

The same programs and action scripts go (a) through `neural-debugger dap` over a real TCP socket
with the oracle backend, read back with stackTrace / scopes / variables / exceptionInfo and the
output events, and (b) through tracegen's debugpy recorder (real debugpy over DAP). Every stop must
agree on reason, stack, top-frame locals, return value, exception and stdout, and the exit code
must match. This proves the DAP mapping independently of model quality.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from protocol.compare import compare_states
from protocol.debugger import Action, ActionKind, ExceptionInfo, Frame, ReturnValue, State, StopReason
from tests.dap_client import DapTestClient, TcpAdapter

pytest.importorskip("model.oracle", reason="the oracle backend (model/oracle.py) is not in this checkout yet")
from tracegen.debugpy_recorder import record_debugpy  # noqa: E402
from tests.sample_programs import CHECK_RUN_DEFS  # noqa: E402

CAUGHT = CHECK_RUN_DEFS + """
res = run([1, -1])
final = check(-5)
"""

PRINTS = '''def greet(name):
    text = "hi " + name
    print(text)
    return len(text)

total = 0
for who in ["ann", "bob"]:
    total += greet(who)
print("total", total)
'''

NESTED = '''def inner(x):
    y = x + 1
    return y * 2

def outer(a):
    b = inner(a)
    c = inner(b)
    return [b, c]

data = {"k": outer(1)}
squares = [n * n for n in range(3)]
'''

CASES = [
    ("caught", CAUGHT, ["stepIn"] * 30, []),
    ("caught_over", CAUGHT, ["next", "next", "next", "stepIn", "next", "next", "stepIn", "stepOut", "next", "next", "continue"], []),
    ("prints_bp", PRINTS, ["continue", "stepIn", "next", "stepOut", "continue", "continue"], [3, 9]),
    ("nested", NESTED, ["next", "next", "next", "stepIn", "stepIn", "next", "stepOut", "stepIn", "stepOut", "stepOut", "stepIn", "stepIn", "continue"], []),
    ("nested_bp", NESTED, ["continue", "continue", "continue", "stepOut"], [2, 11]),
]


def _read_state(client: DapTestClient, stopped: dict, stdout: str) -> State:
    """What a DAP client sees at one stop, as a State."""
    frames_raw = client.ok("stackTrace", {"threadId": 1})["stackFrames"]
    frames: list[Frame] = []
    return_value = None
    for index, raw in enumerate(frames_raw):
        scopes = client.ok("scopes", {"frameId": raw["id"]})["scopes"]
        local_scope = next(s for s in scopes if s["name"] == "Locals")
        variables = client.ok("variables", {"variablesReference": local_scope["variablesReference"]})["variables"]
        plain = {}
        for var in variables:
            if var["name"].startswith("(return) "):
                if index == 0:
                    return_value = ReturnValue(name=var["name"][len("(return) "):], value=var["value"])
            else:
                plain[var["name"]] = var["value"]
        frames.append(Frame(name=raw["name"], line=raw["line"], locals=plain))
    exception = None
    if stopped["reason"] == "exception":
        info = client.ok("exceptionInfo", {"threadId": 1})
        exception = ExceptionInfo(type=info["exceptionId"], message=info.get("description") or "")
    return State(reason=StopReason(stopped["reason"]), frames=frames, return_value=return_value,
                 exception=exception, stdout=stdout)


def _stdout(client: DapTestClient) -> str:
    return "".join(e["body"]["output"] for e in client.drain("output") if e["body"].get("category") == "stdout")


def _next_state(client: DapTestClient) -> State:
    """Wait for the next stop or the end; the state it shows."""
    while True:
        for event in list(client.events):
            if event["event"] == "stopped":
                client.events.remove(event)
                return _read_state(client, event["body"], _stdout(client))
            if event["event"] == "exited":
                client.events.remove(event)
                client.wait_event("terminated")
                return State(reason=StopReason.EXITED, exit_code=event["body"]["exitCode"], stdout=_stdout(client))
        _wait_any(client)


def _wait_any(client: DapTestClient) -> None:
    with client._cond:  # noqa: SLF001 - a test helper waiting on the reader thread
        if not any(e["event"] in ("stopped", "exited") for e in client.events):
            client._cond.wait(30)  # noqa: SLF001


def drive_adapter(client: DapTestClient, path: Path, actions: list[Action], breakpoints: list[int]) -> list[State]:
    client.ok("initialize", {"adapterID": "neural"})
    client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": True})
    client.wait_event("initialized")
    client.ok("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": [{"line": n} for n in breakpoints]})
    client.ok("setExceptionBreakpoints", {"filters": ["uncaught"]})
    client.ok("configurationDone")
    states = [_next_state(client)]
    script = list(actions)
    while script and not states[-1].finished:  # like record_debugpy: the list ends when the script does
        action = script.pop(0)
        command = {ActionKind.STEP_INTO: "stepIn", ActionKind.STEP_OVER: "next", ActionKind.STEP_RETURN: "stepOut",
                   ActionKind.CONTINUE: "continue"}[action.kind]
        client.ok(command, {"threadId": 1})
        states.append(_next_state(client))
    client.ok("disconnect")
    return states


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


@pytest.mark.parametrize("name, source, script, breakpoints", CASES, ids=[c[0] for c in CASES])
def test_adapter_stops_match_debugpy(adapter, tmp_path, name, source, script, breakpoints):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    actions = [Action.parse(a) for a in script]
    real = record_debugpy(path, actions, breakpoints)
    with adapter.client() as client:
        shown = drive_adapter(client, path, actions, breakpoints)
    assert len(shown) == len(real), ([s.location for s in shown], [s.location for s in real])
    for index, (mine, theirs) in enumerate(zip(shown, real)):
        theirs_top = theirs.model_copy(deep=True)
        for frame in theirs_top.frames:
            frame.source = ""
            frame.file = None
        if theirs_top.finished:  # a DAP client sees only the exit code at the end (the exception was the stop before)
            theirs_top.exception = None
        diff = compare_states(mine, theirs_top)
        assert diff.matched, f"stop {index}: {diff.mismatched_fields()}\nadapter: {mine}\ndebugpy: {theirs}"
    assert shown[-1].exit_code == real[-1].exit_code
    assert any(s.finished for s in shown) == (name != "nested_bp")


def test_two_clients_at_once(adapter, tmp_path):
    """A second TCP client gets its own session while the first one is open and stopped."""
    first_path, second_path = tmp_path / "a.py", tmp_path / "b.py"
    first_path.write_text(NESTED)
    second_path.write_text(PRINTS)
    with adapter.client() as first, adapter.client() as second:
        for client, path in ((first, first_path), (second, second_path)):
            client.ok("initialize", {"adapterID": "neural"})
            client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": True})
            client.ok("configurationDone")
            assert client.wait_event("stopped")["body"]["reason"] == "entry"
        first.ok("next", {"threadId": 1})
        first.wait_event("stopped")
        second.ok("continue", {"threadId": 1})
        assert second.wait_event("exited")["body"]["exitCode"] == 0
        assert _stdout(second) == "hi ann\nhi bob\ntotal 12\n"
        frames = first.ok("stackTrace", {"threadId": 1})["stackFrames"]
        assert [(f["name"], f["line"]) for f in frames] == [("<module>", 5)]
        first.ok("disconnect")
