"""Learning-rate schedules (warmup + cosine, warmup-stable-decay) and the resumable order in which
training sequences are visited.

Schedules are pure functions of the step: `lr_factor` is the multiplier of each parameter group's
peak learning rate, so one schedule drives optimizers with different peaks (AdamW and Muon).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

ScheduleKind = Literal["cosine", "wsd"]
SCHEDULES: tuple[str, ...] = ("cosine", "wsd")


def lr_at(step: int, total: int, peak: float, warmup: int, min_ratio: float) -> float:
    """Linear warmup to `peak` over `warmup` steps, then cosine decay to `peak * min_ratio` at `total`."""
    if warmup > 0 and step < warmup:
        return peak * (step + 1) / warmup
    span = max(1, total - warmup)
    progress = min(1.0, max(0.0, (step - warmup) / span))
    return peak * (min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress)))


def wsd_factor(step: int, total: int, warmup: int, min_ratio: float, decay_start: int | None) -> float:
    """Warmup-stable-decay, as a multiplier of the peak: linear warmup over `warmup` steps, then 1.0 until
    `decay_start` (None: not decided yet, i.e. still stable), then linear decay to `min_ratio` at `total`."""
    if warmup > 0 and step < warmup:
        return (step + 1) / warmup
    if decay_start is None or step < decay_start:
        return 1.0
    span = max(1, total - decay_start)
    progress = min(1.0, (step - decay_start) / span)
    return min_ratio + (1.0 - min_ratio) * (1.0 - progress)


def lr_factor(kind: str, step: int, total: int, warmup: int, min_ratio: float, decay_start: int | None = None) -> float:
    """The learning rate at `step` as a fraction of the peak, for schedule `kind` ('cosine' or 'wsd')."""
    if kind == "cosine":
        return lr_at(step, total, 1.0, warmup, min_ratio)
    if kind == "wsd":
        return wsd_factor(step, total, warmup, min_ratio, decay_start)
    raise ValueError(f"unknown schedule {kind!r}; choose one of {', '.join(SCHEDULES)}")


def wsd_decay_due(step: int, total: int, fraction: float, *, remaining_s: float | None = None, budget_s: float | None = None) -> bool:
    """Whether a warmup-stable-decay run should be decaying at `step`: with a time budget, once the
    remaining time is at most `fraction` of the budget; by steps, once `step` reaches the last `fraction`
    of the `total` steps. (Either suffices when both are known.)

    Cooling a run down early: resume it with a smaller `--steps` or `--time-budget`; the decay starts
    at once when the new end is within the fraction."""
    by_steps = step >= total - round(fraction * total)
    if budget_s is None or remaining_s is None:
        return by_steps
    return remaining_s <= fraction * budget_s or by_steps


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

    def take_rank(self, count: int, rank: int, world: int) -> np.ndarray:
        """This rank's `count` of the next `count * world` indices (every rank advances the cursor alike)."""
        return self.take(count * world)[rank * count : (rank + 1) * count]

    @property
    def epochs(self) -> float:
        return self.cursor / self.n if self.n else 0.0
