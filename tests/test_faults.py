"""Faults during a session: the model backend hangs, answers garbage or dies; the program file
changes or disappears; values whose repr is huge or raises. Each must give a clear message (an
error response or an output event) and leave a session that still answers the next request.

The vLLM backend is driven against `VllmStandIn`, a local HTTP server speaking just enough of
vLLM's API (`/v1/models`, `/v1/completions`) whose behaviour the test switches at will.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.dap_client import DapTestClient, TcpAdapter
from tests.local_http import LocalHTTPServer

MODES = ("hang", "not_json", "no_choices", "empty_state")


class VllmStandIn:
    """A fake `vllm serve`: `/v1/models` always answers; `/v1/completions` per `mode`.

    hang: never answers (until `close`); not_json: an HTML page; no_choices: JSON without
    ``choices``; empty_state: a well-formed completion whose text is not a state.
    """

    def __init__(self, mode: str = "empty_state") -> None:
        self.mode = mode
        self.completions = 0
        self.release = threading.Event()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _reply(self, payload: bytes, ctype: str = "application/json") -> None:
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass

            def do_GET(self) -> None:  # noqa: N802
                self._reply(json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model"}]}).encode())

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                stand_in.completions += 1
                if stand_in.mode == "hang":
                    stand_in.release.wait(300)
                    return
                if stand_in.mode == "not_json":
                    self._reply(b"<html>502 Bad Gateway</html>", "text/html")
                elif stand_in.mode == "no_choices":
                    self._reply(json.dumps({"object": "text_completion", "oops": True}).encode())
                else:
                    body = {"choices": [{"text": "%%garbage%%", "token_ids": [5, 6, 7], "finish_reason": "stop",
                                         "logprobs": {"token_logprobs": [-1.0, -1.0, -1.0]}}],
                            "usage": {"prompt_tokens": 10}}
                    self._reply(json.dumps(body).encode())

        self.http = LocalHTTPServer(Handler)
        self.url = self.http.url

    def close(self) -> None:
        """Stop serving (a server that died): later requests get 'connection refused'."""
        self.release.set()
        self.http.close()


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


@pytest.fixture
def stand_in():
    server = VllmStandIn()
    yield server
    server.close()


def program_file(folder: Path) -> Path:
    path = folder / "prog.py"
    path.write_text("def double(v):\n    w = v * 2\n    return w\n\na = 1\nb = double(a)\nc = [a, b]\nprint(c)\n")
    return path


def vllm_launch(program: Path, checkpoint: Path, url: str, timeout: float | None = 2.0) -> dict[str, Any]:
    """A vllm launch; timeout None leaves vllmTimeout unset (5 s at launch, 60 s per step)."""
    launch = {"program": str(program), "backend": "vllm", "vllmUrl": url, "model": str(checkpoint), "stopOnEntry": True}
    return launch if timeout is None else {**launch, "vllmTimeout": timeout}


def start(client: DapTestClient, launch: dict[str, Any]) -> None:
    client.ok("initialize", {"adapterID": "neural"})
    client.ok("launch", launch, timeout=120)
    client.ok("configurationDone", timeout=60)
    assert client.wait_event("stopped")["body"]["reason"] == "entry"


def still_usable(client: DapTestClient) -> None:
    """The session answers inspection requests after the fault."""
    frames = client.ok("stackTrace", {"threadId": 1})["stackFrames"]
    assert frames and frames[0]["name"] == "<module>"
    scopes = client.ok("scopes", {"frameId": frames[0]["id"]})["scopes"]
    client.ok("variables", {"variablesReference": scopes[0]["variablesReference"]})
    assert client.ok("threads")["threads"]


def clear_text(client: DapTestClient, reply: dict[str, Any]) -> str:
    """The message the user sees for a step: the error message, or the output events it caused."""
    if not reply["success"]:
        return reply["message"]
    client.wait_event("stopped")  # the step's output events come before its stop, after the response
    return " ".join(e["body"]["output"] for e in client.drain("output"))


# --------------------------------------------------------------------------- the model backend


@pytest.mark.parametrize("mode", ["not_json", "no_choices", "empty_state"])
def test_backend_garbage_gives_a_clear_message(adapter, stand_in, tiny_checkpoint, tmp_path, mode):
    stand_in.mode = mode
    with adapter.client(timeout=60) as c:
        start(c, vllm_launch(program_file(tmp_path), tiny_checkpoint, stand_in.url))
        reply = c.request("stepIn", {"threadId": 1})
        text = clear_text(c, reply)
        expected = {"not_json": "not JSON", "no_choices": "unexpected body", "empty_state": "still at the previous stop"}[mode]
        assert expected in text, text
        still_usable(c)
        c.ok("disconnect", {})
    assert stand_in.completions >= 1


def test_backend_dies_mid_session(adapter, tiny_checkpoint, tmp_path):
    server = VllmStandIn("empty_state")
    try:
        with adapter.client(timeout=60) as c:
            start(c, vllm_launch(program_file(tmp_path), tiny_checkpoint, server.url))
            assert c.request("stepIn", {"threadId": 1})["success"]
            server.close()
            reply = c.request("stepIn", {"threadId": 1})
            assert not reply["success"]
            assert "does not answer" in reply["message"] and server.url in reply["message"], reply["message"]
            still_usable(c)
            again = c.request("next", {"threadId": 1})
            assert not again["success"] and "does not answer" in again["message"]
            c.ok("disconnect", {})
    finally:
        server.close()


@pytest.mark.slow
def test_backend_that_never_answers_times_out_with_a_message(adapter, stand_in, tiny_checkpoint, tmp_path):
    """The step ends with an error (after the default 60 s per-step timeout) and the session goes on."""
    stand_in.mode = "hang"
    with adapter.client(timeout=150) as c:
        start(c, vllm_launch(program_file(tmp_path), tiny_checkpoint, stand_in.url, timeout=None))
        reply = c.request("stepIn", {"threadId": 1})
        assert not reply["success"] and "does not answer" in reply["message"], reply
        stand_in.release.set()
        still_usable(c)


@pytest.mark.slow
def test_backend_hang_respects_vllm_timeout(adapter, stand_in, tiny_checkpoint, tmp_path):
    stand_in.mode = "hang"
    with adapter.client(timeout=60) as c:
        start(c, vllm_launch(program_file(tmp_path), tiny_checkpoint, stand_in.url, timeout=2.0))
        try:
            reply = c.request("stepIn", {"threadId": 1}, timeout=12)  # 6x vllmTimeout: a hang, not slowness
        finally:
            stand_in.release.set()
        assert not reply["success"] and "answer" in reply["message"]
        still_usable(c)


# --------------------------------------------------------------------------- the program file


def test_program_file_changes_then_disappears(adapter, tmp_path):
    program = program_file(tmp_path)
    original = program.read_text()
    with adapter.client() as c:
        start(c, {"program": str(program), "backend": "oracle", "stopOnEntry": True})
        c.ok("next", {"threadId": 1})
        program.write_text("import sys\nsys.exit(3)\n")
        c.ok("next", {"threadId": 1})
        frames = c.ok("stackTrace", {"threadId": 1})["stackFrames"]
        assert frames[0]["line"] == 6  # still the launched program: b = double(a)
        bps = c.ok("setBreakpoints", {"source": {"path": str(program)}, "breakpoints": [{"line": 7}]})["breakpoints"]
        assert bps[0]["verified"] is True
        assert c.ok("source", {"sourceReference": 0, "source": {"path": str(program)}})["content"] == original
        program.unlink()
        c.ok("stepIn", {"threadId": 1})
        assert c.ok("stackTrace", {"threadId": 1})["stackFrames"][0]["name"] == "double"
        reply = c.request("restart", {})
        assert not reply["success"] and "not found" in reply["message"], reply
        assert c.ok("threads")["threads"]
        program.write_text(original)
        relaunch = c.request("launch", {"program": str(program), "backend": "oracle", "stopOnEntry": True})
        assert relaunch["success"], relaunch


def test_program_file_changed_before_restart_is_reloaded(adapter, tmp_path):
    program = program_file(tmp_path)
    with adapter.client() as c:
        start(c, {"program": str(program), "backend": "oracle", "stopOnEntry": True})
        program.write_text("x = 1\ny = 2\nz = 3\n")
        c.ok("restart", {})
        c.ok("next", {"threadId": 1})
        assert c.ok("source", {"sourceReference": 0, "source": {"path": str(program)}})["content"] == "x = 1\ny = 2\nz = 3\n"
        frames = c.ok("stackTrace", {"threadId": 1})["stackFrames"]
        assert frames[0]["line"] == 2


# --------------------------------------------------------------------------- reprs


REPR_PROGRAM = """\
class Raises:
    def __repr__(self):
        raise RuntimeError("repr exploded")

