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


@pytest.mark.slow
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


def test_widened_model_has_more_heads_and_the_same_logits(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """`train.widen`: old weights in the top-left blocks, new writers zero, norms rescaled: same logits."""
    import torch

    from train.widen import widen

    small_config = json.loads((tiny_checkpoint / "config.json").read_text())
    head = small_config.get("head_dim") or small_config["hidden_size"] // small_config["num_attention_heads"]
    width = small_config["hidden_size"] + 2 * head
    summary = widen(tiny_checkpoint, tmp_path / "wide", width)
    ids = torch.randint(0, 300, (2, 24), generator=torch.Generator().manual_seed(0))
    small, _ = _logits(tiny_checkpoint, ids)
    big, _ = _logits(tmp_path / "wide", ids)
    config = json.loads((tmp_path / "wide" / "config.json").read_text())
    assert config["hidden_size"] == width and config["num_attention_heads"] == small_config["num_attention_heads"] + 2
    assert summary["params"] > json.loads((tmp_path / "wide" / "training_summary.json").read_text())["widened_from"]["width"]
    assert torch.allclose(small, big, atol=1e-4)


@pytest.mark.slow
def test_every_new_weight_of_a_widened_model_learns(tiny_checkpoint: Path, tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from train.widen import widen

    config = json.loads((tiny_checkpoint / "config.json").read_text())
    head = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    widen(tiny_checkpoint, tmp_path / "wide", config["hidden_size"] + head)
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path / "wide"), dtype="float32")
    ids = torch.randint(0, 300, (2, 16), generator=torch.Generator().manual_seed(1))
    model(ids, labels=ids).loss.backward()
    old = config["hidden_size"]
    layer = model.model.layers[0]  # read by the next layers' random weights (the last layer's once others write)
    for weight in (layer.self_attn.o_proj.weight, layer.mlp.down_proj.weight):
        assert weight.grad[old:].abs().sum() > 0  # rows writing the new residual dimensions
    for weight in (layer.self_attn.o_proj.weight, layer.mlp.down_proj.weight):  # the new heads' and units' outputs
        assert weight.grad[:, old:].abs().sum() > 0


@pytest.mark.parametrize("width", [0, 1000])
def test_widen_refuses_a_narrower_or_unaligned_width(tiny_checkpoint: Path, tmp_path: Path, width: int) -> None:
    from train.widen import widen

    with pytest.raises(ValueError, match="--width"):
        widen(tiny_checkpoint, tmp_path / "wide", width + 1)
