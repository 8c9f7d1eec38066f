"""`neural-debugger demo` runs end to end and prints predicted vs real stops with a match summary."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.dap_client import adapter_command

pytest.importorskip("model.oracle", reason="the oracle backend (model/oracle.py) is not in this checkout yet")


def test_demo_with_oracle_fallback(tmp_path):
    empty = tmp_path / "no-model"
    command = adapter_command()[:-1] + ["demo", "--actions", "next,next,stepIn,stepOut,continue"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=Path(__file__).parent.parent,
                            env={"COLUMNS": "160", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "stops matched" in result.stdout
    bad = subprocess.run(command + ["--model", str(empty)], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).parent.parent)
    assert bad.returncode == 2 and "model folder not found" in bad.stdout
