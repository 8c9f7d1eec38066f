"""Debug Console completions: names and attributes from the predicted state, in the client's column base."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.dap_client import TcpAdapter

PROGRAM = """from dataclasses import dataclass

@dataclass
class Point:
    x: int
    y: int

point = Point(1, 2)
count = 3
counter = {'a': 1}
done = True
"""


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


@pytest.mark.parametrize("one_based", [True, False])
def test_completions_list_names_and_attributes(adapter, tmp_path: Path, one_based: bool) -> None:
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    base = 1 if one_based else 0
    client = adapter.client()
    try:
        client.ok("initialize", {"adapterID": "neural", "columnsStartAt1": one_based, "linesStartAt1": one_based})
        client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": False})
        client.ok("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": [{"line": 11 - 1 + base}]})
        client.ok("configurationDone")
        client.wait_event("stopped")
        reply = client.ok("completions", {"text": "1 + cou", "column": 7 + base, "frameId": 1})
        assert [(t["label"], t["start"], t["length"]) for t in reply["targets"]] == [("count", 4 + base, 3), ("counter", 4 + base, 3)]
        reply = client.ok("completions", {"text": "point.", "column": 6 + base})
        assert [t["label"] for t in reply["targets"]] == ["x", "y"]
        assert client.ok("completions", {"text": "nothing.", "column": 8 + base})["targets"] == []
        assert client.ok("completions", {"text": "", "column": 99})["targets"]  # a column past the end is clamped
    finally:
        client.close()


def test_completions_before_the_program_stops_are_refused(adapter) -> None:
    client = adapter.client()
    try:
        client.ok("initialize", {"adapterID": "neural"})
        reply = client.request("completions", {"text": "a", "column": 2})
        assert not reply["success"] and reply["message"]
    finally:
        client.close()
