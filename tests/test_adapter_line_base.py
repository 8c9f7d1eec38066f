"""A client that counts lines and columns from 0 (initialize: linesStartAt1/columnsStartAt1 false)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.dap_client import TcpAdapter

PROGRAM = "x = 1\n\ny = x + 1\nz = y * 2\n"


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


@pytest.mark.parametrize("one_based", [True, False])
def test_lines_and_columns_follow_the_clients_base(adapter, tmp_path: Path, one_based: bool) -> None:
    base = 1 if one_based else 0
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    client = adapter.client()
    try:
        client.ok("initialize", {"adapterID": "neural", "linesStartAt1": one_based, "columnsStartAt1": one_based})
        client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": True})
        # source lines 3 (y = ...) and 2 (blank), in the client's numbering
        reply = client.ok("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": [{"line": 3 - 1 + base}, {"line": 2 - 1 + base}]})
        assert [(b["line"], b["verified"]) for b in reply["breakpoints"]] == [(3 - 1 + base, True), (2 - 1 + base, False)]
        client.ok("configurationDone")
        client.wait_event("stopped")
        top = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
        assert (top["line"], top["column"]) == (1 - 1 + base, base)
        client.ok("continue", {"threadId": 1})
        assert client.wait_event("stopped")["body"]["reason"] == "breakpoint"
        top = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
        assert (top["line"], top["column"]) == (3 - 1 + base, base)
    finally:
        client.close()


def test_uri_path_format_round_trips(adapter, tmp_path: Path) -> None:
    """initialize pathFormat "uri": breakpoints arrive and frames leave as file:// URIs."""
    path = tmp_path / "with space.py"
    path.write_text(PROGRAM)
    uri = path.resolve().as_uri()
    client = adapter.client()
    try:
        client.ok("initialize", {"adapterID": "neural", "pathFormat": "uri"})
        client.ok("launch", {"program": uri, "backend": "oracle", "stopOnEntry": False})
        reply = client.ok("setBreakpoints", {"source": {"path": uri}, "breakpoints": [{"line": 4}]})
        assert [(b["verified"], b["source"]["path"]) for b in reply["breakpoints"]] == [(True, uri)]
        client.ok("configurationDone")
        assert client.wait_event("stopped")["body"]["reason"] == "breakpoint"
        top = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
        assert (top["line"], top["source"]["path"]) == (4, uri)
    finally:
        client.close()
