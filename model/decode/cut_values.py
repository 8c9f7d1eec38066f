"""A predicted state cut off by its token budget: the repetition it ran into, and how to close its open value.

A small model that loses track of a value often repeats its last item until the budget runs out
(``'0000...``, ``['p', 'u', 'u', 'u', ...``). Sampling more tokens does not end such a text, and
closers that only finish the JSON around it (``"}``) cannot end a Python repr that is still open.

`runaway(text)` finds the first long repetition (its start and period); `trim_runaway` keeps the
text up to where the repetition began plus a few periods. `repeating_tail(data)` says, token by token and
cheaply, whether a text being decoded now ends inside such a repetition within one value (no quote or
special token in it: a deep recursion's repeated frames are real), and `tail_runaway(text)` where it began. `value_closer(text)` is what closes the
repr the text stops inside (its open Python string, then its open brackets, innermost first) and
then the JSON string holding it, e.g. ``']"`` after ``{"x":"['a', 'b``. They read the text only:
they never run anything. The session applies them to inverse actions (`NeuralDebugger._generate_state`).
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_PERIOD = 48  # characters in one repeating unit
MIN_RUN = 96  # characters of repetition before a stretch counts as a runaway
KEEP_PERIODS = 2  # periods of the repetition kept when it is trimmed

_CLOSING = {"[": "]", "(": ")", "{": "}"}


@dataclass(frozen=True)
class Runaway:
    """A repetition that begins at `start` and repeats every `period` characters."""

    start: int
    period: int

    def cut(self, text: str, keep_periods: int = KEEP_PERIODS) -> str:
        """`text` cut `keep_periods` periods after where this repetition began."""
        return text[: self.start + keep_periods * self.period]


def runaway(text: str, max_period: int = MAX_PERIOD, min_run: int = MIN_RUN) -> Runaway | None:
    """The earliest repetition in `text`: a stretch of at least `min_run` characters (and two periods)
    that repeats with a period of at most `max_period` characters (the shortest such period), or None.

    The earliest, not the last: a runaway can drift into another one (``left-left-...-\\n-\\n-``)."""
    best: Runaway | None = None
    for period in range(1, min(max_period, len(text) // 2) + 1):
        matched = 0  # characters so far with text[i] == text[i + period]
        for i in range(len(text) - period):
            if text[i] != text[i + period]:
                matched = 0
                continue
            matched += 1
            if matched + period >= max(min_run, 2 * period):
                start = i - matched + 1
                if best is None or start < best.start:
                    best = Runaway(start=start, period=period)
                break
    return best


def repeating_tail(data: bytes, max_period: int = MAX_PERIOD, min_run: int = MIN_RUN) -> bool:
    """Whether the last `min_run` bytes of `data` repeat with a period of at most `max_period` and hold no ``"`` nor
    ``<`` (they lie inside one JSON string: a value or printed output, not a stack of frames). A few slice compares:
    cheap enough to ask after every decoded token."""
    if len(data) < min_run:
        return False
    tail = data[-min_run:]
    if b'"' in tail or b"<" in tail:
        return False
    return any(data[-min_run:-period] == data[-min_run + period:] for period in range(1, min(max_period, min_run // 2) + 1))


def tail_runaway(text: str, max_period: int = MAX_PERIOD, min_run: int = MIN_RUN) -> Runaway | None:
    """The repetition `text` ends in (`repeating_tail`'s), reaching back to where it began, or None."""
    if not repeating_tail(text.encode("utf-8"), max_period, min_run):
        return None
    for period in range(1, min(max_period, min_run // 2) + 1):
        if text[-min_run:-period] == text[-min_run + period:]:
            start = len(text) - min_run
            while start > 0 and text[start - 1] == text[start - 1 + period]:
                start -= 1
            return Runaway(start=start, period=period)
    return None  # the bytes repeat but the characters do not line up (a multi-byte character across the period)


def trim_runaway(text: str, keep_periods: int = KEEP_PERIODS, max_period: int = MAX_PERIOD, min_run: int = MIN_RUN) -> str:
    """`text` cut `keep_periods` periods after where its runaway began (unchanged without one)."""
    found = runaway(text, max_period, min_run)
    return text if found is None else found.cut(text, keep_periods)


def value_closer(text: str) -> str:
    """What closes the JSON string `text` ends inside: the repr's open quote and brackets, then ``"``.

    Empty when `text` is not inside a JSON string. Escapes are followed at both levels (JSON's
    backslash, then Python's inside a repr string); a closing ``"`` of the repr is written ``\\"``.
    """
    return prefix_closers(text)[-1]


def prefix_closers(text: str) -> list[str]:
    """`value_closer` of every prefix of `text` (``text[:i]`` at index i), in one pass."""
    scan = ValueScan()
    closers = [scan.closer()]
    for char in text:
        scan.feed(char)
        closers.append(scan.closer())
    return closers


class ValueScan:
    """Where a text fed so far stands: inside a JSON string or not, and inside it the repr's open quote and
    brackets; `closer()` is `value_closer` of that text."""

    def __init__(self) -> None:
        self.in_json = False
        self.json_escape = False
        self.hex_left = 0  # hex digits still due in a \uXXXX escape
        self.quote = ""
        self.py_escape = False
        self.brackets: list[str] = []

    def feed_text(self, text: str) -> None:
        for char in text:
            self.feed(char)

    def feed(self, char: str) -> None:
        if not self.in_json:
            if char == '"':
                self.in_json, self.quote, self.py_escape, self.brackets = True, "", False, []
            return
        if self.hex_left:  # inside a \uXXXX escape: its character is never a quote, bracket or backslash
            self.hex_left -= 1
            if self.hex_left:
                return
            char = "u"
        elif self.json_escape:
            self.json_escape = False
            if char == "u":
                self.hex_left = 4
                return
            char = {"n": "\n", "t": "\t", "r": "\r"}.get(char, char)
        elif char == "\\":
            self.json_escape = True
            return
        elif char == '"':
            self.in_json = False
            return
        self._feed_repr(char)

    def _feed_repr(self, char: str) -> None:
        if self.quote:
            if self.py_escape:
                self.py_escape = False
            elif char == "\\":
                self.py_escape = True
            elif char == self.quote:
                self.quote = ""
        elif char in "'\"":
            self.quote = char
        elif char in _CLOSING:
            self.brackets.append(_CLOSING[char])
        elif char in ")]}" and self.brackets and self.brackets[-1] == char:
            self.brackets.pop()

    def closer(self) -> str:
        if not self.in_json or self.json_escape or self.hex_left or self.py_escape:
            return ""
        closer = self.quote + "".join(reversed(self.brackets))
        return closer.replace('"', '\\"') + '"'
