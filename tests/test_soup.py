"""Weight interpolation (`train.soup`): the mix lies between its two models, and mismatched models are refused."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _weights(folder: Path) -> dict:  # noqa: ANN401
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32").state_dict()


@pytest.fixture()
def tuned(tiny_checkpoint: Path, tmp_path: Path) -> Path:
    """The tiny checkpoint with every weight moved by seeded noise (a stand-in for a fine-tuned model)."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint), dtype="float32")
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.1)
    out = tmp_path / "tuned"
    model.save_pretrained(out, safe_serialization=True)
    shutil.copy2(tiny_checkpoint / "tokenizer.json", out / "tokenizer.json")
    return out


@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0])
def test_every_weight_is_the_interpolation(tiny_checkpoint: Path, tuned: Path, tmp_path: Path, alpha: float) -> None:
    import torch

    from train.soup import soup

    summary = soup(tiny_checkpoint, tuned, tmp_path / "mix", alpha)
    base, end, mix = _weights(tiny_checkpoint), _weights(tuned), _weights(tmp_path / "mix")
    assert summary["interpolated"]["alpha"] == alpha and (tmp_path / "mix" / "tokenizer.json").is_file()
    for key in base:
        assert torch.allclose(mix[key], (1 - alpha) * base[key] + alpha * end[key], atol=1e-6), key
    assert not torch.equal(base["model.norm.weight"], end["model.norm.weight"])  # the fixture really moved them


def test_models_of_another_architecture_are_refused(tiny_checkpoint: Path, tmp_path: Path) -> None:
    from train.grow import grow

    grow(tiny_checkpoint, tmp_path / "deeper", factor=2)
    done = subprocess.run([sys.executable, "-m", "train.soup", str(tiny_checkpoint), str(tmp_path / "deeper"),
                           str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "differ in num_hidden_layers" in done.stderr
    assert not (tmp_path / "out").exists()


def test_alpha_outside_zero_to_one_is_refused(tiny_checkpoint: Path, tuned: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "train.soup", str(tiny_checkpoint), str(tuned), str(tmp_path / "out"),
                           "--alpha", "1.5"], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "--alpha must be within 0 and 1" in done.stderr


def test_a_folder_without_a_model_is_refused(tiny_checkpoint: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "train.soup", str(tiny_checkpoint), str(tmp_path), str(tmp_path / "o")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "not a Hugging Face model folder" in done.stderr
