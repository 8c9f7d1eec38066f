"""train/gpu_recipe.sh end to end on the CPU: synth -> pack -> train -> a Hugging Face folder."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MICRO = {"layers": 2, "width": 128, "heads": 2, "intermediate": 256}


def _recipe(out: Path, **env: str) -> subprocess.CompletedProcess:
    full = os.environ | {"GPU_RECIPE_TINY": "1"} | env
    return subprocess.run(["bash", str(REPO / "train" / "gpu_recipe.sh"), str(out)], cwd=REPO, env=full,
                          capture_output=True, text=True, timeout=900)


def _check(out: Path, done: subprocess.CompletedProcess, steps: int) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((out / "synth").glob("shard-*.jsonl"))
    assert (out / "data" / "pack.json").is_file()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json", "metrics.jsonl"):
        assert (out / "model" / name).is_file(), name
    summary = json.loads((out / "model" / "training_summary.json").read_text())
    assert summary["steps"] == steps and summary["tokens_seen"] > 0
    assert "done in" in (out / "recipe.log").read_text()
    return summary


@pytest.mark.slow
def test_recipe_fast_variant(tmp_path):
    cfg = tmp_path / "micro.json"
    cfg.write_text(json.dumps(MICRO))
    out = tmp_path / "run"
    done = _recipe(out, MODEL_CONFIG=str(cfg), STEPS="1", COUNT="8", WORKERS="1", EVAL_STATES="1", SEQ_LEN="512")
    summary = _check(out, done, steps=1)
    assert summary["params"] < 1_000_000


@pytest.mark.slow
def test_recipe_tiny_preset(tmp_path):
    out = tmp_path / "run"
    summary = _check(out, _recipe(out, STEPS="4"), steps=4)
    assert summary["params"] > 3_000_000  # the tiny preset itself


def test_recipe_needs_an_output_folder():
    done = subprocess.run(["bash", str(REPO / "train" / "gpu_recipe.sh")], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "usage" in done.stderr


def test_recipe_uses_the_shipped_cruxeval_and_names_a_missing_one(tmp_path):
    """$CRUXEVAL_PATH overrides the copy in tracegen/cruxeval/; a wrong one is named, before any work."""
    missing = tmp_path / "nowhere" / "cruxeval.jsonl"
    done = _recipe(tmp_path / "run", CRUXEVAL_PATH=str(missing))
    assert done.returncode == 2 and f"not found at {missing}" in done.stderr
    assert not (tmp_path / "run" / "synth").exists()
    assert (REPO / "tracegen" / "cruxeval" / "cruxeval.jsonl").is_file()


def test_recipe_names_a_packages_folder_that_is_not_one(tmp_path):
    """PKGS adds the PyPI packages to the realcode mix; a folder `tracegen packages` did not write is named, before any work."""
    done = _recipe(tmp_path / "run", PKGS=str(tmp_path))
    assert done.returncode == 2 and f"PKGS={tmp_path} is not a folder written by 'tracegen packages'" in done.stderr
    assert not (tmp_path / "run" / "synth").exists()
