"""Microsoft's DebugClient (@vscode/debugadapter-testsupport, Node) drives `neural-debugger dap` on stdio.

The scenarios live in tests/js/: adapter.test.js (entry stop, breakpoint hit, next, stepIn, stepOut,
stepBack, variables, evaluate, continue to the end, disconnect) and beyond.test.js (Break on Value
Change, the History scope and ``?history``, the program edited between two requests; one test on any
program named by ``NEURAL_BEYOND_TARGET``, its own by default). They run
against the oracle backend, so every expected value is exact; the edit scenario needs a model and
gets the tiny random checkpoint. `make js-deps` installs the Node test package.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.dap_client import adapter_command

JS_DIR = Path(__file__).resolve().parent / "js"


def run_scenarios(test_file: str, passed: int, **env: str) -> None:
    """Run one tests/js file under `node --test`; every scenario must pass, `passed` of them in all."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the DebugClient tests need Node 18+")
    pytest.importorskip("model.oracle", reason="the oracle backend (model/oracle.py) is not in this checkout yet")
    if not (JS_DIR / "node_modules" / "@vscode" / "debugadapter-testsupport").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("the DebugClient package is not installed and npm is missing: run `make js-deps`")
        installed = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=JS_DIR,
                                   capture_output=True, text=True, timeout=300)
        assert installed.returncode == 0, f"npm ci in tests/js failed (run `make js-deps`):\n{installed.stderr[-2000:]}"
    command = adapter_command()
    if len(command) != 2:  # DebugClient runs "<runtime> <one argument>"
        pytest.fail(f"the neural-debugger entry point is not installed next to {command[0]}: run `make setup`")
    # each wait may take a while on a busy machine (starting the adapter and recording the run)
    env = {"NEURAL_TIMEOUT_MS": "90000", **os.environ, "NEURAL_DEBUGGER_CMD": command[0], "NEURAL_BACKEND": "oracle", **env}
    result = subprocess.run([node, "--test", str(JS_DIR / test_file)], cwd=JS_DIR, env=env,
                            capture_output=True, text=True, timeout=480)
    summary = [line for line in result.stdout.splitlines() if line.startswith(("ok ", "not ok ", "# pass", "# fail", "# skip"))]
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert f"# pass {passed}" in summary and "# fail 0" in summary and "# skipped 0" in summary, summary


def test_debugclient_scenarios() -> None:
    run_scenarios("adapter.test.js", passed=4)


def test_debugclient_beyond_a_real_debugger(tiny_checkpoint: Path) -> None:
    run_scenarios("beyond.test.js", passed=6, NEURAL_MODEL=str(tiny_checkpoint))


def test_debugclient_continue_arrives_with_the_shipped_model() -> None:
    """Continue from the entry to a breakpoint inside a called function, over the shipped model (tests/js/model_continue.test.js):
    it arrives since a step must show the names its line certainly binds (`model.static.certain_bindings`: `out = []`)
    and a Step Into from `out.append(check(it))` enters check() (`model.static.first_call`);
    $NEURAL_MODEL: another checkpoint (e.g. a candidate) instead of checkpoints/default."""
    from model.paths import DEFAULT_CHECKPOINT

    checkpoint = Path(os.environ.get("NEURAL_MODEL") or DEFAULT_CHECKPOINT)
    if not (checkpoint / "config.json").is_file():
        pytest.skip(f"no model in {checkpoint}")
    run_scenarios("model_continue.test.js", passed=1, NEURAL_MODEL=str(checkpoint.resolve()))
