"""Fuzzing the DAP server with hypothesis, over TCP and stdio (real `neural-debugger dap` processes).

Properties, for random bytes, mutated frames, random JSON messages and random request sequences
against a launched session (oracle backend, so each case is fast):

* every request is answered (a response with its ``request_seq``), or the connection is closed
  cleanly (after a ``disconnect``, or when the client ends a stream left inside a frame);
* nothing hangs: every read has a timeout;
* nothing crashes: the server process is alive afterwards and serves a fresh connection;
* memory stays bounded: the server's RSS after the run is within `RSS_GROWTH_LIMIT` of its RSS
  after a warm-up.

The number of cases each property ran is printed (``-s`` shows it) and recorded in
docs/hardening.md. The default run is sized to about half a minute; the ``slow`` variants run ten
times as many cases.
"""
from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.wire import encode_message
from tests.dap_client import REPO, DapTestClient, TcpAdapter
from tests.sample_programs import CHECK_RUN_DEFS

RSS_GROWTH_LIMIT = 64 << 20  # bytes
PROBE_SEQ = 7_340_033  # the probe's seq, far from the garbage's frames (seq 1-4, mutated; a request left there is answered too)
ANSWER_TIMEOUT = 15.0  # seconds for one response
FAST = {"raw": 60, "mutated": 80, "messages": 40, "sequences": 20, "stdio": 30}
SLOW = {name: 10 * n for name, n in FAST.items()}

PROGRAM = CHECK_RUN_DEFS + """
data = {"k": [1, 2, (3, 4)], "s": "text"}
res = run([1, -1, 2])
print(res)
"""

COMMANDS = ["initialize", "launch", "attach", "configurationDone", "setBreakpoints", "setExceptionBreakpoints", "threads",
            "stackTrace", "scopes", "variables", "evaluate", "setVariable", "exceptionInfo", "source", "next", "stepIn",
            "stepOut", "continue", "pause", "stepBack", "reverseContinue", "restart", "terminate", "disconnect"]


# --------------------------------------------------------------------------- helpers


def rss_bytes(pid: int) -> int:
    """Resident set size of a process (from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


@dataclass
class Tally:
    """How many cases each property ran (printed at the end of the module)."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1


@pytest.fixture(scope="module")
def tally():
    record = Tally()
    yield record
    print("\nfuzz cases run:", ", ".join(f"{k}={v}" for k, v in sorted(record.counts.items())))


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "prog.py"
    path.write_text(PROGRAM)
    return path


@pytest.fixture(scope="module")
def server():
    with TcpAdapter() as running:
        with running.client() as warm:  # warm-up: imports and first allocations happen before the RSS baseline
            warm.ok("initialize", {"adapterID": "neural"})
        yield running
        assert running.proc.poll() is None, "the server died:\n" + "".join(running.stderr_lines[-30:])


