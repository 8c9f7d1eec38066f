"""Where the shipped model lives, and how the launch configuration's `model` attribute resolves."""
from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CHECKPOINT = REPO_ROOT / "checkpoints" / "default"  # made by the training pipeline


class CheckpointNotFound(FileNotFoundError):
    """The `model` folder does not exist or is not a Hugging Face checkpoint; the message says which."""


def resolve_checkpoint(model: str | Path | None, cwd: str | Path | None = None) -> Path:
    """The checkpoint folder for a launch `model` attribute: None means the shipped one; a relative path is taken from `cwd`."""
    path = Path(model).expanduser() if model else DEFAULT_CHECKPOINT
    if not path.is_absolute() and cwd is not None:
        path = Path(cwd).expanduser() / path
    if not path.exists():
        hint = " (the shipped model has not been trained yet)" if not model else ""
        raise CheckpointNotFound(f"model folder not found: {path}{hint}")
    if not (path / "config.json").is_file():
        raise CheckpointNotFound(f"not a checkpoint folder (no config.json): {path}")
    return path
