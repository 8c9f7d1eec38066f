"""Full and prefix matches of one regular expression over texts that mostly extend each other.

A decoding step asks the same pattern, thousands of times, whether a text can still become a match
(`allows`) and whether it is one (`complete`); the texts are the answer so far plus one candidate token, or
the answer cut shorter and shorter (`model.decode.constraints.close_text`). `regex_matcher(pattern)` gives
an object for that:

- `ByteMatcher` (llguidance, the engine of vLLM's ``guidance`` structured outputs): the pattern becomes an
  automaton over UTF-8 bytes, built lazily, so a matcher for a state's 25,000-character pattern is ready in
  milliseconds where `regex.compile` takes over 100 ms. It keeps the bytes it has consumed: a text that
  shares a prefix with them rolls back to that prefix and consumes only the rest. Its tokenizer has one
  token per byte (`byte_tokenizer`), so a match is a match of text, not of a model's tokens.
- `PartialRegex` (the `regex` package's partial matching): the fallback, when llguidance is missing, rejects
  the pattern, or runs out of its resource limits while matching (the answers up to then were the same).

Both answer alike on the state language (`tests/test_regex_matcher.py` compares them on random walks through
state patterns).
"""
from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Any, Protocol

END_TOKEN = 256  # the byte tokenizer's end-of-text token: one id past the bytes


class TextMatcher(Protocol):
    def allows(self, text: str) -> bool:
        """Whether `text` is a prefix of a match."""

    def complete(self, text: str) -> bool:
        """Whether `text` is a match."""

    def next_bytes(self, text: str) -> frozenset[int] | None:
        """The bytes that may follow `text` in a prefix of a match (empty: none; None: this engine cannot say)."""

    def forced_text(self, text: str) -> str:
        """The text every match that extends `text` continues with (up to where it may end or branch; "": none, or
        this engine cannot say)."""


class PartialRegex:
    """`TextMatcher` by the `regex` package: a full match, or a partial one for prefixes (DOTALL)."""

    def __init__(self, pattern: str) -> None:
        self._compiled = _compile(pattern)

    def allows(self, text: str) -> bool:
        return self._compiled.fullmatch(text, partial=True) is not None

    def complete(self, text: str) -> bool:
        return self._compiled.fullmatch(text) is not None

    def next_bytes(self, text: str) -> frozenset[int] | None:
        return None

    def forced_text(self, text: str) -> str:
        return ""


@lru_cache(maxsize=64)
def _compile(pattern: str) -> Any:
    import regex

    return regex.compile(pattern, regex.DOTALL)


class _Bytes:
    """The vocabulary llguidance's `TokenizerWrapper` reads: token ``b`` is byte ``b``, then `END_TOKEN`."""

    eos_token_id = END_TOKEN
    bos_token_id = None
    tokens = [bytes([byte]) for byte in range(256)] + [b"<|end|>"]
    special_token_ids = [END_TOKEN]

    def __call__(self, data: bytes) -> list[int]:
        return list(data)


@lru_cache(maxsize=1)
def byte_tokenizer() -> Any:
    """llguidance's tokenizer with one token per byte (`_Bytes`); None without llguidance."""
    try:
        import llguidance
    except ImportError:
        return None
    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Bytes()), slices=[])


class MatcherError(RuntimeError):
    """llguidance cannot match this pattern (it rejected it, or a resource limit ran out)."""


