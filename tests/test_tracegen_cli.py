"""`neural-debugger tracegen record` through a real subprocess."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"
ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "record", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_record_prints_contract_lines():
    proc = run_cli(str(PROGRAMS / "check_run.py"), "--actions", "stepIn,next,stepOut,continue", "--bp", "7,12")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0] == {"reason": "entry", "stack": [["<module>", 1]], "locals": {}}
    assert lines[1] == {"reason": "step", "stack": [["<module>", 6]], "locals": {}, "action": "stepIn"}
    assert lines[2]["action"] == "next" and lines[2]["stack"] == [["<module>", 15]]
    assert lines[3]["reason"] == "breakpoint" and lines[3]["stack"] == [["run", 7], ["<module>", 15]]
    assert lines[-1] == {"end": "exited", "body": {"exitCode": 1}}
    assert all(set(rec) in ({"reason", "stack", "locals", "action"}, {"end", "body"}) for rec in lines[1:])


def test_record_runs_on_to_the_end_with_continue():
    proc = run_cli(str(PROGRAMS / "check_run.py"), "--actions", "stepIn")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[-2]["reason"] == "exception" and lines[-2]["action"] == "continue"
    assert lines[-1]["end"] == "exited"


def test_record_bad_input_is_a_clear_error():
    proc = run_cli(str(PROGRAMS / "check_run.py"), "--actions", "jump")
    assert proc.returncode == 2 and "unknown action 'jump'" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli(str(PROGRAMS / "nope.py"))
    assert proc.returncode == 2 and "no such program file" in proc.stderr
    proc = run_cli(str(PROGRAMS / "check_run.py"), "--bp", "x")
    assert proc.returncode == 2 and "not a line number" in proc.stderr
