"""Confidence over DAP, alternatives, what if, no dead end, what came before: real `neural-debugger dap` over TCP.

Models: the tiny untrained checkpoint (tests/conftest.py) for the protocol, the shipped model
(checkpoints/default, skipped when absent) where a test needs predicted variables, each with a
calibration.json written by the test into a copy; the oracle backend where a test needs known
values. Every message is validated against the official DAP schema (extra properties are allowed).
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from model.decode.confidence import Calibration, FieldMap
from model.paths import DEFAULT_CHECKPOINT
from tests.dap_client import DapTestClient, TcpAdapter
from tests.test_dap_schema import assert_valid, definition_for

PROGRAM = "a = 1\nb = [a, 2]\nc = {'k': b}\nd = a + len(b)\ne = str(d) * 2\n"


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


def _constant(p: float) -> FieldMap:
    return FieldMap(method="isotonic", xs=[0.0, 1.0], ys=[p, p])


@pytest.fixture(scope="module")
def shipped_calibrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the shipped model whose calibration says 64% for every location and 30% for every variable."""
    if not (Path(DEFAULT_CHECKPOINT) / "config.json").is_file():
        pytest.skip("no shipped model in checkpoints/default")
    folder = tmp_path_factory.mktemp("shipped") / "ckpt"
    # the model alone: its ensemble.json names a companion folder beside the original, not beside this copy
    shutil.copytree(DEFAULT_CHECKPOINT, folder, ignore=shutil.ignore_patterns("calibration.json", "*.jsonl", "ensemble.json"))
    Calibration(fields={"location": _constant(0.64), "variable": _constant(0.3)}).save(folder)
    return folder


class Checked:
    """A client whose every received message is checked against the DAP schema."""

    def __init__(self, client: DapTestClient) -> None:
        self.c = client

    def request(self, command: str, arguments: Any = None) -> dict:
        reply = self.c.request(command, arguments, timeout=120)
        custom = command.startswith("neural") and reply["success"]  # a custom request: a plain Response
        assert_valid("Response" if custom else definition_for(reply), reply)
        return reply

    def ok(self, command: str, arguments: Any = None) -> Any:
        reply = self.request(command, arguments)
        assert reply["success"], reply
        return reply.get("body")

    def event(self, name: str) -> dict:
        event = self.c.wait_event(name, timeout=120)
        assert_valid("Event" if name.startswith("neural") else definition_for(event), event)
        return event.get("body") or {}

    def stop(self, command: str, arguments: Any = None) -> dict:
        self.ok(command, arguments if arguments is not None else {"threadId": 1})
        return self.event("stopped")

    def top_variables(self) -> tuple[list[dict], int]:
        frame = self.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
        scopes = self.ok("scopes", {"frameId": frame["id"]})["scopes"]
        ref = scopes[0]["variablesReference"]
        return self.ok("variables", {"variablesReference": ref})["variables"], ref


