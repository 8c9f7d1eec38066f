"""Reprs that no Python value has: unbalanced brackets or quotes, a dict or set literal with a repeated key, nothing.

`repr_problem(text, partial)` says why a repr (or, with `partial`, the start of one) cannot be what
debugpy shows for a builtin value, or None. It scans the text once: quotes (with backslash escapes)
and brackets, and inside each ``{...}`` the keys (or set elements) written so far, compared as text
(a builtin's repr is canonical: the same key twice is the same text twice). A repr holding ``...``
(debugpy's cut of a long value, or a recursive container) is not judged.

`values_problem(state_text, partial)` applies it to the values of a state text in the
neural-debugger language (the locals' and the return value's JSON strings, not exception messages or
stdout). `CheckedConstraint` adds it to a `RegexConstraint`: the transformers backend then never
emits a token that makes a value impossible (greedy takes the most probable token that keeps every
value possible). Programs that define ``__repr__`` are not judged (their reprs can be anything).
"""
from __future__ import annotations

import json
import re

from model import language as lang

_STRING_RE = re.compile(r'"((?:[^"\\]|\\.)*)(?:(")|\\?\Z)', re.DOTALL)
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def repr_problem(text: str, *, partial: bool = False) -> str | None:
    """Why `text` cannot be a builtin value's repr (None: it can, or it is not judged)."""
    if "..." in text:
        return None
    stack: list[tuple[str, int, set[str], bool]] = []  # (opener, item start, keys seen, dict?)
    quote = ""
    escaped = False
    for i, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "'\"":
            quote = char
        elif char in _OPEN:
            stack.append((char, i + 1, set(), False))
        elif char in _CLOSE:
            if not stack or stack[-1][0] != _CLOSE[char]:
                return f"{char!r} closes nothing open"
            opener, start, keys, is_dict = stack.pop()
            if opener == "{" and not is_dict and text[start:i].strip():
                problem = _new_key(keys, text[start:i])
                if problem:
                    return problem
        elif stack and stack[-1][0] == "{":
            opener, start, keys, is_dict = stack[-1]
            if char == ":":
                problem = _new_key(keys, text[start:i])
                if problem:
                    return problem
                stack[-1] = (opener, start, keys, True)
            elif char == ",":
                if not is_dict:
                    problem = _new_key(keys, text[start:i])
                    if problem:
                        return problem
                stack[-1] = (opener, i + 1, keys, is_dict)
    if partial:
        return None
    if not text.strip():
        return "an empty value"
    if quote:
        return "an unclosed quote"
    if stack:
        return f"an unclosed {stack[-1][0]!r}"
    return None


def _new_key(keys: set[str], raw: str) -> str | None:
    key = raw.strip()
    if key in keys:
        return f"the key {key[:40]} twice"
    keys.add(key)
    return None


def _decode(body: str) -> str | None:
    """The text of a JSON string body (no quotes), a cut-off escape at its end dropped."""
    body = re.sub(r"\\(u[0-9a-fA-F]{0,3})?$", "", body)
    try:
        return json.loads('"' + body + '"')
    except ValueError:
        return None


def values_problem(state_text: str, *, partial: bool = False) -> str | None:
    """The first impossible value among a state text's locals and return value (partial: the last may be unfinished)."""
    for match in _STRING_RE.finditer(state_text):
        start = match.start()
        before = state_text[:start]
        if not before.endswith(":"):
            sep = before.rfind("<|")
            if sep < 0 or not before.startswith(lang.RETURN_SEP, sep):
                continue
        finished = match.group(2) is not None
        text = _decode(match.group(1))
        if text is None:
            continue
        problem = repr_problem(text, partial=partial and not finished)
        if problem:
            return problem
    return None


class CheckedConstraint:
    """A `RegexConstraint` whose texts also keep every value a possible repr (see the module docstring)."""

    def __init__(self, inner, program: str) -> None:  # noqa: ANN001 - any object with regex/allows/complete
        self.inner = inner
        self.regex = inner.regex
        self.judged = "__repr__" not in program

    def allows(self, text: str) -> bool:
        if not self.inner.allows(text):
            return False
        return not self.judged or _last_value_ok(text)

    def complete(self, text: str) -> bool:
        return self.inner.complete(text) and (not self.judged or values_problem(text) is None)

    def __repr__(self) -> str:
        return f"CheckedConstraint({self.inner!r})"


def _last_value_ok(text: str) -> bool:
    """Only the last string can have changed since the previous prefix was allowed."""
    quote = text.rfind('"')
    if quote < 0:
        return True
    cut = text.rfind(lang.FRAME_SEP[:2], 0, quote)  # from the last special token before it: a small tail
    head = max(cut, 0)
    # the string boundaries need the text from a point outside any string: special tokens never sit in one
    return values_problem(text[head:], partial=True) is None
