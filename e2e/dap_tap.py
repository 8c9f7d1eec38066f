"""Relay between VS Code and a debug adapter on stdio that logs every DAP message it carries.

Usage: ``python dap_tap.py --log FILE -- COMMAND [ARGS...]``. VS Code starts this instead of
``neural-debugger dap`` (through the extension's ``neuralDebugger.command`` setting, which points
at a one-line shell script). Bytes are copied unchanged in both directions; each complete
Content-Length frame is also appended to FILE as one JSON line ``{"dir": "in"|"out", "t": seconds,
"msg": {...}}`` ("in": VS Code to the adapter, "out": the adapter to VS Code), flushed at once so
the Playwright driver can follow the session. Stdlib only: run by path with any Python 3.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import IO

HEADER_END = b"\r\n\r\n"


class FrameSplitter:
    """Accumulates bytes of one direction and yields the JSON bodies of complete frames."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> list[object]:
        self.buffer += data
        found: list[object] = []
        while True:
            end = self.buffer.find(HEADER_END)
            if end < 0:
                return found
            length = None
            for line in self.buffer[:end].split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length" and value.strip().isdigit():
                    length = int(value.strip())
            if length is None:  # not a frame header: drop it (the adapter answers such input itself)
                self.buffer = self.buffer[end + len(HEADER_END):]
                continue
            start = end + len(HEADER_END)
            if len(self.buffer) < start + length:
                return found
            body = self.buffer[start:start + length]
            self.buffer = self.buffer[start + length:]
            try:
                found.append(json.loads(body))
            except ValueError:
                found.append({"unparsed": body.decode("utf-8", "replace")})


class TapLog:
    """The JSONL log shared by both pump threads (one lock, one line per message)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.start = time.monotonic()

    def write(self, direction: str, message: object) -> None:
        line = json.dumps({"dir": direction, "t": round(time.monotonic() - self.start, 4), "msg": message})
        with self.lock:
            self.stream.write(line + "\n")
            self.stream.flush()


def pump(read_fd: int, write_fd: int, direction: str, log: TapLog, close_after: bool) -> None:
    """Copy read_fd to write_fd until end of stream, logging each frame."""
    splitter = FrameSplitter()
    try:
        while True:
            data = os.read(read_fd, 65536)
            if not data:
                break
            # Log before forwarding: a reply can then never reach the log ahead of its request.
            for message in splitter.feed(data):
                log.write(direction, message)
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view):]
    except OSError:
        pass
    finally:
        if close_after:
            try:
                os.close(write_fd)
            except OSError:
                pass


def parse_args(argv: list[str]) -> tuple[str, list[str]]:
    """(log path, adapter command) from ``--log FILE -- COMMAND...``."""
    if len(argv) < 4 or argv[0] != "--log" or argv[2] != "--":
        raise SystemExit("usage: dap_tap.py --log FILE -- COMMAND [ARGS...]")
    return argv[1], argv[3:]


def main(argv: list[str]) -> int:
    log_path, command = parse_args(argv)
    with open(log_path, "a", encoding="utf-8") as stream:
        log = TapLog(stream)
        try:
            child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as exc:
            print(f"dap_tap: cannot start {command[0]}: {exc}", file=sys.stderr)
            return 127
        assert child.stdin is not None and child.stdout is not None
        to_adapter = threading.Thread(
            target=pump, args=(sys.stdin.fileno(), child.stdin.fileno(), "in", log, True), daemon=True)
        to_client = threading.Thread(
            target=pump, args=(child.stdout.fileno(), sys.stdout.fileno(), "out", log, False), daemon=True)
        to_adapter.start()
        to_client.start()
        code = child.wait()
        to_client.join(timeout=5)
        return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
