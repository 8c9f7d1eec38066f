"""Draft tokens for a decoding step by looking them up in what came before (prompt-lookup speculation).

A predicted state repeats most of the previous one: the frames, the locals that did not change, the same
brackets and quotes. `LookupDrafter` finds the latest earlier place where the last few tokens of the prompt
and answer so far occurred, and proposes the tokens that followed there. The transformers backend runs a chosen
token and the proposal through the model in one call, then keeps each proposed token only while the decoding
rule (greedy or a seeded sample, under the step's constraint) chooses that very token from the row before it:
the answer is the one token-by-token decoding gives, in fewer model calls (`docs/speed.md`).
"""
from __future__ import annotations

from collections.abc import Sequence

MATCH_LENGTHS = (3, 2)  # n-grams looked up, longest first: one token alone matches too much to be worth a call


class LookupDrafter:
    """The tokens seen so far (prompt, then the answer as it grows) and, per n-gram, where it last ended."""

    def __init__(self, prompt_ids: Sequence[int]) -> None:
        self.ids: list[int] = []
        self._last_end: dict[tuple[int, ...], int] = {}  # n-gram -> index just past its latest occurrence
        self._pending: dict[tuple[int, ...], int] = {}  # the n-grams ending at the last token (indexed once it is not last)
        self.extend(prompt_ids)

    def extend(self, ids: Sequence[int]) -> None:
        for token in ids:
            self._last_end.update(self._pending)
            self.ids.append(int(token))
            end = len(self.ids)
            self._pending = {tuple(self.ids[end - n:]): end for n in MATCH_LENGTHS if end >= n}

    def truncate(self, length: int) -> None:
        """Forget every token from `length` on (a decoding that backs out of a dead end, rarely: the index is rebuilt)."""
        if length < len(self.ids):
            kept = self.ids[:length]
            self.ids, self._last_end, self._pending = [], {}, {}
            self.extend(kept)

    def propose(self, limit: int, after: Sequence[int] = ()) -> list[int]:
        """Up to `limit` tokens that followed the latest earlier occurrence of the last n tokens (longest n first);
        `after`: tokens taken to follow those seen (a draft already made), the proposal goes on from them."""
        if limit <= 0:
            return []
        tail = [*self.ids[-max(MATCH_LENGTHS):], *after]  # the last tokens seen, the draft's after them
        end = len(self.ids)
        for n in MATCH_LENGTHS:
            if len(tail) < n:
                continue
            start = self._last_end.get(tuple(tail[-n:]))
            if start is not None and start < end:
                return self.ids[start:min(start + limit, end)]
        return []
