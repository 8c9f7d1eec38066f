"""The data folder's manifest: what was packed, how, and with which tokenizer.

A packed data folder holds ``pack.json`` (this model), ``tokenizer/`` (a Hugging Face tokenizer
folder), ``{split}.tokens.bin`` / ``{split}.mask.bin`` for each split, and
``heldout.examples.jsonl``: next-state examples (a prompt text and the state that follows) used to
measure next-state exact match during training.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

MANIFEST = "pack.json"
TOKENIZER_DIR = "tokenizer"
EXAMPLES = "heldout.examples.jsonl"
MaskMode = Literal["all", "states"]


class SplitStats(BaseModel):
    """Counts for one split."""

    trajectories: int = 0
    forward: int = 0
    inverse: int = 0
    programs: int = 0
    windows: int = 0
    windows_too_long: int = 0
    trajectories_unrenderable: int = 0  # skipped: a state the model's language cannot write (a name with spaces, ...)
    states: int = 0  # predicted states packed (one per step)
    states_dropped: int = 0  # steps left out: a state too long for any window ends its trajectory there
    sequences: int = 0
    tokens: int = 0  # real tokens (padding excluded)
    target_tokens: int = 0  # tokens with loss mask 1


class Manifest(BaseModel):
    """Everything the trainer needs to read a packed data folder."""

    version: int = 1
    source: str  # the trajectories folder it was packed from
    seq_len: int
    dtype: str  # numpy dtype of the token files
    mask: MaskMode
    vocab_size: int
    tokenizer_sha256: str  # sha256 of tokenizer/tokenizer.json
    bos_id: int
    eos_id: int  # the state-end token: generation stops on it
    pad_id: int
    heldout_fraction: float
    seed: int
    splits: dict[str, SplitStats] = Field(default_factory=dict)
    examples: int = 0  # lines of heldout.examples.jsonl
    value_chars: bool = False  # string contents in state values one token per character (model.prompt.value_chars; tokenizer/ carries the flag)

    def save(self, folder: Path) -> None:
        # written only when on: a manifest packed without value chars stays as it was (the ablation fingerprints it)
        exclude = None if self.value_chars else {"value_chars"}
        (Path(folder) / MANIFEST).write_text(self.model_dump_json(indent=2, exclude=exclude) + "\n")

    @classmethod
    def load(cls, folder: Path) -> "Manifest":
        path = Path(folder) / MANIFEST
        try:
            return cls.model_validate_json(path.read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"{folder} is not a packed data folder (no {MANIFEST})") from None


class NextStateExample(BaseModel):
    """One held-out next-state question: the prompt text ends where the model must write a state."""

    prompt: str
    program: str  # the program source (parsing a state needs it)
    target: str  # the expected State as JSON (protocol.debugger.State)
    previous: str | None = None  # the state before it as JSON, when parsing needs it
    returned: str | None = None  # the function whose call came back to `previous` (`model.static.reach.returned_call`)
    action: str  # the action kind that leads to the target (e.g. step_into)
    direction: Literal["forward", "inverse"] = "forward"


def read_examples(folder: Path, limit: int | None = None) -> list[NextStateExample]:
    """The first `limit` held-out next-state examples of a data folder (none when the file is absent)."""
    path = Path(folder) / EXAMPLES
    if not path.is_file():
        return []
    out: list[NextStateExample] = []
    with path.open() as fh:
        for line in fh:
            if limit is not None and len(out) >= limit:
                break
            if line.strip():
                out.append(NextStateExample.model_validate(json.loads(line)))
    return out
