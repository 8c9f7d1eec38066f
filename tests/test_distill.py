"""Distillation from a frozen teacher (train/distill.py) with tiny real models: the KL term itself, a run
that keeps the student near its teacher, exact resume, and the refusals."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from train import data
from train.distill import Distiller, token_kl
from train.loop import TrainConfig, train
from train.manifest import Manifest
from train.metrics import read_metrics
from train.toydata import toy_trajectories, write_shards


def _cfg(**kw) -> TrainConfig:
    base = dict(micro_batch=4, eval_states=0, eval_sequences=4, eval_every=1000, log_every=1, progress=False, threads=1)
    return TrainConfig(**(base | kw))


@pytest.fixture(scope="module")
def teacher(toy_packed, micro_config, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("teacher") / "model"
    train(_cfg(data=toy_packed, out=out, config_file=micro_config, steps=4))
    return out


def test_token_kl_is_zero_for_equal_logits_and_counts_only_targets():
    import torch

    torch.manual_seed(0)
    logits = torch.randn(2, 5, 7)
    labels = torch.full((2, 5), -100)
    labels[0, 2] = labels[1, 4] = 1  # targets: predicted from positions (0, 1) and (1, 3)
    assert float(token_kl(logits, logits.clone(), labels)) == pytest.approx(0.0, abs=1e-6)
    other = logits.clone()
    other[0, 0] += 5.0  # a position that predicts no target changes nothing
    assert float(token_kl(other, logits, labels)) == pytest.approx(0.0, abs=1e-6)
    other[0, 1, 3] += 2.0
    p_t = torch.softmax(logits[0, 1], -1)
    expected = float((p_t * (torch.log_softmax(logits[0, 1], -1) - torch.log_softmax(other[0, 1], -1))).sum()) / 2
    assert float(token_kl(other, logits, labels)) == pytest.approx(expected, rel=1e-5)
    assert float(token_kl(other, logits, torch.full((2, 5), -100))) == 0.0


def test_token_kl_temperature_softens_and_rescales():
    import torch

    torch.manual_seed(1)
    s, t = torch.randn(1, 4, 9), torch.randn(1, 4, 9)
    labels = torch.tensor([[-100, 3, 4, 5]])
    t2 = float(token_kl(s, t, labels, temperature=2.0))
    manual = float(token_kl(s / 2, t / 2, labels)) * 4
    assert t2 == pytest.approx(manual, rel=1e-5)


def _kl_to_teacher(student: Path, teacher: Path, packed: Path) -> float:
    """Mean KL(teacher || student) over the first sequences of `packed`."""
    import torch

    from train import modeling

    model = modeling.from_checkpoint(student).model.eval()
    distiller = Distiller.open(teacher, packed, modeling.from_checkpoint(student).tokenizer, Manifest.load(packed), weight=1.0,
                               temperature=1.0, batch=8, seed=0, cursor=0, device="cpu")  # fmt: skip
    ids, labels = distiller.next_batch(0, 1, "cpu")
    with torch.no_grad():
        return float(distiller.loss(model, ids, labels, lambda: torch.autocast("cpu", enabled=False)))


def test_distillation_keeps_the_student_near_its_teacher(toy_packed, teacher, tmp_path):
    other_traj = tmp_path / "traj"
    write_shards(other_traj, toy_trajectories(60, seed=11))
    other = tmp_path / "other"
    data.pack(other_traj, other, tokenizer_dir=toy_packed / "tokenizer", seq_len=128, heldout_fraction=0.0, progress=False)
    common = dict(data=other, init_from=teacher, steps=8, lr=3e-2, warmup=0, seed=3)
    free = train(_cfg(out=tmp_path / "free", **common))
    held = train(_cfg(out=tmp_path / "held", distill_from=teacher, distill_data=toy_packed, distill_weight=5.0, **common))
    assert free["distill"] is None
    assert held["distill"]["sequences_seen"] == 8 * 2 and held["distill"]["teacher"] == str(teacher)
    kls = [r["distill_kl"] for r in read_metrics(tmp_path / "held") if r["kind"] == "train"]
    assert len(kls) == 8 and kls[0] == pytest.approx(0.0, abs=1e-4)  # the student starts as the teacher
    free_kl = _kl_to_teacher(tmp_path / "free", teacher, toy_packed)
    held_kl = _kl_to_teacher(tmp_path / "held", teacher, toy_packed)
    assert held_kl < 0.5 * free_kl, (held_kl, free_kl)


def test_distillation_resumes_exactly(toy_packed, teacher, tmp_path):
    import torch
    from safetensors.torch import load_file

    common = dict(data=toy_packed, init_from=teacher, steps=4, distill_from=teacher, distill_data=toy_packed, distill_batch=3)
    train(_cfg(out=tmp_path / "a", **common))
    train(_cfg(out=tmp_path / "b", stop_after=2, **common))
    resumed = train(_cfg(out=tmp_path / "b", resume=True))
    assert resumed["distill"]["sequences_seen"] == 12
    a, b = load_file(str(tmp_path / "a" / "model.safetensors")), load_file(str(tmp_path / "b" / "model.safetensors"))
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-5, atol=1e-6)


def test_refuses_half_a_setup_a_foreign_teacher_or_data(toy_packed, teacher, micro_config, tmp_path):
    with pytest.raises(ValueError, match="both --distill-from"):
        train(_cfg(data=toy_packed, out=tmp_path / "x", init_from=teacher, steps=1, distill_from=teacher))
    with pytest.raises(ValueError, match="no such folder"):
        train(_cfg(data=toy_packed, out=tmp_path / "y", init_from=teacher, steps=1, distill_from=tmp_path / "nope", distill_data=toy_packed))
    foreign = tmp_path / "foreign"
    write_shards(tmp_path / "t2", toy_trajectories(40, seed=2))
    data.pack(tmp_path / "t2", foreign, seq_len=128, heldout_fraction=0.0, vocab_size=300, progress=False)
    with pytest.raises(ValueError, match="another tokenizer"):
        train(_cfg(data=toy_packed, out=tmp_path / "z", init_from=teacher, steps=1, distill_from=teacher, distill_data=foreign))
    stranger = tmp_path / "stranger"
    train(_cfg(data=foreign, out=stranger, config_file=micro_config, steps=1))
    with pytest.raises(ValueError, match="not the student's"):
        train(_cfg(data=toy_packed, out=tmp_path / "w", init_from=teacher, steps=1, distill_from=stranger, distill_data=toy_packed))
    assert json.loads((teacher / "training_summary.json").read_text())["steps"] == 4


def test_cli_distills_and_names_a_missing_half(toy_packed, teacher, tmp_path):
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "neural_debugger_cli", "train", "--data", str(toy_packed), "--init-from", str(teacher),
                               "--steps", "2", "--eval-states", "0", "--no-progress", "--threads", "1", *args],
                              cwd=repo, capture_output=True, text=True, timeout=240)  # fmt: skip

    done = cli("--out", str(tmp_path / "a"), "--distill-from", str(teacher), "--distill-data", str(toy_packed), "--distill-batch", "1",
               "--distill-weight", "0.5", "--distill-temperature", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    distill = json.loads((tmp_path / "a" / "training_summary.json").read_text())["distill"]
    assert (distill["batch"], distill["weight"], distill["temperature"], distill["sequences_seen"]) == (1, 0.5, 2.0, 2)
    half = cli("--out", str(tmp_path / "b"), "--distill-data", str(toy_packed))
    assert half.returncode == 2 and "both --distill-from" in half.stderr
    unpacked = cli("--out", str(tmp_path / "c"), "--distill-from", str(teacher), "--distill-data", str(tmp_path))
    assert unpacked.returncode == 2 and "not a packed data folder" in unpacked.stderr
