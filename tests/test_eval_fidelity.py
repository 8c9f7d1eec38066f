"""Next-state fidelity: scripts and horizons, oracle = 100%, the model path, any session pair."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from protocol.compare import ComparisonSummary
from protocol.debugger import Action
from train.eval import fidelity as fd
from train.eval.cli import ModelSessions

# deterministic programs (no set or str-hash ordering in their reprs)
PROGRAMS = {
    "calls.py": "def add(a, b):\n    c = a + b\n    return c\n\ndef twice(x):\n    y = add(x, x)\n    return y\n\nr = twice(3)\nz = [r, add(r, 1)]\nprint(z)\n",
    "loop.py": "def total(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n\nt = total(6)\nu = total(t)\n",
}


@pytest.fixture()
def program_dir(tmp_path: Path) -> Path:
    for name, source in PROGRAMS.items():
        (tmp_path / name).write_text(source)
    return tmp_path


def oracle_sessions() -> ModelSessions:
    return ModelSessions(None, "oracle", vllm_url=None, max_state_tokens=64, constrained=True, threads=1)


def test_load_programs(program_dir: Path, tmp_path: Path) -> None:
    assert [p.name for p in fd.load_programs(program_dir)] == ["calls.py", "loop.py"]
    assert len(fd.load_programs(program_dir, limit=1)) == 1
    with pytest.raises(fd.ProgramsError):
        fd.load_programs(tmp_path / "nothing.txt")


def test_scripts_are_seeded_and_horizons_count_skipped_lines() -> None:
    program = fd.Program("loop.py", PROGRAMS["loop.py"])
    a = fd.make_scripts(program, random.Random(3), 3, 10)
    b = fd.make_scripts(program, random.Random(3), 3, 10)
    assert [s.actions for s in a] == [s.actions for s in b] and len(a) == 3
    for script in a:
        assert len(script.horizons) == len(script.actions) == len(script.states) - 1
        assert all(h >= 1 for h in script.horizons)
    # stepping over `t = total(6)` skips the whole call (s = 0, 7 for-line events, 6 bodies, return) and lands on line 8
    over = fd.Script(program, (), (Action.parse("next"), Action.parse("next")), (), ())
    from tracegen.fast import ReplaySession, record_program

    trace = record_program(program.source)
    replay = ReplaySession(trace)
    replay.start()
    positions = [replay.position]
    for action in over.actions:
        replay.step(action)
        positions.append(replay.position)
    skipped = [fd._line_events(trace, x, y) for x, y in zip(positions, positions[1:])]
    assert skipped == [1, 1 + 7 + 6 + 1 + 1]
    assert fd.horizon_bucket(1) == "1" and fd.horizon_bucket(4) == "3-4" and fd.horizon_bucket(40) == "17+"


def test_oracle_fidelity_is_exact(program_dir: Path) -> None:
    report = fd.evaluate(fd.load_programs(program_dir), oracle_sessions(), seed=1, scripts=3, max_steps=10, progress=False)
    summary = report.summary()
    assert summary["programs_used"] == 2 and summary["overall"]["stops"] > 10
    assert summary["overall"]["state"] == 1.0
    assert all(r["state"] == 1.0 for r in summary["by_action"].values())
    assert sum(r["stops"] for r in summary["by_horizon"].values()) == summary["overall"]["stops"]


def test_model_fidelity_counts_every_step(program_dir: Path, tiny_checkpoint: Path) -> None:
    sessions = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=12, constrained=True, threads=1)
    programs = fd.load_programs(program_dir, limit=1)
    report = fd.evaluate(programs, sessions, seed=0, scripts=1, max_steps=3, progress=False)
    expected = sum(len(s.actions) for s in fd.make_scripts(programs[0], random.Random(0), 1, 3))
    assert report.overall.stops == expected
    assert not [s for s in report.steps if "error" in s]
    assert 0.0 <= report.summary()["overall"]["state"] <= 1.0
    sessions.close()


def test_free_running_as_the_adapter_runs_coarse_actions_by_fine_steps(program_dir: Path, tiny_checkpoint: Path, tmp_path: Path) -> None:
    """`--coarse-steps auto --step-tokens N`: the adapter's coarse steps under a token budget (no time limit: reproducible)."""
    from typer.testing import CliRunner

    from train.eval.cli import app

    runs = []
    for tag in ("a", "b"):
        out = tmp_path / tag
        args = ["fidelity", "--programs", str(program_dir), "--model", str(tiny_checkpoint), "--out", str(out), "--scripts", "1",
                "--max-steps", "4", "--limit", "1", "--free-running", "--coarse-steps", "auto", "--step-tokens", "64",
                "--max-state-tokens", "16", "--no-progress"]  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        runs.append(json.loads((out / "summary.json").read_text()))
    assert runs[0]["coarse_steps"] == "auto" and runs[0]["step_tokens"] == 64
    assert runs[0]["overall"] == runs[1]["overall"]
    bad = CliRunner().invoke(app, ["fidelity", "--programs", str(program_dir), "--backend", "oracle", "--out", str(tmp_path / "c"), "--coarse-steps", "jump"])
    assert bad.exit_code != 0 and "--coarse-steps" in bad.output


def test_compare_sessions_counts_like_the_adapter() -> None:
    from model.oracle import OracleDebugger

    source = PROGRAMS["calls.py"]
    actions = [Action.parse(a) for a in ("stepIn", "stepIn", "stepIn", "stepOut", "next", "continue")]
    same = fd.compare_sessions(OracleDebugger(source), OracleDebugger(source), actions)
    assert isinstance(same, ComparisonSummary) and same.matched == same.stops == 7
    other = fd.compare_sessions(OracleDebugger(source, breakpoints=[3]), OracleDebugger(source), actions)
    assert other.matched < other.stops and other.first_divergence is not None


def test_cli_oracle_fidelity(program_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from train.eval.cli import app

    out = tmp_path / "fid"
    result = CliRunner().invoke(app, ["fidelity", "--programs", str(program_dir), "--backend", "oracle", "--out", str(out), "--scripts", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["state"] == 1.0 and summary["comparison"]["stops"] == summary["overall"]["stops"]
    assert (out / "steps.jsonl").read_text().count("\n") == summary["overall"]["stops"]