def _first_of(client: DapTestClient, names: tuple[str, ...], timeout: float = 120.0) -> str:
    """The name of the first of these events to arrive (left in the queue)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in list(client.events):
            if event.get("event") in names:
                return event["event"]
        time.sleep(0.05)
    raise AssertionError(f"none of {names} within {timeout} s")


def _launch(c: Checked, program: Path, **config: Any) -> dict:
    c.ok("initialize", {"adapterID": "neural"})
    c.ok("launch", {"program": str(program), "stopOnEntry": True, **config})
    c.ok("configurationDone")
    return c.event("stopped")


@pytest.mark.slow
def test_tiny_model_confidence_and_no_dead_end_at_a_predicted_exit(adapter, tmp_path: Path, tiny_checkpoint: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text(PROGRAM)
    with adapter.client(timeout=120) as client:
        c = Checked(client)
        entry = _launch(c, program, model=str(tiny_checkpoint), stopAtExit=True)
        assert entry["reason"] == "entry" and entry["neuralConfidence"] == 1.0 and "not predicted" in entry["description"]
        bodies = []
        for _ in range(40):
            body = c.stop("next")
            assert 0.0 <= body["neuralConfidence"] <= 1.0 and "sure" in body["description"]
            bodies.append(body)
            if body["reason"] == "exit":
                break
        else:
            pytest.fail("the tiny model never predicted an exit in 40 steps")
        assert body["description"].startswith("predicted: exited with code") and "Step Back" in body["description"]
        frames = c.ok("stackTrace", {"threadId": 1})["stackFrames"]
        assert len(frames) == 1 and frames[0]["name"].startswith("<exit code")
        assert c.ok("scopes", {"frameId": frames[0]["id"]})["scopes"] == []
        back = c.stop("stepBack")  # no dead end: the exit is a stop like any other
        assert back["description"].endswith("(from history)") or back["neuralConfidence"] == 1.0
        again = c.stop("next")
        assert again["reason"] in ("exit", "step", "breakpoint", "exception")
        while again["reason"] != "exit":
            again = c.stop("next")
        c.ok("continue", {"threadId": 1})
        assert "exitCode" in c.event("exited")
        c.event("terminated")
        c.ok("disconnect")


def test_without_stop_at_exit_a_predicted_exit_ends_the_session(adapter, tmp_path: Path, tiny_checkpoint: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text(PROGRAM)
    with adapter.client(timeout=120) as client:
        c = Checked(client)
        _launch(c, program, model=str(tiny_checkpoint))
        for _ in range(40):
            c.ok("next", {"threadId": 1})
            if _first_of(client, ("stopped", "exited")) == "exited":
                break
            c.event("stopped")
        else:
            pytest.fail("the tiny model never predicted an exit in 40 steps")
        assert all(e["body"].get("reason") != "exit" for e in client.all_events if e.get("event") == "stopped")
        c.event("terminated")
        c.ok("disconnect")


CALLS = "def f(nums, k):\n    out = [n * k for n in nums]\n    total = sum(out)\n    return total\n\nresult = f([1, 2, 3], 2)\n"


def test_predicted_variables_carry_calibrated_confidence_marks_and_alternatives(adapter, tmp_path: Path, shipped_calibrated: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text(CALLS)
    with adapter.client(timeout=120) as client:
        c = Checked(client)
        _launch(c, program, model=str(shipped_calibrated))
        for _ in range(8):
            body = c.stop("stepIn")
            assert body["neuralConfidence"] == 0.64 and body["description"].startswith("predicted, 64% sure")
            variables, scope = c.top_variables()
            predicted = [v for v in variables if not v["name"].startswith("(return)")]
            if predicted:
                break
        else:
            pytest.fail("the shipped model predicted no variable in 8 steps")
        for var in predicted:
            assert var["neuralConfidence"] == 0.3
            assert var["type"].endswith("30% sure") and "neuralLowConfidence" in var["presentationHint"]["attributes"]
            hover = c.ok("evaluate", {"expression": var["name"], "context": "hover"})
            assert hover["result"] == var["value"] and hover["neuralConfidence"] == 0.3  # the value stays the pure repr
            # low: the hover expands, like the Variables row, to the value's parts (sharing its confidence)
            # and then the model's alternatives
            assert hover["variablesReference"] > 0
            parts = c.ok("variables", {"variablesReference": hover["variablesReference"]})["variables"]
            own = [part for part in parts if not part["name"].startswith("alternative ")]
            assert all(part["neuralConfidence"] == 0.3 for part in own)
            for part in parts[len(own):]:
                assert part["name"].startswith("alternative ") and part["value"] != var["value"]
            assert var["variablesReference"] > 0  # low: its children list the model's alternatives (maybe none)
            kids = c.ok("variables", {"variablesReference": var["variablesReference"]})["variables"]
            for kid in kids:
                if kid["name"].startswith("alternative "):
                    assert kid["value"] != var["value"] and 0 < kid["neuralConfidence"] <= 0.7
                    assert kid["name"].endswith("%)")
        name = predicted[0]["name"]
        asked = c.ok("evaluate", {"expression": f"?{name}", "context": "repl"})
        assert asked["result"].startswith(f"{name} = {predicted[0]['value']} (30% sure)")
        assert isinstance(asked["neuralAlternatives"], list)
        c.ok("setVariable", {"variablesReference": scope, "name": name, "value": "[1, 'what if']"})
        after, _ = c.top_variables()
        edited = next(v for v in after if v["name"] == name)
        assert edited["value"] == "[1, 'what if']" and edited["neuralConfidence"] == 1.0 and "presentationHint" not in edited
        c.ok("disconnect")


def test_what_came_before_from_the_debugger(adapter, tmp_path: Path, shipped_calibrated: Path, tiny_checkpoint: Path) -> None:
    program = tmp_path / "f.py"
    program.write_text("def f(x, y):\n    z = x * y\n    return z + 1\n\nr = f(6, 7)\ns = r - 1\n")
    with adapter.client(timeout=120) as client:
        c = Checked(client)
        _launch(c, program, model=str(shipped_calibrated))
        refused = c.request("neuralPredictBefore", {"kind": "inv_step_over"})
        assert not refused["success"] and "start of the program" in refused["message"]
        body = c.stop("next")
        if body["reason"] == "exit":
            pytest.skip("the shipped model predicted an exit at once")
        assert c.ok("neuralPredictBefore", {"kind": "inv_step_into"}) == {"kind": "inv_step_into"}
        before = c.event("stopped")
        assert before["description"].startswith("predicted backwards, 64% sure") and before["neuralConfidence"] == 0.64
        reply = c.request("stepBack", {"threadId": 1})  # past the start of the history: the inverse model again
        if reply["success"]:
            assert c.event("stopped")["description"].startswith("predicted backwards")
        else:
            assert "start of the program" in reply["message"]
        bad = c.request("neuralPredictBefore", {"kind": "step_over"})
        assert not bad["success"] and "inverse" in bad["message"]
        c.ok("disconnect")
    oracle = tmp_path / "o.py"
    oracle.write_text("x = 1\ny = 2\n")
    with adapter.client(timeout=60) as client:
        c = Checked(client)
        _launch(c, oracle, backend="oracle")
        c.stop("next")
        refused = c.request("neuralPredictBefore", {})
        assert not refused["success"] and "oracle" in refused["message"]
        c.ok("disconnect")


def test_set_container_items_and_compare_mode_no_longer_applies(adapter, tmp_path: Path) -> None:
    program = tmp_path / "items.py"
    program.write_text("d = {'k': [1, 2], 'p': (3, 'x')}\ne = d['k'][1]\nf = 0\n")
    with adapter.client(timeout=120) as client:
        c = Checked(client)
        _launch(c, program, backend="oracle", compareWith="debugpy")
        c.stop("next")
        variables, scope = c.top_variables()
        d = next(v for v in variables if v["name"] == "d")
        assert d["neuralConfidence"] == 1.0 and "presentationHint" not in d  # the oracle ran the program: certain
        hover = c.ok("evaluate", {"expression": "d", "context": "hover"})
        parts = c.ok("variables", {"variablesReference": hover["variablesReference"]})["variables"]
        assert hover["neuralConfidence"] == 1.0 and [p["neuralConfidence"] for p in parts] == [1.0, 1.0]
        items = c.ok("variables", {"variablesReference": d["variablesReference"]})["variables"]
        k = next(v for v in items if v["name"] == "'k'")
        inner = c.ok("variables", {"variablesReference": k["variablesReference"]})["variables"]
        assert [v["value"] for v in inner] == ["1", "2"]
        set_reply = c.ok("setVariable", {"variablesReference": k["variablesReference"], "name": "1", "value": "{'new': None}"})
        assert set_reply["value"] == "{'new': None}"
        c.event("neuralComparisonSummary")  # sent after the note
        console = "".join(e["body"]["output"] for e in client.drain("output") if e["body"].get("category") == "console")
        assert "no longer applies" in console
        after, _ = c.top_variables()
        assert next(v for v in after if v["name"] == "d")["value"] == "{'k': [1, {'new': None}], 'p': (3, 'x')}"
        assert c.ok("evaluate", {"expression": "d['k'][1]", "context": "watch"})["result"] == "{'new': None}"
        p = next(v for v in after if v["name"] == "d")
        items = c.ok("variables", {"variablesReference": p["variablesReference"]})["variables"]
        pair = next(v for v in items if v["name"] == "'p'")
        c.ok("setVariable", {"variablesReference": pair["variablesReference"], "name": "0", "value": "-4.5"})
        assert c.ok("evaluate", {"expression": "d", "context": "watch"})["result"] == "{'k': [1, {'new': None}], 'p': (-4.5, 'x')}"
        bad = c.request("setVariable", {"variablesReference": pair["variablesReference"], "name": "0", "value": "1 +"})
        assert not bad["success"] and "not a Python value" in bad["message"]
        c.ok("disconnect")
