"""Greedy decoding of a whole number (a frame's line), scored as one choice instead of digit by digit.

Digits are one token each, so a digit-by-digit greedy decoder commits to the first digit before it
sees the rest: a model that puts 0.3 on line 12, 0.3 on line 14 and 0.35 on line 3 writes "1"
(0.6 for every line from 10 to 19), and then, when line 1 is allowed to end there, may well stop at
"1", a line it never wanted. `best_number` finds the number with the highest probability *as a
whole*: the product of its digits' probabilities times the probability that no further digit
follows. It is an exact best-first (uniform-cost) search over the digit tree: scores only go down
as a prefix grows, so the first complete number taken off the heap is the most probable one. Each
expansion costs one forward pass; a confident model needs two or three.

The search knows nothing of models or caches: `expand(prefix)` returns the next-token
log-probabilities after `prefix`, `can_extend` / `can_end` say what the constraint allows.
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

LogProbs = Sequence[float]


@dataclass(frozen=True)
class NumberChoice:
    """The chosen number and the log-probability of each of its digit tokens (in order)."""

    digits: str
    logprobs: tuple[float, ...]
    expansions: int


def _log1mexp(total: float) -> float:
    """log(1 - p) for a probability p in [0, 1], floored so that an impossible end is only very unlikely."""
    return math.log(max(1.0 - total, 1e-30))


def best_number(
    root: LogProbs,
    expand: Callable[[str], LogProbs],
    *,
    digit_ids: Mapping[str, int],
    continue_ids: Sequence[int],
    can_extend: Callable[[str], bool],
    can_end: Callable[[str], bool],
    max_digits: int = 6,
    max_expansions: int = 64,
) -> NumberChoice | None:
    """The most probable complete number under the model and the constraint, or None.

    root: log-probabilities of the first digit. expand(prefix): log-probabilities after `prefix`
    (one forward pass). digit_ids: each digit character's token id. continue_ids: every token that
    would continue the number (its text starts with a digit); the probability of ending is one minus
    their total. None when no number is allowed or the search runs past `max_expansions` (the
    caller falls back to token-by-token decoding).
    """
    # heap entries: (-score, tie, prefix, digit logprobs, ended)
    heap: list[tuple[float, int, str, tuple[float, ...], bool]] = []
    tie = 0

    def push_children(prefix: str, score: float, path: tuple[float, ...], dist: LogProbs) -> None:
        nonlocal tie
        if prefix and can_end(prefix):
            end = _log1mexp(sum(math.exp(dist[i]) for i in continue_ids))
            tie += 1
            heapq.heappush(heap, (-(score + end), tie, prefix, path, True))
        if len(prefix) >= max_digits:
            return
        for char, token in digit_ids.items():
            lp = dist[token]
            if lp == -math.inf or not can_extend(prefix + char):
                continue
            tie += 1
            heapq.heappush(heap, (-(score + lp), tie, prefix + char, path + (lp,), False))

    push_children("", 0.0, (), root)
    expansions = 0
    while heap:
        neg, _, prefix, path, ended = heapq.heappop(heap)
        if ended:
            return NumberChoice(prefix, path, expansions)
        if expansions >= max_expansions:
            return None
        expansions += 1
        push_children(prefix, -neg, path, expand(prefix))
    return None


@dataclass(frozen=True)
class ForcedNumber:
    """A number the grammar forces (its only allowed digits): the choice `best_number` makes, known without a search."""

    digits: str
    ids: tuple[int, ...]

    def scored(self, rows: Sequence[object], logprobs_of: Callable[[object], Sequence[float]]) -> NumberChoice:
        """The choice with each digit's log-probability, from the row it is chosen from (`rows[i]` before digit i)."""
        return NumberChoice(self.digits, tuple(float(logprobs_of(row)[token]) for row, token in zip(rows, self.ids)), 0)


def forced_number_digits(forced: str) -> str:
    """The digits `forced` (text a grammar forces) starts with, when a character that is not a digit follows them (the
    number ends there); "" otherwise."""
    end = 0
    while end < len(forced) and forced[end].isascii() and forced[end].isdigit():
        end += 1
    return forced[:end] if 0 < end < len(forced) else ""
