"""train.eval.spread: a ranked figure's runs under several sampling seeds, their mean and range, in RESULTS.md."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from train.eval.cli import app
from train.eval.plots import make_all
from train.eval.spread import SpreadError, collect, seed_run, spread_of


def _crux(passed: int, seed: int | None, n: int = 800, model: str = "checkpoints/default") -> dict:
    summary = {"pass@1": round(100 * passed / n, 2), "n": n, "passed": passed, "mode": "input", "via": "inv_step_call", "model": model}
    if seed is not None:
        summary.update(sample_seed=seed, seed_per_draw=True)
    return summary


def _next_state(right: int, seed: int, stops: int = 300) -> dict:
    return {"overall": {"stops": stops, "location": 0.9, "locals": 0.7, "state": right / stops}, "model": "checkpoints/default",
            "sample_seed": seed, "seed_per_draw": True}  # fmt: skip


def _write(folder: Path, summary: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_mean_sd_and_range_of_three_seeds() -> None:
    spread = spread_of("cruxeval-input", [_crux(160, 2), _crux(150, 0), _crux(155, 1)])
    assert [r.seed for r in spread.runs] == [0, 1, 2]
    assert spread.mean_right == 155 and math.isclose(spread.mean, 155 / 8)
    assert math.isclose(spread.sd, 5 / 8)  # the sample sd of 150, 155, 160 in percent of 800
    record = spread.as_dict()
    assert (record["min"], record["max"]) == (18.75, 20.0) and len(record["runs"]) == 3


def test_next_state_counts_exact_states_and_a_run_without_a_seed_is_kept() -> None:
    assert seed_run(_next_state(179, 1)).right == 179
    old = _crux(160, None)
    spread = spread_of("cruxeval-input", [old, _crux(150, 0)])
    assert [r.seed for r in spread.runs] == [0, None] and not spread.runs[1].per_draw
    assert spread_of("one", [_crux(150, 0)]).sd == 0.0


@pytest.mark.parametrize("runs, message", [
    ([_crux(150, 0), _crux(40, 1, n=100)], "different numbers of questions"),
    ([_crux(150, 0), _crux(150, 1, model="runs/other")], "different models"),
    ([_crux(150, 0), _crux(151, 0)], "repeat a seed"),
    ([{"something": 1}], "not a CruxEval or next-state summary"),
    ([], "no runs"),
])  # fmt: skip
def test_runs_that_cannot_be_compared_are_refused(runs: list[dict], message: str) -> None:
    with pytest.raises(SpreadError, match=message):
        spread_of("cruxeval-input", runs)


def test_results_md_shows_the_spread_of_figures_with_seed_runs(tmp_path: Path) -> None:
    _write(tmp_path / "cruxeval-input", _crux(160, 0))
    _write(tmp_path / "seeds" / "cruxeval-input-s1", _crux(150, 1))
    _write(tmp_path / "seeds" / "cruxeval-input-s2", _crux(152, 2))
    _write(tmp_path / "next-state", _next_state(180, 0))  # no other seed: no row
    _write(tmp_path / "seeds" / "unrelated", _crux(1, 5))  # not <figure>-s<seed>: ignored
    spreads = collect(tmp_path)
    assert [s.figure for s in spreads] == ["cruxeval-input"] and spreads[0].mean_right == 154
    make_all(tmp_path)
    text = (tmp_path / "RESULTS.md").read_text()
    assert "## Spread over sampling seeds" in text
    assert "| CruxEval-I (inv_step_call) | 0: 160/800, 1: 150/800, 2: 152/800 | **19.25** (154.0/800) |" in text


def test_results_without_seed_runs_have_no_spread_section(tmp_path: Path) -> None:
    _write(tmp_path / "cruxeval-input", _crux(160, 0))
    make_all(tmp_path)
    assert "Spread over sampling seeds" not in (tmp_path / "RESULTS.md").read_text()


def test_cli_prints_and_writes_the_spread_and_refuses_bad_runs(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", _next_state(177, 0))
    b = _write(tmp_path / "b", _next_state(183, 1))
    runner = CliRunner()
    result = runner.invoke(app, ["spread", str(a), str(b), "--out", str(tmp_path / "spread.json")])
    assert result.exit_code == 0, result.output
    assert "mean 60.00% (180.0/300)" in result.output and "seed 1: 183/300" in result.output
    assert json.loads((tmp_path / "spread.json").read_text())["mean"] == 60.0
    missing = runner.invoke(app, ["spread", str(a), str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "cannot read" in missing.output
    c = _write(tmp_path / "c", _next_state(100, 1, stops=200))
    mixed = runner.invoke(app, ["spread", str(a), str(c)])
    assert mixed.exit_code == 2 and "different numbers of questions" in mixed.output
    _write(tmp_path / "results" / "cruxeval-input", _crux(160, 0))
    _write(tmp_path / "results" / "seeds" / "cruxeval-input-s1", {"broken": True})
    plots = runner.invoke(app, ["plots", "--results", str(tmp_path / "results")])
    assert plots.exit_code == 2 and "not a CruxEval or next-state summary" in plots.output
