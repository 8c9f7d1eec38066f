"""Where a state text's values lie: the one scanner of the locals' and the return value's JSON strings.

A state in the neural-debugger language (`model.prompt.language`) writes each frame's locals as the
plain text after ``<|line_sep|>`` that starts ``N{`` (a listing line is ``N text``, a breakpoint ``N``
alone): ``{"name":"repr",...}``, a delta ending with ``..``; and the pending return value as the plain
text after ``<|return_sep|>``: a name, then its repr as a JSON string. Exception messages and stdout
are not values here.

`value_strings(text, partial)` gives each of those value strings in order (with `partial`, the last
one may still be open: a state being generated); `scan_locals(text, brace)` reads one locals object.
They need no parse of the whole state, so a segment (a state, an action, a header) scans alike alone
or within the whole text, and a text that is not well formed gives what could be read. The decoding
rules (`model.decode.repr_check`, `model.decode.confidence`) and the value-chars tokenization
(`model.prompt.value_chars`) all find values through them.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from model.prompt.language import _SPLIT_RE, LINE_SEP, RETURN_SEP, SPECIAL_TOKENS

_SPECIAL = frozenset(SPECIAL_TOKENS)
LOCALS_START = re.compile(r"[0-9]+\{")  # a frame's line number and the locals object that follows it
REST = ".."  # a delta's unchanged rest


def json_string_end(text: str, start: int) -> int:
    """Index just past the JSON string opening at `start` (ValueError if there is none)."""
    if start >= len(text) or text[start] != '"':
        raise ValueError("expected a JSON string")
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == '"':
            return i + 1
        i += 1
    raise ValueError("unterminated JSON string")


def _string_end(text: str, start: int) -> int | None:
    try:
        return json_string_end(text, start)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class ValueString:
    """One value's JSON string in a state text: a local's (`key`: its name's JSON string) or the return value's."""

    start: int  # the opening quote
    end: int  # just past the closing quote; the end of the text when not `closed`
    closed: bool
    key: tuple[int, int] | None = None  # a local's name as a JSON string (with its quotes); None for the return value

    @property
    def body(self) -> tuple[int, int]:
        """(start, end) of the text between the quotes (to the end of the text when not closed)."""
        return self.start + 1, self.end - 1 if self.closed else self.end

    def name(self, text: str) -> str | None:
        """The local's name (None for the return value)."""
        return None if self.key is None else str(json.loads(text[self.key[0] : self.key[1]]))


@dataclass
class LocalsObject:
    """One frame's locals object as read: its pairs' value strings, the ``..`` marker, where it ends."""

    values: list[ValueString] = field(default_factory=list)
    rest: tuple[int, int] | None = None  # the span of ``..``
    end: int | None = None  # just past the closing ``}``; None when the object is cut off or not well formed


def scan_locals(text: str, brace: int, *, partial: bool = False) -> LocalsObject:
    """The locals object opening at ``text[brace]`` (``{``), read up to its ``}`` or to what cannot be read.

    With `partial`, a value string still open at the end of `text` is given (closed False)."""
    found = LocalsObject()
    i = brace + 1
    if text[i : i + 1] == "}":  # {}: no locals
        found.end = i + 1
        return found
    while i < len(text):  # an item (a pair or ``..``), then ``,`` and the next or ``}``
        if text.startswith(REST, i):
            found.rest = (i, i + len(REST))
            i += len(REST)
        elif text[i] == '"':
            key_end = _string_end(text, i)
            if key_end is None or text[key_end : key_end + 1] != ":" or text[key_end + 1 : key_end + 2] != '"':
                return found
            value_end = _string_end(text, key_end + 1)
            if value_end is None:
                if partial:
                    found.values.append(ValueString(key_end + 1, len(text), False, (i, key_end)))
                return found
            found.values.append(ValueString(key_end + 1, value_end, True, (i, key_end)))
            i = value_end
        else:
            return found
        if text[i : i + 1] == "}":
            found.end = i + 1
            return found
        if text[i : i + 1] != ",":
            return found
        i += 1
    return found


def value_strings(text: str, *, partial: bool = False) -> Iterator[ValueString]:
    """The value strings of every frame's locals and of the return value in a state text, in order.

    With `partial` (a state being generated), a value still open at the end of the text is given too."""
    pos = 0
    previous: str | None = None
    for piece in _SPLIT_RE.split(text):
        start, pos = pos, pos + len(piece)
        if not piece:
            continue
        if piece in _SPECIAL:
            previous = piece
            continue
        if previous == LINE_SEP and (m := LOCALS_START.match(piece)):
            for value in scan_locals(piece, m.end() - 1, partial=partial).values:
                yield _shifted(value, start)
        elif previous == RETURN_SEP:
            quote = piece.find('"')
            if quote > 0:
                end = _string_end(piece, quote)
                if end is not None:
                    yield ValueString(start + quote, start + end, True)
                elif partial:
                    yield ValueString(start + quote, pos, False)
        previous = None


def _shifted(value: ValueString, offset: int) -> ValueString:
    key = None if value.key is None else (value.key[0] + offset, value.key[1] + offset)
    return ValueString(value.start + offset, value.end + offset, value.closed, key)
