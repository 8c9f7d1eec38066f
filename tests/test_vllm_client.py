"""The vLLM server client against a stand-in HTTP server on 127.0.0.1 that checks the exact request.

The stand-in answers like vLLM 0.33's ``/v1/completions`` (token ids, log-probs, usage with cached
prompt tokens). A live test runs only when NEURAL_DEBUGGER_VLLM_URL points at a real server.
"""
from __future__ import annotations

import importlib.util
import json
import os
import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from model.backends.base import Backend, BackendError
from model.backends.draws import draw_seed
from model.backends.vllm_server import VLLMServerBackend
from model.decode.constraints import RegexConstraint
from tests.local_http import LocalHTTPServer

STOP = 7


def vllm_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A realistic vLLM completion answer: three tokens then the stop token (kept in token_ids, as vLLM does)."""
    ids = [101, 102, 103, STOP]
    return {
        "id": "cmpl-0f3c", "object": "text_completion", "created": 1760000000, "model": body["model"],
        "choices": [{
            "index": 0, "text": "12 {}", "token_ids": ids, "prompt_token_ids": body["prompt"],
            "logprobs": {"text_offset": [0, 2, 3, 5], "token_logprobs": [-0.1, -0.2, -0.3, -0.05],
                         "tokens": ["12", " ", "{}", "<|state_end|>"],
                         "top_logprobs": [{"12": -0.1}, {" ": -0.2}, {"{}": -0.3}, {"<|state_end|>": -0.05}]},
            "finish_reason": "stop", "stop_reason": STOP, "prompt_logprobs": None,
        }],
        "usage": {"prompt_tokens": len(body["prompt"]), "total_tokens": len(body["prompt"]) + 4, "completion_tokens": 4,
                  "prompt_tokens_details": {"cached_tokens": 16}},
    }


class StandIn:
    """A real HTTP server in a thread; `mode` picks how it answers; `requests` records bodies."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.mode = "ok"
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _reply(self, status: int, payload: bytes, ctype: str = "application/json") -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

            def do_GET(self) -> None:  # noqa: N802
                stand_in.requests.append(("GET", self.path, None))
                if self.path == "/v1/models":
                    self._reply(200, json.dumps({"object": "list", "data": [{"id": "neural-debugger", "object": "model"}]}).encode())
                else:
                    self._reply(404, b'{"detail": "Not Found"}')

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                body = json.loads(raw)
                stand_in.requests.append(("POST", self.path, body))
                if stand_in.mode == "garbage":
                    self._reply(200, b"<html>proxy error</html>", "text/html")
                elif stand_in.mode == "error":
                    self._reply(400, json.dumps({"error": {"message": "This model's maximum context length is 2048 tokens", "type": "BadRequestError", "code": 400}}).encode())
                elif stand_in.mode == "slow":
                    time.sleep(2)
                    self._reply(200, json.dumps(vllm_answer(body)).encode())
                elif stand_in.mode == "no_ids":
                    answer = vllm_answer(body)
                    del answer["choices"][0]["token_ids"]
                    self._reply(200, json.dumps(answer).encode())
                else:
                    self._reply(200, json.dumps(vllm_answer(body)).encode())

        self.http = LocalHTTPServer(Handler)
        self.url = self.http.url

    def close(self) -> None:
        self.http.close()


@pytest.fixture()
def stand_in() -> Iterator[StandIn]:
    server = StandIn()
    yield server
    server.close()


def test_request_body_is_exactly_what_vllm_expects(stand_in: StandIn) -> None:
    client = VLLMServerBackend(stand_in.url + "/v1/", model="nd")
    assert isinstance(client, Backend)
    prompt = list(range(20, 60))
    gen = client.generate(prompt, max_tokens=64, temperature=0.0, stop_ids=[STOP], constraint=RegexConstraint(r"(12|13) \{\}"))
    method, path, body = stand_in.requests[-1]
    assert (method, path) == ("POST", "/v1/completions")
    assert body == {
        "model": "nd", "prompt": prompt, "max_tokens": 64, "temperature": 0.0, "logprobs": 1,
        "stop_token_ids": [STOP], "return_token_ids": True, "skip_special_tokens": False,
        "spaces_between_special_tokens": False, "structured_outputs": {"regex": r"(12|13) \{\}"},
    }
    assert not any(key.startswith("guided_") for key in body)
    assert gen.token_ids == [101, 102, 103] and gen.stop_token == STOP
    assert gen.logprobs == [-0.1, -0.2, -0.3]
    assert gen.text == "12 {}" and gen.finish_reason == "stop"
    assert gen.prompt_tokens == 40 and gen.prefilled == 40 - 16


def test_unconstrained_sampling_sends_temperature_and_no_constraint(stand_in: StandIn) -> None:
    client = VLLMServerBackend(stand_in.url, seed=3)
    client.generate([1, 2, 3], max_tokens=5, temperature=0.7, stop_ids=[])
    assert stand_in.requests[0][:2] == ("GET", "/v1/models")  # model name discovered once
    body = stand_in.requests[-1][2]
    assert body["model"] == "neural-debugger" and body["temperature"] == 0.7 and body["seed"] == draw_seed(3, [1, 2, 3], 0)
    assert "structured_outputs" not in body and body["max_tokens"] == 5
    client.generate([1, 2, 3], max_tokens=5, temperature=0.7, stop_ids=[])
    assert [r[0] for r in stand_in.requests] == ["GET", "POST", "POST"]
    assert stand_in.requests[-1][2]["seed"] == draw_seed(3, [1, 2, 3], 1)  # the second sample of the prompt draws anew
    client.generate([1, 2, 3], max_tokens=5, temperature=0.0, stop_ids=[])
    assert stand_in.requests[-1][2]["seed"] == 3  # a greedy answer: the backend's seed, and the prompt's draws start over
    client.generate([1, 2, 3], max_tokens=5, temperature=0.7, stop_ids=[])
    assert stand_in.requests[-1][2]["seed"] == draw_seed(3, [1, 2, 3], 0)


