"""Data breakpoints (Break on Value Change) over DAP, checked against tracegen's recorder.

The oracle backend replays a real run, so a data breakpoint must stop exactly at the first stepIn
stop where the recorded run shows the watched value changed.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapter.data_breakpoints import DataBreakpoints
from adapter.watch import WatchTarget
from protocol import dap
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.dap_client import DapTestClient, TcpAdapter

PROGRAM = """\
def bump(counts, key):
    counts[key] = counts.get(key, 0) + 1
    return counts[key]

total = 0
counts = {}
for word in ["a", "b", "a", "c", "a"]:
    n = bump(counts, word)
    if n > 1:
        total += n
print(total)
"""


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


@pytest.fixture()
def program(tmp_path: Path) -> Path:
    path = tmp_path / "words.py"
    path.write_text(PROGRAM)
    return path


def recorded_stops(path: Path) -> list[State]:
    """Every stepIn stop of the real run (tracegen's recorder), entry first."""
    from tracegen.fast import ReplaySession, record_program

    replay = ReplaySession(record_program(path=str(path)), [], stop_on_entry=True)
    stops = [replay.start()]
    while not stops[-1].finished:
        stops.append(replay.step(Action(kind=ActionKind.STEP_INTO)))
    return stops


def first_change(stops: list[State], start: int, target: WatchTarget) -> int:
    """The index of the first stop after `start` where the recorder shows `target` with another value."""
    last = target.read(stops[start])
    for index in range(start + 1, len(stops)):
        value = target.read(stops[index])
        if last is not None and value is not None and value != last:
            return index
        last = value
    raise AssertionError(f"{target} never changes")


def launch(client: DapTestClient, path: Path, **extra: Any) -> dict:
    caps = client.ok("initialize", {"adapterID": "neural"})
    assert caps["supportsDataBreakpoints"] is True
    client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": True, **extra})
    client.ok("configurationDone")
    assert client.wait_event("stopped")["body"]["reason"] == "entry"
    return caps


def module_scope(client: DapTestClient) -> tuple[int, dict[str, dict]]:
    frame = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
    ref = client.ok("scopes", {"frameId": frame["id"]})["scopes"][0]["variablesReference"]
    return ref, {v["name"]: v for v in client.ok("variables", {"variablesReference": ref})["variables"]}


def step_to_line(client: DapTestClient, line: int) -> None:
    for _ in range(40):
        if client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]["line"] == line:
            return
        client.ok("next", {"threadId": 1})
        client.wait_event("stopped")
    raise AssertionError(f"never reached line {line}")


def stop_key(state: State) -> tuple:
    return tuple((f.name, f.line) for f in state.frames), dict(state.frames[0].locals)


def shown_key(client: DapTestClient) -> tuple:
    frames = client.ok("stackTrace", {"threadId": 1})["stackFrames"]
    ref = client.ok("scopes", {"frameId": frames[0]["id"]})["scopes"][0]["variablesReference"]
    local = {v["name"]: v["value"] for v in client.ok("variables", {"variablesReference": ref})["variables"]
             if not v["name"].startswith("(return)")}
    return tuple((f["name"], f["line"]) for f in frames), local


def test_a_local_and_an_item_stop_where_the_recorded_run_changes_them(adapter, program: Path) -> None:
    stops = recorded_stops(program)
    with adapter.client() as client:
        launch(client, program)
        step_to_line(client, 7)  # total and counts exist: the loop starts
        start = next(i for i, s in enumerate(stops) if s.top.line == 7 and s.top.name == "<module>")
        ref, shown = module_scope(client)
        info = client.ok("dataBreakpointInfo", {"variablesReference": ref, "name": "total"})
        assert info["accessTypes"] == ["write"] and "total" in info["description"]
        target = WatchTarget.from_data_id(info["dataId"])
        assert target == WatchTarget(expression="total", depth=0, frame="<module>")
        client.ok("setDataBreakpoints", {"breakpoints": [{"dataId": info["dataId"], "accessType": "write"}]})
        client.ok("continue", {"threadId": 1})
        event = client.wait_event("stopped")["body"]
        assert event["reason"] == "data breakpoint"
        assert "total: 0 -> 2" in event["description"]
        assert event["hitBreakpointIds"]
        expected = first_change(stops, start, target)
        assert shown_key(client) == stop_key(stops[expected])

        # an item inside a container: counts['a'] (a child row of counts)
        ref, shown = module_scope(client)
        kids = client.ok("variables", {"variablesReference": shown["counts"]["variablesReference"]})["variables"]
        row = next(v for v in kids if v["name"] == "'a'")
        info = client.ok("dataBreakpointInfo", {"variablesReference": shown["counts"]["variablesReference"], "name": row["name"]})
        item = WatchTarget.from_data_id(info["dataId"])
        assert item.expression == "counts['a']"
        client.ok("setDataBreakpoints", {"breakpoints": [{"dataId": info["dataId"]}]})
        here = expected
        client.ok("continue", {"threadId": 1})
        event = client.wait_event("stopped")["body"]
        assert event["reason"] == "data breakpoint" and "counts['a']: 2 -> 3" in event["description"]
        assert shown_key(client) == stop_key(stops[first_change(stops, here, item)])
        client.ok("disconnect")


