"""Trajectory shard files: ``shard-NNNNN.jsonl``, one `protocol.Trajectory` JSON per line, and the
random generator each shard is drawn from (a function of the dataset seed and the shard index).

The file format every dataset writer (`tracegen.dataset`, `tracegen.posing`) and reader shares.
"""
from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from pathlib import Path

from protocol.debugger import Trajectory


def shard_rng(seed: int, index: int) -> random.Random:
    """The generator of shard `index`: a function of (seed, index) only."""
    digest = hashlib.sha256(f"neural-debugger-synth:{seed}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def shard_name(index: int) -> str:
    return f"shard-{index:05d}.jsonl"


def read_shard(path: Path | str) -> Iterator[Trajectory]:
    """The trajectories of one shard file."""
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield Trajectory.model_validate_json(line)
