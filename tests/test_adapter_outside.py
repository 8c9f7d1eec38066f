"""What the model cannot know is said: args, cwd, and the launch warning about outside inputs, over DAP.

Real `neural-debugger dap` over TCP. The oracle backend runs the program for real, so `args` and
`cwd` must reach it; a model backend refuses `args` with a clear message; a program reading stdin,
files, the environment, the clock, randomness or using threads gets exactly one Debug Console
warning at launch naming each construct and its line (found statically, in the program and in the
user modules it imports).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from adapter.outside_inputs import find_outside
from tests.dap_client import DapTestClient, TcpAdapter


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


def _launch(client: DapTestClient, config: dict) -> dict:
    client.ok("initialize", {"adapterID": "neural"})
    return client.request("launch", config)


def _console(client: DapTestClient) -> list[str]:
    return [e["body"]["output"] for e in client.drain("output") if e["body"].get("category") == "console"]


def _locals_at_end(client: DapTestClient, stop_line: int, path: Path) -> dict[str, str]:
    client.ok("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": [{"line": stop_line}]})
    client.ok("configurationDone")
    client.wait_event("stopped")  # entry
    client.ok("continue", {"threadId": 1})
    stopped = client.wait_event("stopped")
    assert stopped["body"]["reason"] == "breakpoint"
    frame = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
    ref = client.ok("scopes", {"frameId": frame["id"]})["scopes"][0]["variablesReference"]
    return {v["name"]: v["value"] for v in client.ok("variables", {"variablesReference": ref})["variables"]}


def test_oracle_passes_args_and_honours_cwd(adapter, tmp_path: Path) -> None:
    program = tmp_path / "prog" / "args.py"
    program.parent.mkdir()
    program.write_text("import os, sys\nargv = sys.argv[1:]\nhere = os.getcwd()\ndone = 1\n")
    work = tmp_path / "work"
    work.mkdir()
    with adapter.client() as client:
        reply = _launch(client, {"program": str(program), "backend": "oracle", "stopOnEntry": True,
                                 "args": ["a", "b c"], "cwd": str(work)})
        assert reply["success"], reply
        client.wait_event("initialized")
        values = _locals_at_end(client, 4, program)
        client.ok("disconnect")
    assert values["argv"] == "['a', 'b c']"
    assert values["here"] == repr(str(work.resolve()))


def test_oracle_default_cwd_is_the_program_folder(adapter, tmp_path: Path) -> None:
    program = tmp_path / "cwd.py"
    program.write_text("import os\nhere = os.getcwd()\ndone = 1\n")
    with adapter.client() as client:
        assert _launch(client, {"program": str(program), "backend": "oracle", "stopOnEntry": True})["success"]
        client.wait_event("initialized")
        values = _locals_at_end(client, 3, program)
        client.ok("disconnect")
    assert values["here"] == repr(str(tmp_path.resolve()))


def test_model_backend_refuses_args_with_a_clear_message(adapter, tmp_path: Path, tiny_checkpoint: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text("import sys\nx = sys.argv\n")
    with adapter.client() as client:
        reply = _launch(client, {"program": str(program), "model": str(tiny_checkpoint), "args": ["--fast"]})
        assert not reply["success"]
        message = reply["message"] + " ".join(e["body"]["output"] for e in client.drain("output"))
        client.ok("disconnect")
    assert '"args"' in message and "--fast" in message and "oracle" in message


OUTSIDE = '''import os
import random
import sys
import threading
import time
from datetime import datetime

name = input("who? ")
line = sys.stdin.readline()
with open("data.txt", "w") as f:
    f.write("x")
home = os.environ.get("HOME")
user = os.getenv("USER")
t = time.time()
now = datetime.now()
roll = random.randint(1, 6)
token = os.urandom(4)
worker = threading.Thread(target=print)
'''

EXPECTED = {  # construct -> line
    "input()": 8, "sys.stdin.readline()": 9, "open()": 10, "os.environ.get()": 12, "os.getenv()": 13,
    "time.time()": 14, "datetime.datetime.now()": 15, "random.randint()": 16, "os.urandom()": 17,
    "threading.Thread()": 18,
}


def test_static_scan_names_each_construct_and_its_line() -> None:
    found = {o.construct: o.line for o in find_outside(OUTSIDE)}
    assert found == EXPECTED
    assert find_outside("def input():\n    return 1\nx = input()\n") == []  # a redefined builtin
    assert find_outside("x = [1, 2]\ny = sorted(x)\n") == []
    assert find_outside("def f(:\n") == []  # does not parse: nothing to say (the launch reports the syntax error)


@pytest.mark.parametrize("backend", ["model", "oracle"])
def test_one_launch_warning_names_every_construct(adapter, tmp_path: Path, tiny_checkpoint: Path, backend: str) -> None:
    program = tmp_path / "outside.py"
    program.write_text(OUTSIDE)
    config = {"program": str(program), "stopOnEntry": True, "cwd": str(tmp_path)}
    config |= {"backend": "oracle"} if backend == "oracle" else {"model": str(tiny_checkpoint)}
    with adapter.client() as client:
        assert _launch(client, config)["success"]
        client.wait_event("initialized")
        warnings = [t for t in _console(client) if "warning" in t]
        client.ok("configurationDone")
        client.wait_event("stopped")
        warnings += [t for t in _console(client) if "warning" in t]
        client.ok("disconnect")
    assert len(warnings) == 1, warnings
    for construct, line in EXPECTED.items():
        assert f"{construct} (line {line}:" in warnings[0], construct
    for category in ("reads stdin", "uses files", "environment", "clock", "random", "threads"):
        assert category in warnings[0]


def test_warning_covers_user_modules_and_is_absent_for_a_closed_program(adapter, tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("import time\n\ndef stamp():\n    return time.monotonic()\n")
    program = tmp_path / "main.py"
    program.write_text("import helpers\nx = helpers.stamp()\n")
    clean = tmp_path / "clean.py"
    clean.write_text("x = sorted([3, 1])\n")
    with adapter.client() as client:
        assert _launch(client, {"program": str(program), "backend": "oracle"})["success"]
        client.wait_event("initialized")
        warnings = [t for t in _console(client) if "warning" in t]
        client.ok("disconnect")
    assert len(warnings) == 1 and "time.monotonic() (helpers.py:4:" in warnings[0]
    with adapter.client() as client:
        assert _launch(client, {"program": str(clean), "backend": "oracle"})["success"]
        client.wait_event("initialized")
        assert not [t for t in _console(client) if "warning" in t]
        client.ok("disconnect")
