"""Warmup-stable-decay and Muon in the training loop: the schedule as pure functions, exact resume,
cooling a stable run down, Muon's parameter split, and that Muon + AdamW learns the toy data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from train.loop import TrainConfig, train
from train.metrics import read_metrics
from train.schedule import lr_at, lr_factor, wsd_decay_due, wsd_factor
from tests.conftest import MICRO


def _cfg(**kw) -> TrainConfig:
    base = dict(micro_batch=4, eval_states=0, eval_sequences=4, eval_every=1000, log_every=1, progress=False, threads=1)
    return TrainConfig(**(base | kw))


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _lrs(folder: Path) -> list[float]:
    return [r["lr"] for r in read_metrics(folder) if r["kind"] == "train"]


# ---- the schedule as pure functions ---------------------------------------------------------------


def test_wsd_warms_up_holds_then_decays_linearly():
    assert wsd_factor(0, 100, 10, 0.1, None) == pytest.approx(0.1)
    assert wsd_factor(9, 100, 10, 0.1, None) == pytest.approx(1.0)
    assert wsd_factor(50, 100, 10, 0.1, None) == 1.0  # no decay decided: stable
    assert wsd_factor(79, 100, 10, 0.1, 80) == 1.0
    assert wsd_factor(80, 100, 10, 0.1, 80) == pytest.approx(1.0)
    assert wsd_factor(90, 100, 10, 0.1, 80) == pytest.approx(0.55)
    assert wsd_factor(100, 100, 10, 0.1, 80) == pytest.approx(0.1)
    assert wsd_factor(150, 100, 10, 0.1, 80) == pytest.approx(0.1)  # past the end: the floor
    assert lr_factor("cosine", 37, 100, 10, 0.1) == pytest.approx(lr_at(37, 100, 1.0, 10, 0.1))
    assert lr_factor("wsd", 90, 100, 10, 0.1, 80) == wsd_factor(90, 100, 10, 0.1, 80)
    with pytest.raises(ValueError, match="unknown schedule 'step'"):
        lr_factor("step", 0, 10, 1, 0.1)


def test_wsd_decay_starts_at_the_fraction_of_steps_or_of_the_budget():
    assert not wsd_decay_due(79, 100, 0.2) and wsd_decay_due(80, 100, 0.2)
    assert wsd_decay_due(0, 10, 1.0)  # decay over the whole run
    # a time budget: the remaining time decides, whatever the step estimate says
    assert not wsd_decay_due(10, 10_010, 0.2, remaining_s=700.0, budget_s=3000.0)
    assert wsd_decay_due(10, 10_010, 0.2, remaining_s=600.0, budget_s=3000.0)


@settings(max_examples=200, deadline=None)
@given(total=st.integers(1, 5000), warmup=st.integers(0, 300), frac=st.floats(0.01, 1.0), min_ratio=st.floats(0.0, 1.0))
def test_wsd_factor_is_bounded_and_never_rises_after_warmup(total, warmup, frac, min_ratio):
    decay_start = None
    previous = None
    for step in range(0, total + 2, max(1, total // 97)):
        if decay_start is None and wsd_decay_due(step, total, frac):
            decay_start = max(step, warmup)
        f = wsd_factor(step, total, warmup, min_ratio, decay_start)
        assert min(min_ratio, 1.0 / max(1, warmup)) - 1e-12 <= f <= 1.0 + 1e-12
        if step >= warmup:
            assert previous is None or f <= previous + 1e-12
            previous = f


# ---- the schedule in the loop ----------------------------------------------------------------------


def test_wsd_resume_continues_exactly(toy_packed, micro_config, tmp_path):
    import torch

    kw = dict(data=toy_packed, config_file=micro_config, steps=8, schedule="wsd", decay_fraction=0.5, warmup=2)
    train(_cfg(out=tmp_path / "a", **kw))
    train(_cfg(out=tmp_path / "b", stop_after=3, **kw))
    train(_cfg(out=tmp_path / "b", resume=True))
    a, b = _weights(tmp_path / "a"), _weights(tmp_path / "b")
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-5, atol=1e-6)
    lrs = _lrs(tmp_path / "a")
    assert lrs == pytest.approx(_lrs(tmp_path / "b"))
    peak = lrs[2]
    # warmup (2 steps), stable, then linear decay over the last 4 of 8 steps to 10% of the peak
    assert lrs[:4] == pytest.approx([peak / 2, peak, peak, peak])
    assert lrs[4:] == pytest.approx([peak * (0.1 + 0.9 * (1 - k / 4)) for k in range(4)])


def test_a_stable_wsd_run_cools_down_when_resumed_with_an_earlier_end(toy_packed, micro_config, tmp_path):
    """Any checkpoint of the stable phase can be cooled down: resume with an end within the decay fraction
    (here 12 steps done, new end 15: the last 20% of 15 steps is 3) and it decays from where it stands."""
    out = tmp_path / "c"
    train(_cfg(data=toy_packed, out=out, config_file=micro_config, steps=100, stop_after=12, schedule="wsd", warmup=1))
    stable = _lrs(out)
    assert len(stable) == 12 and stable == pytest.approx([stable[0]] * 12)
    summary = train(_cfg(out=out, resume=True, steps=15))
    assert summary["steps"] == 15
    cooled = _lrs(out)[12:]
    assert cooled == pytest.approx([stable[0] * (0.1 + 0.9 * (1 - k / 3)) for k in range(3)])


# ---- Muon ----------------------------------------------------------------------------------------------


def test_muon_takes_the_hidden_matrices_and_adamw_the_rest(toy_packed):
    import torch

    from train.modeling import from_scratch, load_hf_tokenizer
    from train.optim import OptimizerSet, build_optimizer, split_for_muon
    from train.presets import ModelShape

    tokenizer = load_hf_tokenizer(toy_packed / "tokenizer")
    untied = from_scratch(ModelShape(**MICRO, tie_embeddings=False), tokenizer, 128).model
    _, other, _ = split_for_muon(untied)
    names = {id(p): n for n, p in untied.named_parameters()}
    assert {names[id(p)] for p in other} == {"model.embed_tokens.weight", "lm_head.weight"}
    model = from_scratch(ModelShape(**MICRO), tokenizer, 128).model
    hidden, other, flat = split_for_muon(model)
    names = {id(p): n for n, p in model.named_parameters()}
    assert {names[id(p)] for p in other} == {"model.embed_tokens.weight"}  # tied: the head is the same tensor
    assert all(".layers." in names[id(p)] and p.dim() == 2 for p in hidden)
    assert len(hidden) == MICRO["layers"] * 7  # q, k, v, o, gate, up, down
    assert all(p.dim() == 1 for p in flat) and len(hidden) + len(other) + len(flat) == len(list(model.parameters()))
    opt = build_optimizer(model, "muon", lr=2e-3, muon_lr=None, weight_decay=0.1, betas=(0.9, 0.95), fused=False)
    assert isinstance(opt, OptimizerSet) and isinstance(opt.optimizers[0], torch.optim.Muon)
    peaks = sorted({g["peak_lr"] for g in opt.param_groups})
    assert peaks == [2e-3, 0.02]
    muon_group = opt.optimizers[0].param_groups[0]
    assert muon_group["weight_decay"] * 0.02 == pytest.approx(0.1 * 2e-3)  # the same shrink per step as AdamW's
    with pytest.raises(ValueError, match="another --optimizer"):
        opt.load_state_dict(build_optimizer(model, "adamw", lr=2e-3, muon_lr=None, weight_decay=0.1, betas=(0.9, 0.95), fused=False).state_dict())


def test_muon_learns_and_resumes_exactly(toy_packed, micro_config, tmp_path):
    import torch

    kw = dict(data=toy_packed, config_file=micro_config, optimizer="muon", eval_sequences=8)
    summary = train(_cfg(out=tmp_path / "long", steps=40, warmup=4, **kw))
    losses = [r["loss"] for r in read_metrics(tmp_path / "long") if r["kind"] == "train"]
    assert sum(losses[-5:]) / 5 < 0.6 * sum(losses[:3]) / 3
    assert summary["final_eval"]["heldout_loss"] < losses[0]
    train(_cfg(out=tmp_path / "a", steps=6, **kw))
    train(_cfg(out=tmp_path / "b", steps=6, stop_after=3, **kw))
    train(_cfg(out=tmp_path / "b", resume=True))
    a, b = _weights(tmp_path / "a"), _weights(tmp_path / "b")
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-5, atol=1e-6)
    saved = json.loads((tmp_path / "b" / "training_summary.json").read_text())
    assert saved["steps"] == 6


def test_training_gives_back_the_signal_handlers(toy_packed, micro_config, tmp_path):
    """`ablate` evaluates in the process that trained: Ctrl-C / SIGTERM must stop it again once training is over."""
    import signal

    before = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT))
    train(_cfg(data=toy_packed, out=tmp_path / "s", config_file=micro_config, steps=1, eval_sequences=0))
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
