"""Companion models: more checkpoints that draw and score answers beside the session's model (a decode-time ensemble).

After the actions in `model.decode.spec.ENSEMBLE_KINDS` (a call's arguments, inv_step_call), each companion
draws as many answers as the session's model does, and every answer is ranked by its mean
log-probability under all the models (`NeuralDebugger.ranked_candidates`). Companions must share
the session model's tokenizer: an answer's token ids are scored as they are.

A checkpoint folder names its companions in ``ensemble.json``::

    {"companions": ["../companion-stage12"]}

paths relative to the checkpoint folder. A folder without the file has none. A checkpoint is often
copied alone, so a companion that the file names but that is missing, unreadable or has another
tokenizer is left out with a notice saying why (`Companions.problems`, shown to the user): the model
then answers alone, which is still a working debugger. Companions asked for by name
(`load_companions(..., strict=True)`) fail loudly instead (`EnsembleError`).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
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


@dataclass
class Companions:
    """Companion checkpoints found (or loaded), and why any that ``ensemble.json`` names were left out."""

    folders: list[Path] = field(default_factory=list)
    backends: list[Any] = field(default_factory=list)  # one loaded backend per folder (`load_companions`)
    problems: list[str] = field(default_factory=list)  # one line each, for the user: the model answers without them


def companion_folders(checkpoint: str | Path) -> Companions:
    """The companion checkpoint folders `checkpoint`'s ``ensemble.json`` names (none without the file).

    Never raises: an unreadable file or a named folder that is not a checkpoint becomes a problem line.
    """
    folder = Path(checkpoint)
    path = folder / ENSEMBLE_FILE
    found = Companions()
    if not path.is_file():
        return found
    try:
        spec = EnsembleSpec.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValidationError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        found.problems.append(f"cannot read {path} ({first}): the model answers without companion models")
        return found
    for name in spec.companions:
        companion = (folder / name).resolve()
        if (companion / "config.json").is_file():
            found.folders.append(companion)
        else:
            found.problems.append(f"{path} names the companion checkpoint {name!r}, which is not a checkpoint folder ({companion}): "
                                  "the model answers without it (copy the companion folder beside this one, or remove ensemble.json)")
    return found


def same_vocabulary(a: Any, b: Any) -> bool:
    """Whether two tokenizers map the same tokens to the same ids (answers' ids can be scored by either)."""
    return bool(a.get_vocab() == b.get_vocab())


def load_companions(folders: Sequence[str | Path], tokenizer: Any, *, strict: bool = True, **hf_options: Any) -> Companions:
    """An `HFBackend` per folder (`hf_options`: its keywords), each checked to share `tokenizer`'s vocabulary.

    strict: a folder that cannot be loaded, or has another tokenizer, raises `EnsembleError`; otherwise it
    is left out and the reason added to the result's `problems`.
    """
    out = Companions()
    for folder in folders:
        try:
            backend = _load_companion(folder, tokenizer, **hf_options)
        except EnsembleError as exc:
            if strict:
                raise
            out.problems.append(f"{exc}; the model answers without it")
            continue
        out.folders.append(Path(folder))
        out.backends.append(backend)
    return out


def _load_companion(folder: str | Path, tokenizer: Any, **hf_options: Any) -> Any:
    """One companion's `HFBackend`; `EnsembleError` when it cannot be loaded or has another tokenizer than `tokenizer`."""
    from model.backends.hf import HFBackend

    try:
        backend = HFBackend(folder, **hf_options)
    except BackendError as exc:
        raise EnsembleError(f"companion model: {exc}") from None
    if not same_vocabulary(backend.tokenizer, tokenizer):
        backend.close()
        raise EnsembleError(f"the companion checkpoint {folder} has another tokenizer than the session's model: its answers cannot be scored together")
    return backend


def named_companions(checkpoint: str | Path, tokenizer: Any, **hf_options: Any) -> Companions:
    """The companions `checkpoint`'s ``ensemble.json`` names, loaded; any that cannot be used are problems, never errors."""
    found = companion_folders(checkpoint)
    loaded = load_companions(found.folders, tokenizer, strict=False, **hf_options)
    loaded.problems[:0] = found.problems
    return loaded
