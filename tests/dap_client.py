"""A small DAP test client for the adapter: over a TCP socket or a `neural-debugger dap` child on stdio.

`DapTestClient` holds the connection, a reader thread that decodes frames with
`protocol.wire.FrameDecoder`, responses by request seq and events in arrival order. `request`
returns the whole response (success or not); `wait_event` pops the next event with a name, with a
timeout, so a test never hangs. `send_raw` writes arbitrary bytes (for malformed-frame tests).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from protocol.wire import FrameDecoder, FramingError, encode_message

REPO = Path(__file__).resolve().parent.parent
Message = dict[str, Any]


def adapter_command(*extra: str) -> list[str]:
    """How to start the adapter: $NEURAL_DEBUGGER_CMD, else the installed entry point, else the CLI module."""
    if os.environ.get("NEURAL_DEBUGGER_CMD"):
        return [os.environ["NEURAL_DEBUGGER_CMD"], "dap", *extra]
    script = Path(sys.executable).parent / "neural-debugger"
    if script.exists():
        return [str(script), "dap", *extra]
    return [sys.executable, str(REPO / "neural_debugger_cli.py"), "dap", *extra]


class DapTestClient:
    """A DAP client for tests; construct with `tcp(host, port)` or `stdio()`."""

    def __init__(self, read: Any, write: Any, close: Any, timeout: float = 30.0) -> None:
        self._read, self._write, self._close_fn = read, write, close
        self.timeout = timeout
        self._seq = 0
        self._cond = threading.Condition()
        self.responses: dict[int, Message] = {}
        self.events: deque[Message] = deque()
        self.all_events: list[Message] = []
        self.errors: list[FramingError] = []
        self.closed = False
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    @classmethod
    def tcp(cls, host: str, port: int, timeout: float = 30.0) -> "DapTestClient":
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.settimeout(None)
        return cls(lambda: sock.recv(65536), sock.sendall, lambda: _close_socket(sock), timeout)

    @classmethod
    def stdio(cls, *extra: str, timeout: float = 30.0, command: list[str] | None = None,
              cwd: Path | None = None) -> "DapTestClient":
        """A `neural-debugger dap` child (or `command`, e.g. another installation's) started in `cwd` (the repository)."""
        proc = subprocess.Popen(command or adapter_command(*extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=cwd or REPO)
        client = cls(lambda: os.read(proc.stdout.fileno(), 65536), lambda b: (proc.stdin.write(b), proc.stdin.flush()),
                     lambda: _close_process(proc), timeout)
        client.process = proc  # type: ignore[attr-defined]
        return client

    def _loop(self) -> None:
        decoder = FrameDecoder()
        while True:
            try:
                data = self._read()
            except OSError:
                data = b""
            items = decoder.feed(data) if data else decoder.feed_eof()
            with self._cond:
                for item in items:
                    if isinstance(item, FramingError):
                        self.errors.append(item)
                    elif item.get("type") == "response":
                        self.responses[item["request_seq"]] = item
                    elif item.get("type") == "event":
                        self.events.append(item)
                        self.all_events.append(item)
                if not data:
                    self.closed = True
                self._cond.notify_all()
            if not data:
                return

    def send(self, command: str, arguments: Any = None, *, seq: int | None = None) -> int:
        """Send a request; `seq`: this one instead of the next of the client's own (which then goes on from it)."""
        self._seq = self._seq + 1 if seq is None else seq
        message: Message = {"seq": self._seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        self._write(encode_message(message))
        return self._seq

    def send_raw(self, data: bytes) -> None:
        self._write(data)

    def response(self, seq: int, timeout: float | None = None) -> Message:
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._cond:
            while seq not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise TimeoutError(f"no response to request {seq} (closed={self.closed})")
                self._cond.wait(left)
            return self.responses.pop(seq)

    def request(self, command: str, arguments: Any = None, timeout: float | None = None) -> Message:
        return self.response(self.send(command, arguments), timeout)

    def ok(self, command: str, arguments: Any = None, timeout: float | None = None) -> Any:
        """Send a request that must succeed; its body."""
        reply = self.request(command, arguments, timeout)
        assert reply["success"], f"{command} failed: {reply.get('message')}"
        return reply.get("body")

    def wait_event(self, name: str, timeout: float | None = None) -> Message:
        """The next event called ``name`` (earlier events of other names stay queued)."""
        return self.wait_any((name,), timeout)

    def wait_any(self, names: tuple[str, ...], timeout: float | None = None) -> Message:
        """The first queued event called any of ``names`` (events of other names stay queued)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._cond:
            while True:
                for event in list(self.events):
                    if event.get("event") in names:
                        self.events.remove(event)
                        return event
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    wanted = names[0] if len(names) == 1 else " or ".join(names)
                    raise TimeoutError(f"no {wanted!r} event; got {[e.get('event') for e in self.events]}")
                self._cond.wait(left)

    def drain(self, name: str) -> list[Message]:
        """Every queued event called ``name``, removed from the queue."""
        with self._cond:
            found = [e for e in self.events if e.get("event") == name]
            for event in found:
                self.events.remove(event)
            return found

    def close(self) -> None:
        self._close_fn()
        self._thread.join(timeout=5)

    def __enter__(self) -> "DapTestClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close_socket(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def _close_process(proc: subprocess.Popen) -> None:
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()
    proc.stderr.close()


class TcpAdapter:
    """A `neural-debugger dap --port 0` child; `.port` once it is listening. Use as a context manager."""

    def __init__(self, *extra: str) -> None:
        self.proc = subprocess.Popen(adapter_command("--port", "0", *extra), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, text=True)
        self.stderr_lines: list[str] = []
        self.port = self._wait_port()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _wait_port(self) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.stderr_lines.append(line)
            if "listening on" in line:
                return int(line.rsplit(":", 1)[1])
        self.close()
        raise RuntimeError("the adapter did not start listening:\n" + "".join(self.stderr_lines))

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def client(self, timeout: float = 30.0) -> DapTestClient:
        return DapTestClient.tcp("127.0.0.1", self.port, timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()

    def __enter__(self) -> "TcpAdapter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
