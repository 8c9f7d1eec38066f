"""Security properties, checked on the real thing: the TCP listener's address, a neural session that
must not run the program, `evaluate` that must not evaluate, and tracegen's contained child.

Every "nothing happened" check has a positive control that shows the same probe does fire when the
program really runs (the oracle backend runs it in tracegen's sandbox), so the test can fail.
"""
from __future__ import annotations

import ast
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.dap_client import REPO, DapTestClient, TcpAdapter, adapter_command



# --------------------------------------------------------------------------- helpers


def listening_addresses(port: int) -> set[str]:
    """Local IPv4/IPv6 addresses with a socket in LISTEN state on `port` (from /proc/net/tcp*)."""
    found: set[str] = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(addr_hex)
            if width == 8:
                found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
            else:
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                found.add(socket.inet_ntop(socket.AF_INET6, words))
    return found


class ConnectionProbe:
    """A local TCP listener that counts connections (a program that opens a socket shows up here)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


def side_effect_program(folder: Path, marker: Path, port: int) -> Path:
    """A program that, if executed, creates `marker`, connects to 127.0.0.1:`port` and runs `touch`."""
    path = folder / "effects.py"
    path.write_text(
        "import os, socket\n"
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
        "except OSError:\n"
        "    pass\n"
        "total = 0\n"
        "for i in range(3):\n"
        "    total += i\n"
        "print(total)\n"
    )
    return path


def run_session(client: DapTestClient, launch: dict, steps: int) -> list[dict]:
    """Initialize, launch, step `steps` times (stepIn), inspect each stop, continue, disconnect."""
    client.ok("initialize", {"adapterID": "neural"})
    reply = client.request("launch", launch, timeout=120)
    assert reply["success"], reply
    client.ok("configurationDone", timeout=120)
    answers = []
    for _ in range(steps):
        reply = client.request("stepIn", {"threadId": 1}, timeout=120)
        answers.append(reply)
        if not reply["success"]:
            break
        trace = client.request("stackTrace", {"threadId": 1})
        answers.append(trace)
        if trace["success"] and trace["body"]["stackFrames"]:
            scopes = client.ok("scopes", {"frameId": trace["body"]["stackFrames"][0]["id"]})
            client.ok("variables", {"variablesReference": scopes["scopes"][0]["variablesReference"]})
    answers.append(client.request("continue", {"threadId": 1}, timeout=120))
    client.request("disconnect", {})
    return answers


# --------------------------------------------------------------------------- the TCP listener


def test_tcp_server_binds_loopback_by_default():
    with TcpAdapter() as adapter:
        assert listening_addresses(adapter.port) == {"127.0.0.1"}
        with adapter.client() as c:
            assert c.ok("threads")["threads"]


def test_tcp_server_binds_the_address_given():
    with TcpAdapter("--host", "0.0.0.0") as adapter:
        assert listening_addresses(adapter.port) == {"0.0.0.0"}


# --------------------------------------------------------------------------- neural mode runs nothing


def _neural_launch(program: Path, checkpoint: Path) -> dict:
    return {"program": str(program), "backend": "transformers", "model": str(checkpoint), "stopOnEntry": True}


@pytest.mark.slow
def test_neural_session_never_executes_the_program(tmp_path, tiny_checkpoint):
    """A full session (stdio, tiny real model): no marker file, no connection, no output of the program."""
    marker = tmp_path / "executed.txt"
    probe = ConnectionProbe()
    try:
        program = side_effect_program(tmp_path, marker, probe.port)
        with DapTestClient.stdio() as client:
            answers = run_session(client, _neural_launch(program, tiny_checkpoint), steps=4)
        assert all("request_seq" in a for a in answers)
        time.sleep(0.5)
        assert not marker.exists(), "the neural session executed the program (marker file written)"
        assert probe.connections == 0, "the neural session executed the program (socket opened)"
    finally:
        probe.close()


def test_positive_control_oracle_does_execute(tmp_path):
    """The same probes fire when the program really runs (oracle backend, tracegen's sandbox)."""
    marker = tmp_path / "executed.txt"
    probe = ConnectionProbe()
    try:
        program = side_effect_program(tmp_path, marker, probe.port)
        with TcpAdapter() as adapter, adapter.client() as client:
            run_session(client, {"program": str(program), "backend": "oracle", "stopOnEntry": True}, steps=2)
        deadline = time.monotonic() + 5
        while probe.connections == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.read_text() == "ran"
        assert probe.connections >= 1
    finally:
        probe.close()


# --------------------------------------------------------------------------- evaluate never evaluates


MALICIOUS = [
    "__import__('os').system('touch {marker}')",
    "open('{marker}', 'w').write('x')",
    "[c for c in ().__class__.__base__.__subclasses__()]",
    "exec(\"open('{marker}', 'w')\")",
    "(lambda: __import__('os').system('touch {marker}'))()",
    "x; import os",
]


@pytest.fixture(scope="module")
def oracle_adapter():
    with TcpAdapter() as running:
        yield running


@pytest.mark.parametrize("template", MALICIOUS)
def test_evaluate_never_runs_code(oracle_adapter, tmp_path, template):
    program = tmp_path / "p.py"
    program.write_text("x = 1\ny = [x, 2]\nz = {'k': y}\n")
    marker = tmp_path / "evaluated"
    with oracle_adapter.client() as c:
        c.ok("initialize", {"adapterID": "neural"})
        c.ok("launch", {"program": str(program), "backend": "oracle", "stopOnEntry": True})
        c.ok("configurationDone")
        c.ok("next", {"threadId": 1})
        c.ok("next", {"threadId": 1})
        top = c.ok("stackTrace", {"threadId": 1})["stackFrames"][0]["id"]
        for context in ("repl", "watch", "hover"):
            reply = c.request("evaluate", {"expression": template.format(marker=marker), "frameId": top, "context": context})
            assert not reply["success"], reply
            assert "never runs code" in reply["message"] or reply["message"].startswith("not a valid expression"), reply["message"]
        assert c.ok("evaluate", {"expression": "y[0]", "frameId": top})["result"] == "1"
    assert not marker.exists()


BUILTIN_OBJECTS = {"builtins", "__builtins__"}


def _eval_calls(path: Path) -> list[str]:
    """Calls of the builtins `eval`/`exec`/`__import__` in a module, as 'file:line name' (`compile`
    alone runs nothing): by bare name or through ``builtins``; a method that happens to be called
    ``eval`` (``torch_model.eval()``) is not one."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            name = func.id
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in BUILTIN_OBJECTS:
            name = func.attr
        else:
            continue
        if name in {"eval", "exec", "__import__"}:
            found.append(f"{path.name}:{node.lineno} {name}")
    return found


@pytest.mark.parametrize("package", ["adapter", "model"])
def test_no_eval_or_exec_in(package):
    """The adapter and the model (every wing and backend) never run code: no eval/exec/__import__."""
    modules = sorted((REPO / package).rglob("*.py"))
    assert len(modules) > 5, f"{package}/ not found"
    calls = [hit for module in modules for hit in _eval_calls(module)]
    assert calls == []


def test_eval_scanner_finds_eval(tmp_path):
    """The scanner above is not blind: it reports the calls it looks for, and only those."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import builtins\nx = eval('1')\nbuiltins.exec('y = 2')\n__import__('os')\n"
        "net = load()\nnet.eval()\n__builtins__.eval('3')\n"
    )
    assert _eval_calls(sample) == ["sample.py:2 eval", "sample.py:3 exec", "sample.py:4 __import__", "sample.py:7 eval"]