class Huge:
    def __repr__(self):
        return "H" * 5_000_000

class Recursive:
    def __repr__(self):
        return repr(self)

bad = Raises()
big = Huge()
deep = Recursive()
text = "y" * 2_000_000
nested = [[[[[[[[[[1]]]]]]]]]]
done = True
"""


def test_huge_and_raising_reprs(adapter, tmp_path):
    program = tmp_path / "reprs.py"
    program.write_text(REPR_PROGRAM)
    with adapter.client() as c:
        start(c, {"program": str(program), "backend": "oracle", "stopOnEntry": True})
        for _ in range(8):
            c.ok("next", {"threadId": 1})
        frames = c.ok("stackTrace", {"threadId": 1})["stackFrames"]
        assert frames[0]["line"] == 18, frames
        top = frames[0]["id"]
        scopes = c.ok("scopes", {"frameId": top})["scopes"]
        values = {v["name"]: v["value"] for v in c.ok("variables", {"variablesReference": scopes[0]["variablesReference"]})["variables"]}
        assert set(values) >= {"bad", "big", "deep", "text", "nested"}, values
        for name in ("big", "text"):
            assert 0 < len(values[name]) <= 100_000, (name, len(values[name]))
        assert "Raises" in values["bad"] and "Recursive" in values["deep"], values
        assert values["nested"].startswith("[[") and c.ok("evaluate", {"expression": "nested[0]", "frameId": top})["result"] == values["nested"][1:-1]
        assert len(c.ok("evaluate", {"expression": "big", "frameId": top})["result"]) <= 100_000
        c.ok("continue", {"threadId": 1})
        assert c.wait_event("exited")["body"]["exitCode"] == 0
