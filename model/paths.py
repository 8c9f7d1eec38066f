"""Where the shipped model lives, and how the launch configuration's `model` attribute resolves.

The shipped model is ``checkpoints/default/`` in a checkout. An installed package (``pip install .``
or the wheel) carries a copy as package data, ``model/checkpoints/default/`` (setup.py puts it
there), so the lookup tries both, in that order.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
# Where the shipped model is looked for: a checkout's folder first, then the installed package's copy.
SHIPPED_CHECKPOINTS = (REPO_ROOT / "checkpoints" / "default", PACKAGE_DIR / "checkpoints" / "default")


class CheckpointNotFound(FileNotFoundError):
    """The `model` folder does not exist or is not a Hugging Face checkpoint; the message says which."""


def default_checkpoint() -> Path:
    """The shipped model folder: the first of `SHIPPED_CHECKPOINTS` holding a config.json (else the first)."""
    for folder in SHIPPED_CHECKPOINTS:
        if (folder / "config.json").is_file():
            return folder
    return SHIPPED_CHECKPOINTS[0]


DEFAULT_CHECKPOINT = default_checkpoint()  # as found when this module was imported


def missing_shipped_model() -> str:
    """What to tell a user when no shipped model is found: where it was looked for, how to point at one."""
    looked = " and ".join(str(folder) for folder in SHIPPED_CHECKPOINTS)
    return (f"the shipped model is missing from this installation (looked for a checkpoint folder with a config.json "
            f"in {looked}); point at a checkpoint folder with the launch configuration's \"model\" attribute "
            f"(or --model on the command line), or use \"backend\": \"oracle\"")  # fmt: skip


def resolve_checkpoint(model: str | Path | None, cwd: str | Path | None = None) -> Path:
    """The checkpoint folder for a launch `model` attribute: None means the shipped one; a relative path is taken from `cwd`."""
    if not model:
        path = default_checkpoint()
        if not (path / "config.json").is_file():
            raise CheckpointNotFound(missing_shipped_model())
        return path
    path = Path(model).expanduser()
    if not path.is_absolute() and cwd is not None:
        path = Path(cwd).expanduser() / path
    if not path.exists():
        raise CheckpointNotFound(f"model folder not found: {path}")
    if not (path / "config.json").is_file():
        raise CheckpointNotFound(f"not a checkpoint folder (no config.json): {path}")
    return path
