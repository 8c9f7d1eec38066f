"""A step's budget: how much wall time and how many decoded tokens one predicted stop may take.

A debugger is used one keypress at a time, so a step is bounded: `StepBudget` says how long (seconds) and how
many generated tokens (over every attempt and candidate of the step) it may spend; `Spending` is one step's
account of it. When it runs out the session stops drawing candidates and retries, a generation in flight is cut
(its text closed into a well-formed state, shown with its low confidence) and `Spending.cuts` says what was left
out, for the Debug Console. Nothing here looks at program values.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

STEP_SECONDS = 2.5  # default wall time of one step (the adapter's; a session without a budget is unbounded)
STEP_TOKENS = 640  # default tokens decoded per step, over all attempts and candidates


@dataclass(frozen=True)
class StepBudget:
    """Per step: `seconds` of wall time and `tokens` decoded (None: that side unbounded)."""

    seconds: float | None = STEP_SECONDS
    tokens: int | None = STEP_TOKENS

    def start(self) -> "Spending":
        return Spending(self, time.monotonic())


@dataclass
class Spending:
    """One step's use of its budget: tokens decoded so far and what was cut for lack of budget."""

    budget: StepBudget
    started: float
    tokens: int = 0
    cuts: list[str] = field(default_factory=list)

    @property
    def deadline(self) -> float | None:
        return None if self.budget.seconds is None else self.started + self.budget.seconds

    def tokens_left(self) -> int | None:
        return None if self.budget.tokens is None else max(0, self.budget.tokens - self.tokens)

    def exhausted(self) -> bool:
        deadline = self.deadline
        left = self.tokens_left()
        return (deadline is not None and time.monotonic() >= deadline) or left == 0

    def elapsed(self) -> float:
        """Seconds since the step began."""
        return time.monotonic() - self.started

    def fits(self, seconds: float) -> bool:
        """Whether `seconds` more of work still end before the deadline (and a token is left to decode)."""
        deadline = self.deadline
        return not self.exhausted() and (deadline is None or time.monotonic() + seconds <= deadline)

    def limit(self, max_tokens: int) -> int:
        """`max_tokens` within the tokens left."""
        left = self.tokens_left()
        return max_tokens if left is None else min(max_tokens, left)

    def spend(self, tokens: int) -> None:
        self.tokens += tokens

    def cut(self, what: str) -> None:
        if what not in self.cuts:
            self.cuts.append(what)

    def summary(self) -> str:
        """What was cut, for the user (empty when nothing was)."""
        if not self.cuts:
            return ""
        limits = []
        if self.budget.seconds is not None:
            limits.append(f"{self.budget.seconds:g} s")
        if self.budget.tokens is not None:
            limits.append(f"{self.budget.tokens} tokens")
        return f"the step budget ({' / '.join(limits)}) ran out: " + "; ".join(self.cuts)
