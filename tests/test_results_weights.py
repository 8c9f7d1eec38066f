"""A summary names the weights it measured: after another model is shipped into the same folder, tables and cards set
the earlier figures apart instead of showing them as the new model's."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from train.eval import plots
from train.eval.model_card import render_card
from train.eval.results_io import measured_here, stamp, weights_id, write_results

REPO = Path(__file__).resolve().parents[1]


def _model(folder: Path, weights: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    return folder


def _summary(results: Path, name: str, model: Path, **extra) -> Path:
    (results / name).mkdir(parents=True, exist_ok=True)
    path = results / name / "summary.json"
    path.write_text(json.dumps({"model": str(model), **extra}))
    return path


def test_a_written_summary_names_its_weights_and_stays_true_until_they_change(tmp_path: Path) -> None:
    model = _model(tmp_path / "default", b"first weights")
    write_results(tmp_path / "run", {"model": str(model), "pass@1": 1.0}, [{"id": 1}], "predictions.jsonl")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["model_sha256"] == weights_id(model) and len(summary["model_sha256"]) == 12
    assert measured_here(summary)
    (model / "model.safetensors").write_bytes(b"second weights")
    assert not measured_here(summary)
    assert measured_here({"model": "vllm-served"}) and measured_here({"pass@1": 3.0})  # nothing to compare: kept


def test_stamp_ties_old_summaries_to_the_weights_before_a_ship(tmp_path: Path) -> None:
    model, other = _model(tmp_path / "default", b"stage nine"), _model(tmp_path / "other", b"x")
    results = tmp_path / "results"
    old = _summary(results, "cruxeval-output", model, **{"pass@1": 8.8, "n": 800, "passed": 70})
    seed = _summary(results / "seeds", "cruxeval-output-s1", model, **{"pass@1": 8.8, "n": 800, "passed": 70})
    elsewhere = _summary(results, "fidelity", other)
    assert stamp(results, model) == sorted([old, seed])
    assert json.loads(old.read_text())["model_sha256"] == weights_id(model)
    assert "model_sha256" not in json.loads(elsewhere.read_text())
    assert stamp(results, model) == []  # stamped once


def test_after_a_ship_the_table_and_card_list_earlier_figures_apart(tmp_path: Path) -> None:
    model = _model(tmp_path / "default", b"stage nine")
    results = tmp_path / "results"
    _summary(results, "cruxeval-output", model, **{"pass@1": 8.8, "n": 800, "passed": 70, "backend": "transformers"})
    rate = {"stops": 10, "location": 0.5, "locals": 0.4, "state": 0.3}
    _summary(results, "everyday", model, overall=rate, programs_used=24, scripts=1, seed=0, max_steps=12, free_running=True)
    stamp(results, model)
    (model / "model.safetensors").write_bytes(b"the wide model")  # shipped; only everyday is rerun
    write_results(results / "everyday", {"model": str(model), "overall": {**rate, "state": 0.6}, "programs_used": 24, "scripts": 1,
                                         "seed": 0, "max_steps": 12, "free_running": True}, [], "steps.jsonl")  # fmt: skip
    plots.make_all(results)
    table = (results / "RESULTS.md").read_text()
    assert "| everyday (24) | 10 | 50.0 | 40.0 | 60.0 |" in table
    assert "| ours (not run yet: `make results`) | - | - | - |" in table
    assert "## Not rerun yet: figures of an earlier model" in table and "| `cruxeval-output` |" in table and "8.8 (70/800)" in table
    card = render_card(model, results, "")
    assert "| CruxEval-O (step_return) | not run | | |" in card and "8.8" not in card


def test_the_stamp_command_reports_what_it_tied(tmp_path: Path) -> None:
    model = _model(tmp_path / "default", b"w")
    _summary(tmp_path / "results", "next-state", model)
    done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "eval", "stamp", "--model", str(model), "--results", str(tmp_path / "results")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 summaries tied to the weights of" in done.stdout
    missing = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "eval", "stamp", "--model", str(tmp_path / "nothing"), "--results", str(tmp_path)],
                             cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert missing.returncode == 2 and "holds no model.safetensors" in missing.stderr
