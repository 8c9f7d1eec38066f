"""Learning-rate schedule and the resumable order in which training sequences are visited."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def lr_at(step: int, total: int, peak: float, warmup: int, min_ratio: float) -> float:
    """Linear warmup to `peak` over `warmup` steps, then cosine decay to `peak * min_ratio` at `total`."""
    if warmup > 0 and step < warmup:
        return peak * (step + 1) / warmup
    span = max(1, total - warmup)
    progress = min(1.0, max(0.0, (step - warmup) / span))
    return peak * (min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress)))


def warmup_steps(total: int, requested: int | None) -> int:
    """The warmup length: as requested, else 5% of the run capped at 200 steps (at least 1)."""
    if requested is not None:
        return max(0, requested)
    return max(1, min(200, total // 20))


@dataclass
class SequenceOrder:
    """Visits `n` sequences epoch after epoch, each epoch in a fresh seeded permutation.

    `cursor` counts sequences handed out so far (all ranks together): it is the whole data position,
    so saving it is enough to resume exactly.
    """

    n: int
    seed: int
    cursor: int = 0
    _epoch: int = -1
    _perm: np.ndarray | None = None

    def _permutation(self, epoch: int) -> np.ndarray:
        if epoch != self._epoch or self._perm is None:
            self._perm = np.random.default_rng([self.seed, epoch]).permutation(self.n)
            self._epoch = epoch
        return self._perm

    def take(self, count: int) -> np.ndarray:
        """The next `count` sequence indices (wrapping into new epochs)."""
        out = np.empty(count, dtype=np.int64)
        for i in range(count):
            epoch, j = divmod(self.cursor + i, self.n)
            out[i] = self._permutation(epoch)[j]
        self.cursor += count
        return out

    @property
    def epochs(self) -> float:
        return self.cursor / self.n if self.n else 0.0
