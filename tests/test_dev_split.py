"""The dev split (`train/eval/dev_split.py`, `eval dev`): its runs, the test seed refused, a real run with a tiny model."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model.decoding import Decoding
from train.eval.dev_split import DevPlan
from train.eval.cli import app


def test_plan_runs_every_figure_both_ways(tmp_path: Path) -> None:
    plan = DevPlan(out=tmp_path / "dev", data=tmp_path / "data", real=tmp_path / "real", extra=("--coarse-candidates", "2"))
    synth = plan.synth_command()
    assert synth is not None and synth[synth.index("--seed") + 1] == "999"
    outs = [c[c.index("--out") + 1] for c in plan.eval_commands()]
    assert [Path(o).name for o in outs] == ["next-state", "next-state-plain", "fidelity-synth", "fidelity-synth-plain", "realcode", "realcode-plain"]
    assert all(c[c.index("--decoding") + 1] == ("plain" if c[-1].endswith("-plain") else "full") for c in plan.eval_commands())
    assert all("--coarse-candidates" in c for c in plan.eval_commands())
    real = plan.eval_commands()[-1]
    assert "--free-running" in real and real[real.index("--programs") + 1] == str(tmp_path / "real")
    with pytest.raises(ValueError, match="test seed"):
        DevPlan(out=tmp_path, data=tmp_path, seed=12345)
    assert len(DevPlan(out=tmp_path, data=tmp_path, decodings=(Decoding.PLAIN,)).eval_commands()) == 2


def test_dry_run_prints_the_runs_and_refuses_the_test_seed(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["dev", "--dry-run", "--data", str(tmp_path), "--decoding", "plain"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "tracegen synth" in lines[0] and len(lines) == 3 and all("--decoding plain" in line for line in lines[1:])
    bad = CliRunner().invoke(app, ["dev", "--seed", "12345", "--dry-run"])
    assert bad.exit_code == 2 and "test seed" in bad.output


@pytest.mark.slow  # seven subprocesses, each loading the model (about 2 minutes on a busy machine)
def test_dev_command_runs_and_tabulates(tmp_path: Path, tiny_checkpoint: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.py").write_text("x = 1.5\ny = [x, None]\n")
    out = tmp_path / "dev"
    result = CliRunner().invoke(app, ["dev", "--out", str(out), "--data", str(tmp_path / "data"), "--model", str(tiny_checkpoint), "--count", "4",
                                      "--limit", "2", "--fidelity-programs", "1", "--real", str(real),
                                      "--eval-options", "--max-state-tokens 8"])  # fmt: skip
    assert result.exit_code == 0, result.output
    for name in ("next-state", "next-state-plain", "fidelity-synth", "fidelity-synth-plain", "realcode", "realcode-plain"):
        summary = json.loads((out / name / "summary.json").read_text())
        assert summary["decoding"] == ("plain" if name.endswith("plain") else "full")
    text = (out / "DEV.md").read_text()
    assert "| real code, dev slice (free-running) |" in text and "seed 999" in text
