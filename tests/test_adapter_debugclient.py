"""Microsoft's DebugClient (@vscode/debugadapter-testsupport, Node) drives `neural-debugger dap` on stdio.

The scenarios live in tests/js/adapter.test.js (entry stop, breakpoint hit, next, stepIn, stepOut,
stepBack, variables, evaluate, continue to the end, disconnect) and run against the oracle backend,
so every expected value is exact. `make js-deps` installs the Node test package.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.dap_client import adapter_command

JS_DIR = Path(__file__).resolve().parent / "js"


def _node_and_command() -> tuple[str, list[str]]:
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
    return node, command


def test_debugclient_scenarios():
    node, command = _node_and_command()
    env = dict(os.environ, NEURAL_DEBUGGER_CMD=command[0], NEURAL_BACKEND="oracle")
    result = subprocess.run([node, "--test", str(JS_DIR / "adapter.test.js")], cwd=JS_DIR, env=env,
                            capture_output=True, text=True, timeout=240)
    summary = [line for line in result.stdout.splitlines() if line.startswith(("ok ", "not ok ", "# pass", "# fail"))]
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "# pass 4" in summary and "# fail 0" in summary, summary


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="issue #34 open: the shipped model's fine steps step over check() on line 9 and the "
                   "predicted run ends (terminated); the one-jump form does not end within its tokens. Strict: it fails "
                   "the suite once the model arrives, so the mark must then go")
def test_debugclient_continue_arrives_with_the_shipped_model():
    """Continue from the entry to a breakpoint inside a called function, over the shipped model (tests/js/model_continue.test.js)."""
    from model.paths import DEFAULT_CHECKPOINT

    if not (DEFAULT_CHECKPOINT / "config.json").is_file():
        pytest.skip("no shipped model in checkpoints/default")
    node, command = _node_and_command()
    env = dict(os.environ, NEURAL_DEBUGGER_CMD=command[0])
    result = subprocess.run([node, "--test", str(JS_DIR / "model_continue.test.js")], cwd=JS_DIR, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
