"""Value history over DAP (a "History" scope, ``?history x``), checked against tracegen's recorder."""
from __future__ import annotations

from pathlib import Path

import pytest

from adapter.evaluate import evaluate_path
from adapter.history import HistoryRow, runs, summary
from protocol.debugger import Action, ActionKind, State
from tests.dap_client import DapTestClient, TcpAdapter
from tests.test_adapter_data_breakpoints import PROGRAM

ACTIONS = ["next", "next", "next", "stepIn", "next", "next", "next", "next", "next", "next", "next"]
KINDS = {"next": ActionKind.STEP_OVER, "stepIn": ActionKind.STEP_INTO}


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


def recorded(path: Path, actions: list[str]) -> list[State]:
    """The recorder's stops for the same actions, entry first."""
    from tracegen.fast import ReplaySession, record_program

    replay = ReplaySession(record_program(path=str(path)), [], stop_on_entry=True)
    stops = [replay.start()]
    for name in actions:
        stops.append(replay.step(Action(kind=KINDS[name])))
    return stops


def drive(client: DapTestClient, path: Path, actions: list[str], **extra: object) -> list[dict]:
    client.ok("initialize", {"adapterID": "neural"})
    client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": True, **extra})
    client.ok("configurationDone")
    client.wait_event("stopped")
    for name in actions:
        client.ok(name, {"threadId": 1})
        client.wait_event("stopped")
    return client.ok("stackTrace", {"threadId": 1})["stackFrames"]


def test_history_is_what_the_recorder_shows_at_the_same_stops(adapter, tmp_path: Path) -> None:
    path = tmp_path / "words.py"
    path.write_text(PROGRAM)
    stops = recorded(path, ACTIONS)
    with adapter.client() as client:
        frames = drive(client, path, ACTIONS)
        assert (frames[0]["name"], frames[0]["line"]) == (stops[-1].top.name, stops[-1].top.line)
        module = frames[-1]["id"]
        for name in ["total", "n", "word"]:
            expected = [(i + 1, s.frames[-1].line, s.frames[-1].locals[name]) for i, s in enumerate(stops) if name in s.frames[-1].locals]
            answer = client.ok("evaluate", {"expression": f"?history {name}", "frameId": module, "context": "repl"})
            assert [(r["stop"], r["line"], r["value"]) for r in answer["neuralHistory"]] == expected
            assert answer["result"].startswith(f"history of {name} ({len(expected)} stops)")
        scopes = {s["name"]: s for s in client.ok("scopes", {"frameId": module})["scopes"]}
        rows = {v["name"]: v for v in client.ok("variables", {"variablesReference": scopes["History"]["variablesReference"]})["variables"]}
        n_values = [s.frames[-1].locals["n"] for s in stops if "n" in s.frames[-1].locals]
        assert rows["n"]["value"] == " → ".join(dict.fromkeys(n_values))  # n only grows here: distinct values in order
        kids = client.ok("variables", {"variablesReference": rows["n"]["variablesReference"]})["variables"]
        assert [k["value"] for k in kids] == [v for i, v in enumerate(n_values) if i == 0 or n_values[i - 1] != v]
        # a path inside a container, and refusals that keep the session going
        answer = client.ok("evaluate", {"expression": "?history counts['a']", "frameId": module, "context": "repl"})
        expected = [evaluate_path(s, "counts['a']", len(s.frames) - 1) for s in stops if "'a'" in s.frames[-1].locals.get("counts", "")]
        assert expected and [r["value"] for r in answer["neuralHistory"]] == expected
        assert not client.request("evaluate", {"expression": "?history nothing_here", "frameId": module, "context": "repl"})["success"]
        assert not client.request("evaluate", {"expression": "?history", "frameId": module, "context": "repl"})["success"]
        client.ok("disconnect")


def test_compare_mode_shows_the_real_values_beside(adapter, tmp_path: Path) -> None:
    path = tmp_path / "words.py"
    path.write_text(PROGRAM)
    with adapter.client(timeout=90) as client:
        frames = drive(client, path, [], compareWith="debugpy")
        assert [s["name"] for s in client.ok("scopes", {"frameId": frames[0]["id"]})["scopes"]] == ["Locals"]  # no earlier stop
        for name in ACTIONS[:4]:
            client.ok(name, {"threadId": 1})
            client.wait_event("stopped")
        frames = client.ok("stackTrace", {"threadId": 1})["stackFrames"]
        answer = client.ok("evaluate", {"expression": "?history total", "frameId": frames[-1]["id"], "context": "repl"})
        assert answer["neuralHistory"] and all(r["real"] == r["value"] for r in answer["neuralHistory"])
        assert "predicted | real" in answer["result"] and "real: same" in answer["result"]
        client.ok("disconnect")


def test_runs_and_summary() -> None:
    rows = [HistoryRow(1, 5, "0"), HistoryRow(2, 6, "0"), HistoryRow(3, 7, "2"), HistoryRow(5, 7, "2", None)]
    grouped = runs(rows, compared=False)
    assert [(g.label, g.shown) for g in grouped] == [("stops 1-2 (lines 5..6)", "0"), ("stop 3 (line 7)", "2"),
                                                     ("stop 5 (line 7)", "2")]
    assert summary(rows) == "0 → 2"
    assert runs([HistoryRow(1, 1, "1", "2")], compared=True)[0].shown == "1   |   real: 2"
