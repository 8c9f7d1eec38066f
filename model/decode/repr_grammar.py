"""The grammar of a value's repr as debugpy shows it, checked one character at a time.

A repr of a builtin value, and of the library values programs use, is built from a few pieces:
numbers (``-1``, ``2.5e-07``, ``(1+2j)``), strings and bytes (``'a'``, ``b"x"``), the names
``None True False Ellipsis NotImplemented inf nan``, brackets holding items separated by ``", "``
(``[..]``, ``(..)``, ``{k: v}``, ``{a, b}``), calls of a (dotted) name with positional or keyword
arguments (``deque([1], maxlen=3)``, ``Point(x=1, y=2)``, ``datetime.date(2020, 1, 1)``) and
angle-bracket descriptions taken as opaque text (``<class 'int'>``, ``<function f at 0x?>``).

`grammar_problem(text, partial)` says why `text` cannot be such a repr (with `partial`: cannot be
the start of one), or None. It also refuses a dict or set literal with the same key twice (a
builtin's repr is canonical: the same key is the same text). A repr holding ``...`` (debugpy's cut
of a long value, or a recursive container) is not judged. One left-to-right pass, no backtracking,
so a constrained decoder can ask it after every token (`model.decode.repr_check`); `ReprChecker` asks it
of texts that grow a token at a time, reading only what each adds.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

BARE_NAMES = frozenset({"None", "True", "False", "Ellipsis", "NotImplemented", "inf", "nan", "infj", "nanj"})
STRING_PREFIXES = frozenset({"b", "B", "r", "R", "u", "U", "br", "rb", "Br", "bR", "BR", "Rb", "rB", "RB"})
_CLOSERS = {"[": "]", "(": ")", "{": "}", "call": ")"}
_NUMBER_CHARS = frozenset("0123456789.eEj_")
# a number as repr writes it (no underscores; numpy's "1." too), and every start of one
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?j?")
_NUMBER_START = re.compile(r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?j?")


@dataclass
class _Box:
    """An open bracket: what opened it and what its current item holds so far."""

    opener: str  # "[", "(", "{" or "call" (a name's "(")
    start: int  # index where the current item begins
    keys: set[str] = field(default_factory=set)
    kind: str = ""  # for "{": "" (not known yet), "dict" or "set"
    in_value: bool = False  # a dict item after its ":"
    items: int = 0  # items finished by a comma
    comma: bool = False  # the last thing in the box was a comma
    complex: bool = False  # for "(": a complex number's second term was written


class _Refused(Exception):
    pass


class _Scanner:
    """A pushdown automaton over the characters of a repr; `feed` raises `_Refused` at the first impossible one."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[_Box] = []
        self.mode = "value"  # value, sign, number, name, string, opaque, after
        self.spaces = 0  # spaces written where a value is expected
        self.token_start = 0
        self.quote = ""
        self.escaped = False
        self.depth = 0  # "<" nesting inside an opaque description
        self.opaque_quote = ""

    def run(self, start: int = 0) -> None:
        for i in range(start, len(self.text)):
            self.feed(i, self.text[i])

    def resumed(self, text: str) -> "_Scanner":
        """A copy of this scanner for `text`, which extends the text it has read (feed it from `len(self.text)`)."""
        copy = _Scanner.__new__(_Scanner)
        copy.__dict__.update(self.__dict__)
        copy.text = text
        copy.stack = [_Box(b.opener, b.start, set(b.keys), b.kind, b.in_value, b.items, b.comma, b.complex) for b in self.stack]
        return copy

    def feed(self, i: int, char: str) -> None:
        handler = getattr(self, f"_{self.mode}")
        handler(i, char)

    # ---------------------------------------------------------------- modes

    def _value(self, i: int, char: str) -> None:
        if char == " ":
            if self.spaces or i == 0 or self.text[i - 1] not in ",:":
                raise _Refused("a space where a value should begin")
            self.spaces += 1
            return
        self.spaces = 0
        self.token_start = i
        if char.isdigit():
            self.mode = "number"
        elif char == "-":
            self.mode = "sign"
        elif char.isalpha() or char == "_":
            self.mode = "name"
        elif char in "'\"":
            self.quote, self.escaped, self.mode = char, False, "string"
        elif char in "[({":
            self.stack.append(_Box(char, i + 1))
        elif char == "<":
            self.depth, self.opaque_quote, self.mode = 1, "", "opaque"
        elif char in ")]}":
            self._close_empty(i, char)
        else:
            raise _Refused(f"{char!r} cannot begin a value")

    def _sign(self, i: int, char: str) -> None:
        if char.isdigit():
            self.mode = "number"
        elif char.isalpha():
            self.mode = "name"
        else:
            raise _Refused(f"{char!r} after a sign")

    def _number(self, i: int, char: str) -> None:
        if char in _NUMBER_CHARS or (char in "+-" and self.text[i - 1] in "eE"):
            if not _NUMBER_START.fullmatch(self.text, self.token_start, i + 1):
                raise _Refused(f"{self.text[self.token_start:i + 1]!r} is not a number")
            return
        self._number_end(i)
        self.mode = "after"
        self._after(i, char)

    def _number_end(self, end: int) -> None:
        if not _NUMBER.fullmatch(self.text, self.token_start, end):
            raise _Refused(f"{self.text[self.token_start:end]!r} is not a number")

    def _name(self, i: int, char: str) -> None:
        if char.isalnum() or char == "_":
            return
        if char == ".":
            if self.text[i - 1] == ".":
                raise _Refused("'..' in a name")
            return
        name = self.text[self.token_start:i]
        if name.endswith("."):
            raise _Refused(f"the name {name!r} ends with a dot")
        if char in "'\"" and name in STRING_PREFIXES:
            self.quote, self.escaped, self.mode = char, False, "string"
        elif char == "(":
            self.stack.append(_Box("call", i + 1))
            self.mode = "value"
        elif char == "=":
            box = self.stack[-1] if self.stack else None
            if box is None or box.opener != "call" or "." in name or self.text[box.start:self.token_start].strip():
                raise _Refused(f"'=' after {name!r} outside a call's keyword argument")
            self.mode = "value"
        else:
            self._bare_name(name)
            self.mode = "after"
            self._after(i, char)

    def _bare_name(self, name: str) -> None:
        plain = name.lstrip("-")
        if "." not in plain and plain not in BARE_NAMES:
            raise _Refused(f"{name!r} is not a value")

    def _string(self, i: int, char: str) -> None:
        if self.escaped:
            self.escaped = False
        elif char == "\\":
            self.escaped = True
        elif char == self.quote:
            self.mode = "after"

    def _opaque(self, i: int, char: str) -> None:
        if self.opaque_quote:
            if char == self.opaque_quote:
                self.opaque_quote = ""
            return
        if char in "'\"":
            self.opaque_quote = char
        elif char == "<":
            self.depth += 1
        elif char == ">":
            self.depth -= 1
            if self.depth == 0:
                self.mode = "after"

    def _after(self, i: int, char: str) -> None:
        if not self.stack:
            raise _Refused(f"{char!r} after a whole value")
        box = self.stack[-1]
        if char == ",":
            self._end_item(box, i)
            box.start, box.items, box.comma, box.in_value = i + 1, box.items + 1, True, False
            self.mode = "value"
        elif char == ":" and box.opener == "{" and box.kind != "set" and not box.in_value:
            self._new_key(box, self.text[box.start:i])
            box.kind, box.in_value, box.comma = "dict", True, False
            self.mode = "value"
        elif char in "+-" and box.opener == "(":
            box.complex = True
            self.mode = "value_term"
        elif char in ")]}":
            if _CLOSERS[box.opener] != char:
                raise _Refused(f"{char!r} closes {box.opener!r}")
            if box.opener == "(" and not box.items and not box.complex:
                raise _Refused("one value in parentheses without ','")  # (8) is no repr; (8,) a tuple, (1+2j) a complex
            self._end_item(box, i)
            self.stack.pop()
        else:
            raise _Refused(f"{char!r} after a value")

    def _value_term(self, i: int, char: str) -> None:
        """The second term of a complex number, ``(1+2j)``."""
        if char.isdigit():
            self.token_start, self.mode = i, "number"
        elif char.isalpha():
            self.token_start, self.mode = i, "name"
        else:
            raise _Refused(f"{char!r} in a complex number")

    # ---------------------------------------------------------------- boxes

    def _close_empty(self, i: int, char: str) -> None:
        if not self.stack:
            raise _Refused(f"{char!r} closes nothing open")
        box = self.stack[-1]
        if _CLOSERS[box.opener] != char:
            raise _Refused(f"{char!r} closes {box.opener!r}")
        if box.comma and not (box.opener == "(" and box.items == 1):
            raise _Refused("a value missing after ','")
        if box.in_value:
            raise _Refused("a dict key without a value")
        self.stack.pop()
        self.mode = "after"

    def _end_item(self, box: _Box, i: int) -> None:
        if box.opener != "{":
            return
        if box.kind == "dict" and not box.in_value:
            raise _Refused("a dict item without ':'")
        if box.kind != "dict":
            box.kind = "set"
            self._new_key(box, self.text[box.start:i])

    @staticmethod
    def _new_key(box: _Box, raw: str) -> None:
        key = raw.strip()
        if key in box.keys:
            raise _Refused(f"the key {key[:40]} twice")
        box.keys.add(key)

    # ---------------------------------------------------------------- the end

    def end_problem(self) -> str | None:
        """Why the text, as a whole, is not a repr (None: it is)."""
        if self.mode == "string":
            return "an unclosed quote"
        if self.mode == "opaque":
            return "an unclosed '<'"
        if self.stack:
            opener = self.stack[-1].opener
            return f"an unclosed {'(' if opener == 'call' else opener!r}"
        if self.mode in ("value", "sign", "value_term"):
            return "an unfinished value"
        if self.mode == "number":
            try:
                self._number_end(len(self.text))
            except _Refused as exc:
                return str(exc)
        if self.mode == "name":
            name = self.text[self.token_start:]
            if name.endswith("."):
                return f"the name {name!r} ends with a dot"
            try:
                self._bare_name(name)
            except _Refused as exc:
                return str(exc)
        return None


