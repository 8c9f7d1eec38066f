"""Depth expansion (`train.grow`): the grown model computes what the original did, and trains on."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _logits(folder: Path, ids):  # noqa: ANN001, ANN202
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32")
    with torch.no_grad():
        return model(ids).logits, model.config.num_hidden_layers


def test_grown_model_has_twice_the_layers_and_the_same_logits(tiny_checkpoint: Path, tmp_path: Path) -> None:
    import torch

    from train.grow import grow

    summary = grow(tiny_checkpoint, tmp_path / "grown", factor=2)
    ids = torch.randint(0, 300, (2, 24), generator=torch.Generator().manual_seed(0))
    small, small_layers = _logits(tiny_checkpoint, ids)
    big, big_layers = _logits(tmp_path / "grown", ids)
    assert big_layers == 2 * small_layers and summary["grown_from"]["layers"] == small_layers
    assert torch.allclose(small, big, atol=1e-5)
    assert (tmp_path / "grown" / "tokenizer.json").is_file()
    assert json.loads((tmp_path / "grown" / "training_summary.json").read_text())["params"] > 0


def test_new_blocks_learn(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """Zeroed output projections get gradients, so the identity blocks start to contribute after one step."""
    import torch
    from transformers import AutoModelForCausalLM

    from train.grow import grow

    grow(tiny_checkpoint, tmp_path / "grown", factor=2)
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path / "grown"), dtype="float32")
    ids = torch.randint(0, 300, (2, 16), generator=torch.Generator().manual_seed(1))
    model(ids, labels=ids).loss.backward()
    grad = model.model.layers[1].self_attn.o_proj.weight.grad
    assert grad is not None and grad.abs().sum() > 0


def test_cli_refuses_a_folder_without_a_model(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "train.grow", str(tmp_path), str(tmp_path / "out")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "not a Hugging Face model folder" in done.stderr


def test_factor_below_two_is_refused(tiny_checkpoint: Path, tmp_path: Path) -> None:
    from train.grow import grow

    with pytest.raises(ValueError, match="at least 2"):
        grow(tiny_checkpoint, tmp_path / "g", factor=1)
