"""Checkpoints: a Hugging Face model folder plus the trainer's own state beside it.

The output folder OUT is itself the Hugging Face folder that `transformers` and `vllm serve` load
(`config.json`, `model.safetensors`, `tokenizer.json`, `tokenizer_config.json`,
`generation_config.json`). What resuming needs on top of the weights (optimizer, schedule, data
position, random states) lives in `OUT/trainer_state/state.pt`; that folder carries a `.gitignore`
of `*` so a checkpoint inside the repository never commits it.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

TRAINER_DIR = "trainer_state"
STATE_FILE = "state.pt"
SUMMARY_FILE = "training_summary.json"


def trainer_state_path(out: Path) -> Path:
    return Path(out) / TRAINER_DIR / STATE_FILE


def has_trainer_state(out: Path) -> bool:
    return trainer_state_path(out).is_file()


def save_hf_folder(model: Any, tokenizer: Any, out: Path, eos_id: int, pad_id: int | None, bos_id: int | None) -> None:
    """Write the model and tokenizer as a Hugging Face folder at `out` (files replaced one by one, atomically)."""
    from transformers import GenerationConfig

    out = Path(out)
    tmp = out / ".saving"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.config.eos_token_id = eos_id
    model.config.pad_token_id = pad_id
    model.config.bos_token_id = bos_id
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    GenerationConfig(eos_token_id=eos_id, pad_token_id=pad_id, bos_token_id=bos_id, do_sample=False).save_pretrained(tmp)
    for item in tmp.iterdir():
        os.replace(item, out / item.name)
    shutil.rmtree(tmp, ignore_errors=True)


def save_trainer_state(out: Path, state: dict[str, Any]) -> None:
    """Write the resumable trainer state (a dict of tensors and plain values) atomically."""
    import torch

    path = trainer_state_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / ".gitignore").write_text("*\n")
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_trainer_state(out: Path) -> dict[str, Any]:
    """The state written by `save_trainer_state`; a clear error when there is none."""
    import torch

    path = trainer_state_path(out)
    if not path.is_file():
        raise FileNotFoundError(f"nothing to resume: {path} does not exist")
    return torch.load(path, map_location="cpu", weights_only=False)


def write_summary(out: Path, summary: dict[str, Any]) -> None:
    """A small JSON beside the model with what it was trained on and how it scored (for the model card)."""
    path = Path(out) / SUMMARY_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    os.replace(tmp, path)
