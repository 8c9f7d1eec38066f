"""Seeds of sampled answers: the n-th sampled answer to a prompt draws from `draw_seed(seed, prompt, n)`.

A step's plan (`model.decode.spec.SamplingPlan`) draws the greedy answer, then samples. Each backend that
samples (the transformers loop, the vLLM server and engine, which take a per-request seed) counts the
sampled answers per prompt with `DrawCounter`, so a stop's answers do not depend on what the process
decoded before, a stop asked again draws the same answers, and the samples of one stop differ from
each other (one seed for every request would draw the same sample again and again).
"""
from __future__ import annotations

import hashlib
from array import array
from collections.abc import Sequence

MAX_REMEMBERED_PROMPTS = 4096  # prompts whose sampled draws are counted (then the count starts over)


def draw_seed(seed: int, prompt_ids: Sequence[int], draw: int) -> int:
    """The sampling seed of the `draw`-th sampled answer to a prompt: the same in any process and after any other decoding."""
    digest = hashlib.blake2b(array("q", [seed, draw, *prompt_ids]).tobytes(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


class DrawCounter:
    """Counts the sampled answers drawn per prompt since its last greedy answer (a session draws the greedy answer
    first, so the same stop asked again draws the same samples)."""

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)
        self._draws: dict[bytes, int] = {}  # prompt digest -> samples drawn for it so far

    def next_seed(self, prompt_ids: Sequence[int], temperature: float) -> int | None:
        """The seed of this request: None for a greedy one (which starts the prompt's count over), else `draw_seed`."""
        key = hashlib.blake2b(array("q", prompt_ids).tobytes(), digest_size=16).digest()
        if temperature <= 0:
            self._draws.pop(key, None)
            return None
        if len(self._draws) >= MAX_REMEMBERED_PROMPTS and key not in self._draws:
            self._draws.clear()
        draw = self._draws.get(key, 0)
        self._draws[key] = draw + 1
        return draw_seed(self.seed, prompt_ids, draw)