class RawClient:
    """A TCP connection whose write side can be shut (to end a frame left open) around a DapTestClient."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.settimeout(None)
        self.client = DapTestClient(self._recv, self.sock.sendall, self._close, timeout=ANSWER_TIMEOUT)

    def _recv(self) -> bytes:
        return self.sock.recv(65536)

    def _close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def end_writes(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.client.close()


def wait_closed(client: DapTestClient, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not client.closed and time.monotonic() < deadline:
        time.sleep(0.02)
    return client.closed


def probe_after_garbage(port: int, garbage: bytes) -> bool:
    """Send garbage, a `threads` request, then end the stream: the server must close the connection.

    Returns whether the probe was answered (it may be swallowed by a frame the garbage left open,
    e.g. a long Content-Length; then only the clean close is required). Any answer must be right.
    """
    raw = RawClient(port)
    try:
        raw.client.send_raw(garbage)
        seq = raw.client.send("threads", seq=PROBE_SEQ)  # not 1: a request left in the garbage may carry seq 1 (answered as an error)
        raw.end_writes()
        assert wait_closed(raw.client, ANSWER_TIMEOUT), "the server kept a half-closed connection open"
        reply = raw.client.responses.get(seq)
        if reply is not None:
            assert reply["success"] and reply["command"] == "threads", reply
        return reply is not None
    finally:
        raw.close()


def assert_serves(port: int) -> None:
    with DapTestClient.tcp("127.0.0.1", port, timeout=ANSWER_TIMEOUT) as fresh:
        assert fresh.ok("initialize", {"adapterID": "neural"})["supportsStepBack"] is True


def run_with_budget(examples: int, strategy: st.SearchStrategy, check: Callable[[Any], None]) -> None:
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(strategy)
    def property_(case: Any) -> None:
        check(case)

    property_()


# --------------------------------------------------------------------------- strategies


json_leaf = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=16)
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                          max_leaves=10)
small_int = st.integers(-3, 12) | st.integers(-2**63, 2**63)
plausible_args = st.fixed_dictionaries({}, optional={
    "threadId": small_int, "frameId": small_int, "variablesReference": small_int, "startFrame": small_int,
    "levels": small_int, "start": small_int, "count": small_int, "expression": st.text(max_size=30),
    "name": st.text(max_size=10), "value": st.text(max_size=20), "filters": st.lists(st.text(max_size=10), max_size=3),
    "program": st.text(max_size=20), "backend": st.sampled_from(["oracle", "vllm", "transformers", "x"]),
    "source": st.fixed_dictionaries({}, optional={"path": st.text(max_size=20), "sourceReference": small_int}),
    "breakpoints": st.lists(st.fixed_dictionaries({"line": small_int}), max_size=3), "context": st.text(max_size=8),
})
request_message = st.fixed_dictionaries(
    {"seq": st.integers(1, 2**31), "type": st.just("request"), "command": st.sampled_from(COMMANDS) | st.text(max_size=12)},
    optional={"arguments": plausible_args | json_value},
)
other_message = st.dictionaries(st.sampled_from(["seq", "type", "command", "event", "body", "arguments", "x"]), json_value, max_size=5)
VALID_FRAMES = [
    encode_message({"seq": 1, "type": "request", "command": "threads"}),
    encode_message({"seq": 2, "type": "request", "command": "initialize", "arguments": {"adapterID": "neural"}}),
    encode_message({"seq": 3, "type": "request", "command": "stackTrace", "arguments": {"threadId": 1, "levels": 20}}),
    encode_message({"seq": 4, "type": "request", "command": "evaluate", "arguments": {"expression": "data['k'][2]"}}),
]
mutation = st.tuples(st.sampled_from(["flip", "insert", "delete", "truncate", "dup", "digits"]), st.integers(0, 400), st.binary(min_size=1, max_size=8))


def mutate(frame: bytes, ops: list[tuple[str, int, bytes]]) -> bytes:
    data = bytearray(frame)
    for op, pos, blob in ops:
        at = pos % (len(data) + 1)
        if op == "flip" and data:
            data[at % len(data)] ^= blob[0] or 0xFF
        elif op == "insert":
            data[at:at] = blob
        elif op == "delete":
            del data[at:at + len(blob)]
        elif op == "truncate":
            del data[at:]
        elif op == "dup":
            data += data[:at]
        elif op == "digits":  # rewrite the Content-Length value
            digits = str(int.from_bytes(blob, "big")).encode()
            start = bytes(data).find(b"Content-Length: ")
            end = bytes(data).find(b"\r\n", start)
            if start >= 0 and end > start:
                data[start + 16:end] = digits
    return bytes(data)


mutated_stream = st.lists(st.tuples(st.sampled_from(VALID_FRAMES), st.lists(mutation, min_size=1, max_size=4)), min_size=1, max_size=4)
session_step = st.tuples(st.sampled_from(COMMANDS), plausible_args | json_value)


# --------------------------------------------------------------------------- conversations


def converse(client: DapTestClient, messages: list[dict[str, Any]]) -> None:
    """Send each message; each well-formed request is answered unless a disconnect closed the connection."""
    disconnected = False
    for message in messages:
        client.send_raw(encode_message(message))
        is_request = message.get("type") == "request" and type(message.get("seq")) is int and isinstance(message.get("command"), str)
        if not is_request:
            continue
        try:
            reply = client.response(message["seq"], timeout=ANSWER_TIMEOUT)
        except TimeoutError:
            assert disconnected and client.closed, f"no answer to {message!r}"
            return
        assert reply["type"] == "response" and reply["command"] == message["command"], reply
        assert isinstance(reply["success"], bool)
        if not reply["success"]:
            assert isinstance(reply.get("message"), str) and reply["message"], reply
        if message["command"] == "disconnect" and reply["success"]:
            disconnected = True
            assert wait_closed(client, ANSWER_TIMEOUT), "disconnect did not close the connection"
            return


def launched(client: DapTestClient, program: Path) -> None:
    client.ok("initialize", {"adapterID": "neural"})
    client.ok("launch", {"program": str(program), "backend": "oracle", "stopOnEntry": True})
    client.ok("configurationDone")


# --------------------------------------------------------------------------- properties over TCP


def _tcp_checks(server: TcpAdapter, program: Path, tally: Tally, budget: dict[str, int]) -> None:
    port = server.port
    baseline = rss_bytes(server.proc.pid)

    def raw_case(garbage: bytes) -> None:
        tally.add("tcp_raw")
        if probe_after_garbage(port, garbage):
            tally.add("tcp_raw_probe_answered")

    def mutated_case(frames: list[tuple[bytes, list]]) -> None:
        tally.add("tcp_mutated")
        if probe_after_garbage(port, b"".join(mutate(frame, ops) for frame, ops in frames)):
            tally.add("tcp_mutated_probe_answered")

    def messages_case(messages: list[dict[str, Any]]) -> None:
        tally.add("tcp_messages")
        with DapTestClient.tcp("127.0.0.1", port, timeout=ANSWER_TIMEOUT) as client:
            converse(client, messages)

    def sequence_case(steps: list[tuple[str, Any]]) -> None:
        tally.add("tcp_sequences")
        with DapTestClient.tcp("127.0.0.1", port, timeout=ANSWER_TIMEOUT) as client:
            launched(client, program)
            seqs = list(range(100, 100 + len(steps)))
            converse(client, [{"seq": s, "type": "request", "command": c, "arguments": a} for s, (c, a) in zip(seqs, steps)])

    run_with_budget(budget["raw"], st.binary(max_size=300) | st.lists(st.sampled_from([b"Content-Length: ", b"\r\n", b"7", b"{", b"}", b"\xff", b"Content-Length: 99999999999999999999999\r\n\r\n"]), max_size=12).map(b"".join), raw_case)
    run_with_budget(budget["mutated"], mutated_stream, mutated_case)
    run_with_budget(budget["messages"], st.lists(request_message | other_message, min_size=1, max_size=8), messages_case)
    run_with_budget(budget["sequences"], st.lists(session_step, min_size=1, max_size=12), sequence_case)
    assert server.proc.poll() is None, "the server died:\n" + "".join(server.stderr_lines[-30:])
    assert_serves(port)
    growth = rss_bytes(server.proc.pid) - baseline
    print(f"\nserver RSS growth over the TCP fuzz: {growth / 2**20:.1f} MiB")
    assert growth < RSS_GROWTH_LIMIT, f"server RSS grew by {growth / 2**20:.1f} MiB"


def test_tcp_fuzz(server, program, tally):
    _tcp_checks(server, program, tally, FAST)


@pytest.mark.slow
def test_tcp_fuzz_long(server, program, tally):
    _tcp_checks(server, program, tally, SLOW)


# --------------------------------------------------------------------------- properties over stdio


def _stdio_checks(program: Path, tally: Tally, examples: int) -> None:
    client = DapTestClient.stdio(timeout=ANSWER_TIMEOUT)
    proc: subprocess.Popen = client.process  # type: ignore[attr-defined]
    try:
        launched(client, program)
        baseline = rss_bytes(proc.pid)
        counter = iter(range(1000, 10**9))

        def case(messages: list[dict[str, Any]]) -> None:
            tally.add("stdio_messages")
            # disconnect ends a stdio server by design: keep it for the end of the stream
            kept = [dict(m, seq=next(counter)) if m.get("type") == "request" else m for m in messages
                    if m.get("command") != "disconnect"]
            converse(client, kept)
            assert proc.poll() is None

        run_with_budget(examples, st.lists(request_message | other_message, min_size=1, max_size=6), case)
        growth = rss_bytes(proc.pid) - baseline
        print(f"\nstdio server RSS growth: {growth / 2**20:.1f} MiB")
        assert growth < RSS_GROWTH_LIMIT
        client.send_raw(b"Content-Length: 500\r\n\r\n{\"seq\": 1, ")  # end the stream inside a frame
        proc.stdin.close()
        assert proc.wait(timeout=ANSWER_TIMEOUT) == 0, proc.stderr.read().decode(errors="replace")[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        client.close()


def test_stdio_fuzz(program, tally):
    _stdio_checks(program, tally, FAST["stdio"])


@pytest.mark.slow
def test_stdio_fuzz_long(program, tally):
    _stdio_checks(program, tally, SLOW["stdio"])


def test_mutate_changes_frames():
    """The mutator is not a no-op (otherwise the mutated-frame property tests nothing)."""
    frame = VALID_FRAMES[0]
    assert mutate(frame, [("flip", 3, b"\x01")]) != frame
    assert mutate(frame, [("truncate", 10, b"x")]) == frame[:10]
    assert mutate(frame, [("digits", 0, b"\x05")]).startswith(b"Content-Length: 5\r\n")