class ByteMatcher:
    """`TextMatcher` by an llguidance matcher over bytes that keeps what it consumed (see the module docstring).

    Raises `MatcherError` when llguidance is missing or rejects `pattern`, or (from `allows` and `complete`) when the
    matcher has gone into llguidance's error state, which it never leaves. A lock guards its state, so threads may
    share it."""

    def __init__(self, pattern: str) -> None:
        tokenizer = byte_tokenizer()
        if tokenizer is None:
            raise MatcherError("llguidance is not installed")
        import llguidance

        self._matcher = llguidance.LLMatcher(tokenizer, llguidance.LLMatcher.grammar_from_regex(pattern), log_level=0)
        if self._matcher.is_error():
            raise MatcherError(self._matcher.get_error())
        self._consumed = b""
        self._lock = threading.RLock()

    def allows(self, text: str) -> bool:
        return self._advance(text.encode()) is not None

    def complete(self, text: str) -> bool:
        return bool(self._advance(text.encode()))

    def next_bytes(self, text: str) -> frozenset[int] | None:
        with self._lock:
            if self._advance(text.encode()) is None:
                return frozenset()
            mask = self._matcher.compute_bitmask()  # one bit per token, bytes then END_TOKEN
        return frozenset(byte for byte in range(END_TOKEN) if mask[byte >> 3] >> (byte & 7) & 1)

    def forced_text(self, text: str) -> str:
        with self._lock:
            if self._advance(text.encode()) is None:
                return ""
            fast_forward = getattr(self._matcher, "compute_ff_bytes", None)  # llguidance's: the only bytes a match can take next
            forced = fast_forward() if fast_forward is not None else b""
        return whole_characters(forced)

    def _advance(self, data: bytes) -> bool | None:
        """Bring the matcher to `data`: None when `data` is no prefix of a match, else whether it is a match."""
        with self._lock:
            keep = _common_prefix(self._consumed, data)
            if len(self._consumed) > keep:
                self._matcher.rollback(len(self._consumed) - keep)
            rest = data[keep:]
            taken = self._matcher.try_consume_tokens(list(rest)) if rest else 0
            self._consumed = data[:keep + taken]
            if self._matcher.is_error():
                raise MatcherError(self._matcher.get_error())
            return self._matcher.is_accepting() if taken == len(rest) else None


class FallbackMatcher:
    """`ByteMatcher` while llguidance can, `PartialRegex` from the first `MatcherError` on (or from the start)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._inner: ByteMatcher | PartialRegex
        try:
            self._inner = ByteMatcher(pattern)
        except MatcherError:
            self._inner = PartialRegex(pattern)

    @property
    def engine(self) -> str:
        """"llguidance" or "regex": what answers now."""
        return "llguidance" if isinstance(self._inner, ByteMatcher) else "regex"

    def allows(self, text: str) -> bool:
        return self._ask("allows", text)

    def complete(self, text: str) -> bool:
        return self._ask("complete", text)

    def next_bytes(self, text: str) -> frozenset[int] | None:
        return self._ask("next_bytes", text)

    def forced_text(self, text: str) -> str:
        return self._ask("forced_text", text)

    def _ask(self, question: str, text: str) -> Any:
        try:
            return getattr(self._inner, question)(text)
        except MatcherError:
            self._inner = PartialRegex(self.pattern)
            return getattr(self._inner, question)(text)


ENGINE_VARIABLE = "NEURAL_DEBUGGER_MATCHER"


def regex_matcher(pattern: str, engine: str | None = None) -> TextMatcher:
    """A `TextMatcher` for `pattern`: "auto" (llguidance, falling back to `regex`) or "regex" (the `regex` package
    only); None: the environment's `ENGINE_VARIABLE`, else "auto" (a switch for comparisons and for trouble)."""
    engine = engine or os.environ.get(ENGINE_VARIABLE) or "auto"
    if engine == "regex":
        return PartialRegex(pattern)
    if engine != "auto":
        raise ValueError(f"unknown matcher engine {engine!r} (auto or regex; from {ENGINE_VARIABLE} when not given)")
    return FallbackMatcher(pattern)


def whole_characters(data: bytes) -> str:
    """`data` decoded, less a UTF-8 character it cuts short at its end."""
    for cut in range(len(data), max(len(data) - 4, -1), -1):
        try:
            return data[:cut].decode()
        except UnicodeDecodeError:
            continue
    return ""


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of `a` and `b` (by slice comparisons: the common cases are one a prefix of the other)."""
    if b.startswith(a):
        return len(a)
    if a.startswith(b):
        return len(b)
    low, high = 0, min(len(a), len(b))
    while low < high:  # a[:low] == b[:low], and the common prefix is no longer than high
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
