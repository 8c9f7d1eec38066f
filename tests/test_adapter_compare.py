"""compareWith "debugpy": the real program runs under debugpy in lockstep; divergences and a summary are reported."""
from __future__ import annotations

import pytest

from tests.dap_client import TcpAdapter

pytest.importorskip("model.oracle", reason="the oracle backend (model/oracle.py) is not in this checkout yet")

SAME = "def f(a):\n    b = a * 2\n    return b\n\nx = f(3)\nprint(x)\n"
# Each run has its own process id: the oracle's recording and the live debugpy run must disagree on `pid`.
DIFFERENT = "import os\npid = os.getpid()\ny = 1\n"


def _session(adapter, path, steps):
    with adapter.client() as c:
        c.ok("initialize", {"adapterID": "neural"})
        c.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": True, "compareWith": "debugpy"})
        c.ok("configurationDone")
        c.wait_event("stopped")
        for command in steps:
            c.ok(command, {"threadId": 1})
        c.wait_event("exited")
        summary = c.wait_event("neuralComparisonSummary")["body"]
        divergences = [e["body"] for e in c.drain("neuralDivergence")]
        console = "".join(e["body"]["output"] for e in c.drain("output") if e["body"]["category"] == "console")
        c.ok("disconnect")
        assert c.drain("neuralComparisonSummary") == [], "the summary is reported once, at the end, not again on disconnect"
    return summary, divergences, console


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


def test_oracle_matches_debugpy_stop_by_stop(adapter, tmp_path):
    path = tmp_path / "same.py"
    path.write_text(SAME)
    summary, divergences, console = _session(adapter, path, ["next", "stepIn", "next", "stepOut", "continue"])
    assert divergences == []
    assert summary["stops"] == 6 and summary["matched"] == 6 and summary["firstDivergence"] is None
    assert "6/6 stops matched" in console


def test_divergence_is_reported(adapter, tmp_path):
    path = tmp_path / "different.py"
    path.write_text(DIFFERENT)
    summary, divergences, console = _session(adapter, path, ["next", "next", "continue"])
    assert divergences and divergences[0]["fields"] == ["locals"] and divergences[0]["wrongVariables"] == ["pid"]
    assert summary["firstDivergence"] == 2 and summary["fieldMismatches"]["locals"] >= 1
    assert summary["fieldMismatches"]["location"] == 0
    assert "pid: predicted" in console
