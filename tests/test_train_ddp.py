"""Several processes under torchrun (DDP over gloo on the CPU): the same update as one process.

Two ranks with one micro-batch each must end with the weights of one process that accumulates those
two micro-batches, whatever number of target tokens each rank holds: the loss is the mean over all
target tokens of the step, not a mean of per-rank means.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from train import data
from train.loop import TrainConfig, train
from train.toydata import toy_trajectories, write_shards

MICRO = {"layers": 2, "width": 64, "heads": 2, "intermediate": 128}
REPO = Path(__file__).resolve().parents[1]
STEPS = 3


@pytest.fixture(scope="module")
def packed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ddp")
    write_shards(root / "traj", toy_trajectories(60, seed=9))
    data.pack(root / "traj", root / "packed", seq_len=128, heldout_fraction=0.2, vocab_size=400, progress=False)
    (root / "micro.json").write_text(json.dumps(MICRO))
    return root


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("torchrun", path=str(Path(sys.executable).parent)) is None, reason="torchrun not installed")
def test_two_ranks_update_like_one_process_accumulating_their_batches(packed: Path, tmp_path: Path) -> None:
    import torch

    common = dict(data=packed / "packed", config_file=packed / "micro.json", steps=STEPS, micro_batch=2, eval_states=0,
                  eval_sequences=2, eval_every=1000, log_every=1, progress=False, threads=1, device="cpu")
    one = tmp_path / "one"
    train(TrainConfig(out=one, grad_accum=2, **common))
    two = tmp_path / "two"
    torchrun = str(Path(sys.executable).parent / "torchrun")
    done = subprocess.run(
        [torchrun, "--standalone", "--nproc_per_node", "2", "-m", "neural_debugger_cli", "train",
         "--data", str(packed / "packed"), "--out", str(two), "--config", str(packed / "micro.json"),
         "--steps", str(STEPS), "--batch", "2", "--grad-accum", "1", "--eval-states", "0", "--eval-sequences", "2",
         "--eval-every", "1000", "--log-every", "1", "--no-progress", "--threads", "1", "--device", "cpu"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((two / "training_summary.json").read_text())
    assert summary["steps"] == STEPS and summary["tokens_seen"] == STEPS * 2 * 2 * 128
    a, b = _weights(one), _weights(two)
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-4, atol=1e-5)
    losses_one = [r["loss"] for r in map(json.loads, (one / "metrics.jsonl").read_text().splitlines()) if r["kind"] == "train"]
    losses_two = [r["loss"] for r in map(json.loads, (two / "metrics.jsonl").read_text().splitlines()) if r["kind"] == "train"]
    assert losses_two == pytest.approx(losses_one, rel=1e-4)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("torchrun", path=str(Path(sys.executable).parent)) is None, reason="torchrun not installed")
def test_two_ranks_distill_and_stay_in_step(packed: Path, tmp_path: Path) -> None:
    """The distillation term's backward runs under no_sync before the main batches (DDP syncs it with theirs): the run
    ends, the two ranks took distill rows of their own (counted together), and the student starts at its teacher."""
    teacher = tmp_path / "teacher"
    train(TrainConfig(out=teacher, data=packed / "packed", config_file=packed / "micro.json", steps=1, micro_batch=2, eval_states=0,
                      eval_sequences=0, progress=False, threads=1, device="cpu"))  # fmt: skip
    out = tmp_path / "student"
    torchrun = str(Path(sys.executable).parent / "torchrun")
    done = subprocess.run(
        [torchrun, "--standalone", "--nproc_per_node", "2", "-m", "neural_debugger_cli", "train",
         "--data", str(packed / "packed"), "--out", str(out), "--init-from", str(teacher), "--steps", str(STEPS), "--batch", "2",
         "--distill-from", str(teacher), "--distill-data", str(packed / "packed"), "--distill-batch", "1",
         "--eval-states", "0", "--eval-sequences", "0", "--log-every", "1", "--no-progress", "--threads", "1", "--device", "cpu"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["steps"] == STEPS and summary["distill"]["sequences_seen"] == STEPS * 1 * 2
    kls = [r["distill_kl"] for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if r["kind"] == "train"]
    assert len(kls) == STEPS and kls[0] == pytest.approx(0.0, abs=1e-4)