def test_an_expression_a_condition_and_refusals(adapter, program: Path) -> None:
    stops = recorded_stops(program)
    with adapter.client() as client:
        launch(client, program)
        info = client.ok("dataBreakpointInfo", {"name": "undefined_name"})
        assert info["dataId"] is None and "not defined" in info["description"]
        step_to_line(client, 7)
        info = client.ok("dataBreakpointInfo", {"name": "total"})  # an expression, no reference
        target = WatchTarget.from_data_id(info["dataId"])
        set_ = client.ok("setDataBreakpoints", {"breakpoints": [
            {"dataId": info["dataId"], "condition": "total > 3"},
            {"dataId": info["dataId"], "accessType": "read"},
            {"dataId": "not ours"}]})["breakpoints"]
        assert [b["verified"] for b in set_] == [True, False, False]
        assert "write" in set_[1]["message"]
        client.ok("continue", {"threadId": 1})
        event = client.wait_event("stopped")["body"]
        assert event["reason"] == "data breakpoint" and "total: 2 -> 5" in event["description"]  # the first change (0 -> 2) is passed
        start = next(i for i, s in enumerate(stops) if s.top.line == 7)
        first = first_change(stops, start, target)
        assert shown_key(client) == stop_key(stops[first_change(stops, first, target)])
        client.ok("disconnect")


def test_bounded_run_and_the_end(adapter, program: Path) -> None:
    with adapter.client() as client:
        launch(client, program, dataBreakpointSteps=3)
        step_to_line(client, 7)
        info = client.ok("dataBreakpointInfo", {"name": "total"})
        client.ok("setDataBreakpoints", {"breakpoints": [{"dataId": info["dataId"]}]})
        before = len(client.all_events)
        client.ok("continue", {"threadId": 1})
        event = client.wait_event("stopped")["body"]
        assert event["reason"] == "step"
        notes = [e["body"]["output"] for e in client.all_events[before:] if e["event"] == "output"]
        assert any("no watched value changed in 3 predicted steps" in n for n in notes), notes
        client.ok("disconnect")


def test_the_watch_reads_values_in_its_own_frame_only() -> None:
    module = Frame(name="<module>", line=8, locals={"n": "1", "counts": "{'a': 1}"})
    inner = Frame(name="bump", line=2, locals={"counts": "{'a': 1}", "key": "'a'"})
    state = State(reason=StopReason.STEP, frames=[inner, module])
    local = WatchTarget.at(state, 1, "n")
    assert local.read(state) == "1"
    assert WatchTarget.at(state, 0, "n").read(state) is None  # n is not bump's, even if a global holds it
    assert WatchTarget.at(state, 0, "counts['a']").read(state) == "1"
    gone = State(reason=StopReason.STEP, frames=[module])
    assert WatchTarget.at(state, 0, "key").read(gone) is None

    watch = DataBreakpoints()
    watch.replace([dap.DataBreakpoint(data_id=WatchTarget.at(state, 0, "key").data_id, hit_condition="2")], state)
    later = state.model_copy(deep=True)
    later.frames[0].locals["key"] = "'b'"
    assert watch.changes(later) == []  # first change: the hit condition wants the second
    again = later.model_copy(deep=True)
    again.frames[0].locals["key"] = "'c'"
    assert [c.describe() for c in watch.changes(again)] == ["key in bump: 'b' -> 'c'"]
