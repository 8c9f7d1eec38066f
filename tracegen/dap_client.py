"""A small synchronous DAP client for a debug adapter run as a child process on stdio.

`DapClient` holds the adapter process, a reader thread that parses Content-Length frames into
JSON messages, the responses by request seq, and the events in arrival order. Requests can be
pipelined: `send` returns the request's seq at once, `response(seq)` waits for its answer with a
timeout (debugpy never answers a request it does not support). A dead adapter or a request that
gets no answer raises `DapError` with the adapter's stderr tail, never hangs. Framing is
`protocol.wire`'s.
"""
from __future__ import annotations

import os
import subprocess
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from protocol.wire import FrameDecoder, FramingError, encode_message

Message = dict[str, Any]


class DapError(RuntimeError):
    """The adapter failed: it died, did not answer in time, sent garbage, or refused a request."""


class DapTimeout(DapError):
    """Nothing (a response or an awaited event) arrived in time."""


@dataclass
class _Inbox:
    """What the reader thread received: responses by request seq, events in order, the end."""

    cond: threading.Condition = field(default_factory=threading.Condition)
    responses: dict[int, Message] = field(default_factory=dict)
    events: deque[Message] = field(default_factory=deque)
    closed: bool = False
    error: str | None = None


class DapClient:
    """A DAP client talking to an adapter child process (command) over its stdin/stdout."""

    def __init__(self, command: Sequence[str], *, env: dict[str, str] | None = None, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self._seq = 0
        self._inbox = _Inbox()
        self._stderr: deque[bytes] = deque(maxlen=50)
        try:
            self._proc = subprocess.Popen(
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
            )
        except OSError as exc:
            raise DapError(f"cannot start the debug adapter {command[0]!r}: {exc}") from exc
        self._reader = threading.Thread(target=self._read_loop, name="dap-reader", daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_stderr, name="dap-stderr", daemon=True)
        self._err_reader.start()

    # -- reader threads -------------------------------------------------------------------------
    def _read_loop(self) -> None:
        inbox = self._inbox
        error: str | None = None
        decoder = FrameDecoder()
        fd = self._proc.stdout.fileno()
        try:
            while error is None:
                data = os.read(fd, 65536)
                items = decoder.feed(data) if data else decoder.feed_eof()
                with inbox.cond:
                    for item in items:
                        if isinstance(item, FramingError):
                            error = f"unreadable DAP stream ({item})"
                        elif item.get("type") == "response":
                            inbox.responses[int(item.get("request_seq", -1))] = item
                        elif item.get("type") == "event":
                            inbox.events.append(item)
                    inbox.cond.notify_all()
                if not data:
                    break
        except OSError as exc:
            error = f"the DAP stream from the adapter broke: {exc}"
        with inbox.cond:
            inbox.closed = True
            inbox.error = error
            inbox.cond.notify_all()

    def _read_stderr(self) -> None:
        for line in iter(self._proc.stderr.readline, b""):
            self._stderr.append(line)

    # -- requests -------------------------------------------------------------------------------
    def send(self, command: str, arguments: Message | None = None) -> int:
        """Send a request without waiting; returns its seq (pass it to `response`)."""
        self._seq += 1
        message: Message = {"seq": self._seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        try:
            self._proc.stdin.write(encode_message(message))
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise DapError(f"the debug adapter is gone (sending {command!r}): {exc}{self._stderr_tail()}") from exc
        return self._seq

    def response(self, seq: int, *, timeout: float | None = None, check: bool = True) -> Message:
        """Wait for the response to request `seq`; raise DapError if it failed (check) or never came."""
        limit = self.timeout if timeout is None else timeout
        inbox = self._inbox
        with inbox.cond:
            ok = inbox.cond.wait_for(lambda: seq in inbox.responses or inbox.closed, timeout=limit)
            message = inbox.responses.pop(seq, None)
        if message is None:
            if not ok:
                raise DapTimeout(f"the debug adapter did not answer request #{seq} within {limit:.1f}s")
            raise DapError(f"the debug adapter {self._ended_how()} before answering request #{seq}{self._stderr_tail()}")
        if check and not message.get("success", False):
            raise DapError(f"request {message.get('command')!r} failed: {message.get('message') or message.get('body')}")
        return message

    def request(self, command: str, arguments: Message | None = None, *, timeout: float | None = None) -> Message:
        """Send a request and wait for its (successful) response; returns the response body."""
        return self.response(self.send(command, arguments), timeout=timeout).get("body") or {}

    # -- events ---------------------------------------------------------------------------------
    def wait_event(self, accept: Callable[[Message], bool], *, timeout: float | None = None,
                   on_other: Callable[[Message], None] | None = None) -> Message:
        """Consume events in order until one is accepted; others go to `on_other`. DapTimeout if none in time."""
        limit = self.timeout if timeout is None else timeout
        inbox = self._inbox
        with inbox.cond:
            while True:
                while inbox.events:
                    event = inbox.events.popleft()
                    if accept(event):
                        return event
                    if on_other is not None:
                        on_other(event)
                if inbox.closed:
                    raise DapError(f"the debug adapter {self._ended_how()} while waiting for an event{self._stderr_tail()}")
                if not inbox.cond.wait(timeout=limit):
                    raise DapTimeout(f"no awaited event from the debug adapter within {limit:.1f}s")

    def drain_events(self, on_event: Callable[[Message], None]) -> None:
        """Hand every event received so far to `on_event`, without waiting."""
        with self._inbox.cond:
            while self._inbox.events:
                on_event(self._inbox.events.popleft())

    # -- lifetime -------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self._proc.poll() is None and not self._inbox.closed

    def _ended_how(self) -> str:
        return f"sent an {self._inbox.error}" if self._inbox.error else "exited"

    def _stderr_tail(self) -> str:
        tail = b"".join(self._stderr).decode("utf-8", "replace").strip()
        return f"\nadapter stderr:\n{tail[-2000:]}" if tail else ""

    def close(self, *, grace: float = 2.0) -> None:
        """Stop the adapter process (and with it the debuggee) and the reader threads."""
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=grace)
        self._reader.join(timeout=grace)
        self._err_reader.join(timeout=grace)
        for stream in (self._proc.stdout, self._proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
