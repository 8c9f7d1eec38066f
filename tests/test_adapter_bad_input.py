"""The adapter over real sockets and stdio: bad input never crashes or hangs it, and the session goes on."""
from __future__ import annotations

import http.server
import socket
import threading
from pathlib import Path

import pytest

from tests.dap_client import DapTestClient, TcpAdapter


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


@pytest.fixture
def client(adapter):
    c = adapter.client()
    c.ok("initialize", {"adapterID": "neural", "linesStartAt1": True, "columnsStartAt1": True})
    yield c
    c.close()


@pytest.fixture
def good_program(tmp_path: Path) -> Path:
    path = tmp_path / "good.py"
    path.write_text("x = 1\n\n# comment\ny = x + 1\n")
    return path


def test_initialize_advertises_capabilities(adapter):
    with adapter.client() as c:
        caps = c.ok("initialize", {"adapterID": "neural"})
    for name in ["supportsConfigurationDoneRequest", "supportsStepBack", "supportsSetVariable", "supportsEvaluateForHovers",
                 "supportsRestartRequest", "supportsTerminateRequest", "supportsDelayedStackTraceLoading"]:
        assert caps[name] is True, name
    assert [f["filter"] for f in caps["exceptionBreakpointFilters"]] == ["uncaught"]


def test_requests_before_launch_get_clear_errors(client):
    for command, args in [("next", {"threadId": 1}), ("stackTrace", {"threadId": 1}), ("stepBack", {"threadId": 1}),
                          ("evaluate", {"expression": "x"}), ("configurationDone", None)]:
        reply = client.request(command, args)
        assert not reply["success"]
        assert "launch" in reply["message"], reply
    assert client.ok("threads")["threads"] == [{"id": 1, "name": "MainThread"}]


def test_unknown_command_then_session_goes_on(client):
    reply = client.request("frobnicate", {"a": 1})
    assert not reply["success"] and "frobnicate" in reply["message"]
    assert client.ok("threads")["threads"]


def test_malformed_frames_are_reported_and_skipped(client):
    client.send_raw(b"Content-Length: 5\r\n\r\nhello")
    assert "malformed" in client.wait_event("output")["body"]["output"]
    client.send_raw(b"Content-Lenth: 3\r\n\r\nabc")
    client.send_raw(b"Content-Length: 2\r\n\r\n[]")
    client.send_raw(b'Content-Length: 14\r\n\r\n{"type": "x"}\n')
    assert client.ok("threads")["threads"]
    bad = client.request("stackTrace", {"threadId": "not a number"})
    assert not bad["success"]


def test_missing_program(client, tmp_path):
    reply = client.request("launch", {"program": str(tmp_path / "nope.py"), "backend": "oracle"})
    assert not reply["success"] and "not found" in reply["message"]
    assert "not found" in client.wait_event("output")["body"]["output"]


def test_unreadable_program(client, tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"s = '\xe9t\xe9'\n")
    reply = client.request("launch", {"program": str(path), "backend": "oracle"})
    assert not reply["success"] and "not UTF-8" in reply["message"]


def test_syntax_error_names_the_line(client, tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("x = 1\nif x\n    y = 2\n")
    reply = client.request("launch", {"program": str(path), "backend": "oracle"})
    assert not reply["success"]
    assert "syntax error" in reply["message"] and "line 2" in reply["message"]
    shown = client.wait_event("output")["body"]
    assert shown["category"] == "stderr" and "line 2" in shown["output"]


def test_invalid_configuration(client, good_program):
    reply = client.request("launch", {"program": str(good_program), "backend": "gpt"})
    assert not reply["success"] and "backend" in reply["message"]
    reply = client.request("launch", {"stopOnEntry": True})
    assert not reply["success"] and "program" in reply["message"]
    reply = client.request("launch", {"program": str(good_program), "candidates": 0})
    assert not reply["success"] and "candidates" in reply["message"]
    reply = client.request("launch", {"program": str(good_program), "callCandidates": "many"})
    assert not reply["success"] and ("callCandidates" in reply["message"] or "call_candidates" in reply["message"])
    reply = client.request("launch", {"program": str(good_program), "coarseCandidates": 33})
    assert not reply["success"] and ("coarseCandidates" in reply["message"] or "coarse_candidates" in reply["message"])


def test_nonexistent_model_folder(client, good_program, tmp_path):
    reply = client.request("launch", {"program": str(good_program), "backend": "transformers", "model": str(tmp_path / "none")})
    assert not reply["success"] and "model folder not found" in reply["message"]


def test_corrupt_model_weights(client, good_program, tmp_path):
    import shutil

    from model.paths import DEFAULT_CHECKPOINT

    folder = tmp_path / "broken"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        if (Path(DEFAULT_CHECKPOINT) / name).is_file():
            shutil.copy(Path(DEFAULT_CHECKPOINT) / name, folder / name)
    (folder / "model.safetensors").write_bytes(b"\0" * 1000)
    reply = client.request("launch", {"program": str(good_program), "backend": "transformers", "model": str(folder)})
    assert not reply["success"] and "cannot load the checkpoint" in reply["message"] and "internal error" not in reply["message"]
    assert client.ok("threads")["threads"]


def test_vllm_url_that_does_not_answer(client, good_program):
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        reply = client.request("launch", {"program": str(good_program), "backend": "vllm", "vllmUrl": url, "vllmTimeout": 1})
    assert not reply["success"] and "did not answer" in reply["message"]
    assert client.ok("threads")["threads"]  # the session stays usable


def test_vllm_url_that_is_not_vllm(client, good_program):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"<html>hello</html>")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.handle_request, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        reply = client.request("launch", {"program": str(good_program), "backend": "vllm", "vllmUrl": url, "vllmTimeout": 5})
    finally:
        thread.join(5)
        server.server_close()
    assert not reply["success"] and "JSON" in reply["message"]


def test_breakpoints_verified_only_on_executable_lines(client, good_program):
    body = client.ok("setBreakpoints", {"source": {"path": str(good_program)}, "breakpoints": [{"line": n} for n in (1, 2, 3, 4, 9)]})
    assert [b["verified"] for b in body["breakpoints"]] == [True, False, False, True, False]
    assert "next executable line is 4" in body["breakpoints"][1]["message"]


def test_stdio_writes_only_frames(good_program, tmp_path):
    with DapTestClient.stdio() as c:
        c.ok("initialize", {"adapterID": "neural"})
        reply = c.request("launch", {"program": str(tmp_path / "missing.py"), "backend": "oracle"})
        assert not reply["success"]
        c.send_raw(b"garbage without header\r\n\r\n")
        assert c.ok("threads")
        c.ok("disconnect")
    assert c.errors == []  # every byte on stdout was a well-formed DAP frame
