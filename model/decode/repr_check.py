"""Reprs that no Python value has: text outside the repr grammar, unbalanced brackets or quotes, a dict
or set literal with a repeated key, nothing.

`repr_problem(text, partial)` says why a repr (or, with `partial`, the start of one) cannot be what
debugpy shows for a value, or None: `model.decode.repr_grammar` (numbers, strings, the few bare names,
brackets, calls of names, ``<...>`` descriptions; keys compared as text, since a builtin's repr is
canonical). A repr holding ``...`` (debugpy's cut of a long value, or a recursive container) is not judged.

`values_problem(state_text, partial)` applies it to the values of a state text in the
neural-debugger language (the locals' and the return value's JSON strings, not exception messages or
stdout). `CheckedConstraint` adds it to a `RegexConstraint`: the transformers backend then never
emits a token that makes a value impossible (greedy takes the most probable token that keeps every
value possible). Programs that define ``__repr__`` are not judged (their reprs can be anything).
"""
from __future__ import annotations

import json
import re

from model.prompt import language as lang
from model.prompt.state_values import value_strings
from model.decode.repr_grammar import ReprChecker, grammar_problem


def repr_problem(text: str, *, partial: bool = False) -> str | None:
    """Why `text` cannot be a builtin value's repr (None: it can, or it is not judged); see `model.decode.repr_grammar`."""
    return grammar_problem(text, partial=partial)


def _decode(body: str) -> str | None:
    """The text of a JSON string body (no quotes), a cut-off escape at its end dropped."""
    cut = re.search(r"(\\+)(u[0-9a-fA-F]{0,3})?$", body)
    if cut and len(cut.group(1)) % 2:  # an odd run of backslashes: the last one begins an escape the cut left unfinished
        body = body[: cut.start()] + cut.group(1)[:-1]
    try:
        return json.loads('"' + body + '"')
    except ValueError:
        return None


def values_problem(state_text: str, *, partial: bool = False, checker: ReprChecker | None = None) -> str | None:
    """The first impossible value among a state text's locals and return value (partial: the last may be unfinished).
    `checker`: one that remembers the values it read (a decoder's step asks about texts that grow)."""
    judge = checker.problem if checker is not None else repr_problem
    for value in value_strings(state_text, partial=partial):
        start, end = value.body
        text = _decode(state_text[start:end])
        if text is None:
            continue
        problem = judge(text, partial=partial and not value.closed)
        if problem:
            return problem
    return None


class CheckedConstraint:
    """A `RegexConstraint` whose texts also keep every value a possible repr (see the module docstring)."""

    def __init__(self, inner, program: str) -> None:  # noqa: ANN001 - any object with regex/allows/complete
        self.inner = inner
        self.regex = inner.regex
        self.judged = "__repr__" not in program
        self._checker = ReprChecker()  # the step's values, read once as they grow

    def allows(self, text: str) -> bool:
        if not self.inner.allows(text):
            return False
        return not self.judged or _last_value_ok(text, self._checker)

    def complete(self, text: str) -> bool:
        return self.inner.complete(text) and (not self.judged or values_problem(text, checker=self._checker) is None)

    def next_bytes(self, text: str) -> frozenset[int] | None:
        return self.inner.next_bytes(text)  # the check only narrows what the regex allows

    def forced_text(self, text: str) -> str:
        return self.inner.forced_text(text)  # the check only narrows what the regex allows: a check may refuse it, never widen it

    def __repr__(self) -> str:
        return f"CheckedConstraint({self.inner!r})"


def _last_value_ok(text: str, checker: ReprChecker | None = None) -> bool:
    """Only the last string can have changed since the previous prefix was allowed."""
    quote = text.rfind('"')
    if quote < 0:
        return True
    cut = text.rfind(lang.FRAME_SEP[:2], 0, quote)  # from the last special token before it: a small tail
    head = max(cut, 0)
    # the string boundaries need the text from a point outside any string: special tokens never sit in one
    return values_problem(text[head:], partial=True, checker=checker) is None