def grammar_problem(text: str, *, partial: bool = False) -> str | None:
    """Why `text` cannot be a repr (with `partial`: the start of one); None when it can, or is not judged."""
    if "..." in text:
        return None
    if not partial and not text.strip():
        return "an empty value"
    scanner = _Scanner(text)
    try:
        scanner.run()
    except _Refused as exc:
        return str(exc)
    return None if partial else scanner.end_problem()


class ReprChecker:
    """`grammar_problem` for a decoder's values, which grow a few characters at a time: it keeps the scanner after each
    start it accepted (up to `size`) and reads only the characters a text adds to the longest of them it extends, and it
    remembers the answers about whole values. The same answers as `grammar_problem`, without reading every value again
    at every token."""

    LOOKBACK = 32  # characters a text may add to a remembered start (a token's worth, with room)

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._starts: dict[str, _Scanner] = {}  # accepted starts -> the scanner after them
        self._whole: dict[str, str | None] = {}  # whole values -> their problem

    def problem(self, text: str, *, partial: bool = False) -> str | None:
        if "..." in text:
            return None
        if not partial:
            if text in self._whole:
                return self._whole[text]
            if len(self._whole) >= self.size:
                self._whole.clear()
            problem = self._whole[text] = self._scan(text, partial=False)
            return problem
        return self._scan(text, partial=True)

    def _scan(self, text: str, *, partial: bool) -> str | None:
        if not partial and not text.strip():
            return "an empty value"
        scanner, start = self._resume(text)
        try:
            scanner.run(start)
        except _Refused as exc:
            return str(exc)
        if len(self._starts) >= self.size:
            self._starts.clear()
        self._starts[text] = scanner
        return None if partial else scanner.end_problem()

    def _resume(self, text: str) -> tuple[_Scanner, int]:
        """A scanner for `text` with the longest remembered start of it already read, and where to go on reading."""
        for length in range(len(text), max(-1, len(text) - self.LOOKBACK - 1), -1):
            known = self._starts.get(text[:length])
            if known is not None:
                return known.resumed(text), length
        return _Scanner(text), 0
