"""Companion models: more checkpoints that draw and score answers beside the session's model (a decode-time ensemble).

After the actions in `model.session.ENSEMBLE_KINDS` (a call's arguments, inv_step_call), each companion
draws as many answers as the session's model does, and every answer is ranked by its mean
log-probability under all the models (`NeuralDebugger.ranked_candidates`). Companions must share
the session model's tokenizer: an answer's token ids are scored as they are.

A checkpoint folder names its companions in ``ensemble.json``::

    {"companions": ["../companion-stage12"]}

paths relative to the checkpoint folder. A folder without the file has none; a named folder that
is missing is an error (`EnsembleError`), never silently a smaller ensemble.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from model.backends.base import BackendError

ENSEMBLE_FILE = "ensemble.json"


class EnsembleError(BackendError):
    """The ensemble file is unreadable, names a missing folder, or a companion's tokenizer differs."""


class EnsembleSpec(BaseModel):
    """The contents of ``ensemble.json``."""

    model_config = ConfigDict(extra="forbid")

    companions: list[str] = []


def companion_folders(checkpoint: str | Path) -> list[Path]:
    """The companion checkpoint folders `checkpoint`'s ``ensemble.json`` names (none without the file)."""
    folder = Path(checkpoint)
    path = folder / ENSEMBLE_FILE
    if not path.is_file():
        return []
    try:
        spec = EnsembleSpec.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValidationError) as exc:
        raise EnsembleError(f"cannot read {path}: {exc}") from None
    out = []
    for name in spec.companions:
        companion = (folder / name).resolve()
        if not (companion / "config.json").is_file():
            raise EnsembleError(f"{path} names the companion checkpoint {name!r}, which is not a checkpoint folder ({companion}): "
                                "copy the companion folder beside this one, or remove ensemble.json to use this model alone")
        out.append(companion)
    return out


def same_vocabulary(a: Any, b: Any) -> bool:
    """Whether two tokenizers map the same tokens to the same ids (answers' ids can be scored by either)."""
    return bool(a.get_vocab() == b.get_vocab())


def load_companions(folders: Sequence[str | Path], tokenizer: Any, **hf_options: Any) -> list[Any]:
    """An `HFBackend` per folder (`hf_options`: its keywords), each checked to share `tokenizer`'s vocabulary."""
    from model.backends.hf import HFBackend

    out = []
    for folder in folders:
        backend = HFBackend(folder, **hf_options)
        if not same_vocabulary(backend.tokenizer, tokenizer):
            backend.close()
            raise EnsembleError(f"the companion checkpoint {folder} has another tokenizer than the session's model: its answers cannot be scored together")
        out.append(backend)
    return out
