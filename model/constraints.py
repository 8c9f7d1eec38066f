"""Constrained decoding: a predicted state must be well formed.

`RegexConstraint` is the one mechanism: a regular expression over the generated text. The
transformers backend checks prefixes incrementally (`allows`, a partial match with the `regex`
package), vLLM receives the same pattern through ``structured_outputs``. The pattern for a state
is built per step by `state_constraint` from the program (its lines, its function names) and the
previous state (so the stack stays consistent).
"""
from __future__ import annotations

from functools import lru_cache

import regex as re_partial


@lru_cache(maxsize=64)
def _compile(pattern: str) -> "re_partial.Pattern[str]":
    return re_partial.compile(pattern, re_partial.DOTALL)


class RegexConstraint:
    """Generated text must match `regex` in full; `allows` accepts every prefix of a match."""

    def __init__(self, regex: str) -> None:
        self.regex = regex
        self._pattern = _compile(regex)

    def allows(self, text: str) -> bool:
        return self._pattern.fullmatch(text, partial=True) is not None

    def complete(self, text: str) -> bool:
        return self._pattern.fullmatch(text) is not None

    def __repr__(self) -> str:
        return f"RegexConstraint({self.regex[:60]!r}{'...' if len(self.regex) > 60 else ''})"