# --------------------------------------------------------------------------- tracegen's contained child


def _record_cli(program: Path, *extra: str, timeout: float = 120) -> tuple[list[dict], float, str]:
    start = time.monotonic()
    done = subprocess.run(
        [*adapter_command()[:-1], "tracegen", "record", str(program), "--actions", "continue", *extra],
        capture_output=True, text=True, timeout=timeout, cwd=REPO,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return lines, time.monotonic() - start, done.stderr


def _processes_running(text: str) -> list[str]:
    """Command lines of live processes that mention `text` (leftover children)."""
    hits = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            hits.append(cmdline)
    return hits


def test_fork_bomb_is_stopped_and_reported(tmp_path):
    program = tmp_path / "bomb_fork.py"
    program.write_text((REPO / "tests" / "programs" / "fork_bomb.py").read_text())
    lines, seconds, _ = _record_cli(program)
    stops = [line for line in lines if "reason" in line]
    assert stops and stops[-1]["reason"] == "exception", lines
    assert lines[-1]["end"] == "exited" and lines[-1]["body"]["exitCode"] == 1
    assert _processes_running(str(program)) == []


def test_ten_gigabytes_are_refused(tmp_path):
    program = tmp_path / "ten_gb.py"
    program.write_text("blob = bytearray(10 * 1024 ** 3)\nprint(len(blob))\n")
    lines, seconds, _ = _record_cli(program)
    assert lines[-1]["end"] == "exited", lines
    assert lines[-1]["body"]["exitCode"] != 0
    assert _processes_running(str(program)) == []


def test_endless_loop_is_stopped_as_exit_never():
    from protocol.debugger import Ending
    from tracegen.fast import record_program, replay_to_end
    from tracegen.sandbox import Limits

    trace = record_program("n = 0\nwhile True:\n    n += 1\n", limits=Limits(cpu_seconds=3, wall_seconds=3.0))
    assert trace.end.ending is Ending.NEVER
    end = replay_to_end(trace, [])[-1]
    assert end.finished and end.ending is Ending.NEVER


@pytest.mark.slow
def test_endless_loop_through_the_adapter_says_it_was_stopped(tmp_path):
    program = tmp_path / "spin.py"
    program.write_text("n = 0\nwhile True:\n    n += 1\n")
    with TcpAdapter() as adapter, adapter.client(timeout=90) as c:
        c.ok("initialize", {"adapterID": "neural"})
        c.ok("launch", {"program": str(program), "backend": "oracle", "stopOnEntry": True})
        c.ok("configurationDone", timeout=90)
        c.ok("continue", {"threadId": 1}, timeout=90)
        exited = c.wait_event("exited")
        outputs = " ".join(e["body"]["output"] for e in c.drain("output"))
    assert exited["body"]["exitCode"] == 124, (exited, outputs)  # adapter.handlers.LIMIT_EXIT_CODE
    assert "exit_never" in outputs and "limit" in outputs.lower(), outputs


def test_ctypes_fork_does_not_escape_the_sandbox(tmp_path):
    """A program that forks through libc directly (bypassing os.fork) once: the child must not outlive the run."""
    marker = tmp_path / "escaped"
    program = tmp_path / "cfork.py"
    program.write_text(
        "import ctypes, os, time\n"
        "libc = ctypes.CDLL(None)\n"
        "pid = libc.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(2)\n"
        f"    open({str(marker)!r}, 'w').write('alive')\n"
        "    os._exit(0)\n"
        "done = pid\n"
    )
    _record_cli(program)
    time.sleep(3)
    assert not marker.exists(), "a child forked through libc outlived the traced run"