def test_score_asks_prompt_logprobs_and_an_answer_without_them_is_a_clear_error(stand_in: StandIn) -> None:
    client = VLLMServerBackend(stand_in.url, model="nd")
    with pytest.raises(BackendError, match="no prompt log-probabilities"):
        client.score([20, 21], [30, 31])  # the stand-in's canned answer has "prompt_logprobs": None
    assert stand_in.requests[-1][2] == {"model": "nd", "prompt": [20, 21, 30, 31], "max_tokens": 1, "temperature": 0.0,
                                        "prompt_logprobs": 0, "skip_special_tokens": False}  # fmt: skip
    assert client.score([20, 21], []) == []


def test_garbage_answer_is_a_clear_error(stand_in: StandIn) -> None:
    stand_in.mode = "garbage"
    with pytest.raises(BackendError, match="not JSON"):
        VLLMServerBackend(stand_in.url, model="nd").generate([1], max_tokens=2, temperature=0.0, stop_ids=[])


def test_http_error_carries_the_server_message(stand_in: StandIn) -> None:
    stand_in.mode = "error"
    with pytest.raises(BackendError, match="HTTP 400.*maximum context length"):
        VLLMServerBackend(stand_in.url, model="nd").generate([1], max_tokens=2, temperature=0.0, stop_ids=[])


def test_missing_token_ids_is_a_clear_error(stand_in: StandIn) -> None:
    stand_in.mode = "no_ids"
    with pytest.raises(BackendError, match="return_token_ids"):
        VLLMServerBackend(stand_in.url, model="nd").generate([1], max_tokens=2, temperature=0.0, stop_ids=[])


def test_timeout_is_a_clear_error(stand_in: StandIn) -> None:
    stand_in.mode = "slow"
    with pytest.raises(BackendError, match="does not answer"):
        VLLMServerBackend(stand_in.url, model="nd", timeout=0.3).generate([1], max_tokens=2, temperature=0.0, stop_ids=[])


def test_closed_port_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(BackendError, match="does not answer"):
        VLLMServerBackend(f"http://127.0.0.1:{port}", model="nd", timeout=2, retries=1).generate([1], max_tokens=2, temperature=0.0, stop_ids=[])


def test_bad_url_and_empty_prompt() -> None:
    with pytest.raises(BackendError, match="http://"):
        VLLMServerBackend("localhost:8000")
    with pytest.raises(BackendError, match="empty prompt"):
        VLLMServerBackend("http://127.0.0.1:9", model="nd").generate([], max_tokens=2, temperature=0.0, stop_ids=[])


@pytest.mark.skipif(not os.environ.get("NEURAL_DEBUGGER_VLLM_URL"), reason="set NEURAL_DEBUGGER_VLLM_URL to a running `vllm serve`")
def test_live_server() -> None:
    client = VLLMServerBackend(os.environ["NEURAL_DEBUGGER_VLLM_URL"], timeout=120)
    constraint = RegexConstraint(r"[0-9]{1,3}")
    gen = client.generate([1, 2, 3, 4], max_tokens=8, temperature=0.0, stop_ids=[], constraint=constraint)
    assert gen.token_ids and len(gen.logprobs) == len(gen.token_ids)
    assert constraint.allows(gen.text)


# ---- serve-model (the command that starts `vllm serve`) -----------------------------------------

def _cli(*args: str) -> "subprocess.CompletedProcess[str]":
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "neural_debugger_cli", "serve-model", *args], capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)


def test_serve_model_dry_run_prints_the_vllm_command(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 4096}))
    result = _cli(str(tmp_path), "--dry-run", "--port", "9001", "--served-model-name", "nd")
    assert result.returncode == 0, result.stderr
    words = result.stdout.split()
    i = words.index("serve")
    assert words[i + 1] == str(tmp_path)
    flags = " ".join(words[i + 2 :])
    for expected in ["--served-model-name nd", "--dtype bfloat16", "--generation-config vllm", "--max-model-len 4096", "--port 9001", "--enable-prompt-tokens-details"]:
        assert expected in flags
    assert "--no-enable-prefix-caching" not in flags  # prefix caching stays on (vLLM V1 default)


def test_serve_model_explains_missing_vllm_and_bad_folders(tmp_path: Path) -> None:
    bad = _cli(str(tmp_path / "nowhere"))
    assert bad.returncode == 2 and "not a checkpoint folder" in bad.stderr
    (tmp_path / "config.json").write_text("{}")
    if importlib.util.find_spec("vllm") is None:
        result = _cli(str(tmp_path))
        assert result.returncode == 1 and "pip install '.[gpu]'" in result.stderr and "Traceback" not in result.stderr
