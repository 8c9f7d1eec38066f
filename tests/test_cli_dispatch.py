"""The top-level command: lazy dispatch, help, unknown commands (real subprocesses)."""
import subprocess
import sys
from pathlib import Path

EXE = Path(sys.executable).with_name("neural-debugger")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=120)


def test_help_lists_every_command():
    out = run("--help")
    assert out.returncode == 0
    for name in ("dap", "demo", "tracegen", "serve-model", "train", "eval"):
        assert f"  {name}" in out.stdout


def test_subcommand_help_exits_zero():
    out = run("tracegen", "record", "--help")
    assert out.returncode == 0, out.stderr
    assert "PROGRAM" in out.stdout.upper()


def test_unknown_command_is_a_clear_error():
    out = run("frobnicate")
    assert out.returncode == 2
    assert "unknown command 'frobnicate'" in out.stderr
