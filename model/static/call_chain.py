"""A stack is a chain of calls: each frame's function can be started by the line of the frame below it.

The flow grammar lets a breakpoint or exception stop show any stack of the program's functions
(`model.static.flow.AnyStack`), and a small model fills such stacks with frames no line could have called
(``clean`` on ``clean`` on ``clean`` for a function that never calls itself). `pushes_by_frame`
answers, from the static call analysis of `model.static.flow` (`startable_from`: the functions a line can call,
the classes' ``__init__``, comprehensions run on it, and what library code may call back), which
functions a frame stopped on a line can have started; `ChainCheckedConstraint` refuses a predicted
stack with a new frame that the frame below it cannot have started. Checked on recorded stacks
(tests/test_call_chain.py). The check runs in Python on each prefix (the transformers backend);
vLLM enforces the regex and the check is applied to its answer (`model.decode.spec`).
"""
from __future__ import annotations

import re
from functools import lru_cache

from model.prompt import language as lang

_FRAME = re.compile("(" + re.escape(lang.FRAME_SEP) + "|" + re.escape(lang.CALL_SEP) + r")((?:(?!<\|).)+?)"
                    + "((?:" + re.escape(lang.SRC_SEP) + r'"(?:[^"\\]|\\.)*")?)' + re.escape(lang.LINE_SEP) + r"(\d*)", re.DOTALL)  # fmt: skip


@lru_cache(maxsize=256)
def callable_from(program: str, name: str, line: int) -> frozenset[str] | None:
    """The names of the frames a frame `name` stopped on `line` can have started (None: unknown)."""
    from model.static.flow import FlowUnavailable, program_flow, startable_from

    try:
        flow = program_flow(program)
    except FlowUnavailable:
        return None
    return startable_from(flow, name, line)


def chain_problem(program: str, text: str) -> str | None:
    """Why the stack in a (partial) state text is not a chain of calls, or None."""
    frames = [(m.group(1), m.group(2), m.group(3), m.group(4)) for m in _FRAME.finditer(text)]
    for (_, low_name, low_src, low_line_text), (marker, name, src, _) in zip(frames, frames[1:]):
        if marker != lang.CALL_SEP or low_src or src or not low_line_text:  # frames of other files: not checked
            continue
        low_line = int(low_line_text)
        allowed = callable_from(program, low_name, low_line)
        if allowed is not None and name not in allowed:
            return f"{low_name} on line {low_line} cannot start {name}"
    return None


def open_call_problem(program: str, text: str, other_names: frozenset[str] = frozenset()) -> str | None:
    """Why the name being written after the last ``<|call_sep|>`` of a (partial) state text cannot become a function
    the frame below can have started (no such name begins so), or None (also while no name is being written).

    Judging the name as it is written, not only once its ``<|line_sep|>`` is there, leaves the model no prefix without
    an allowed way on: a refused marker written again in ordinary pieces (``<|``, ``line``...) was a dead end.
    `other_names`: the code objects of other user files, which any frame may start (their frames are not checked)."""
    at = text.rfind(lang.CALL_SEP)
    if at < 0:
        return None
    partial = text[at + len(lang.CALL_SEP):]
    if "<|" in partial:  # the name is finished: `chain_problem` judges the frame
        return None
    frames = list(_FRAME.finditer(text, 0, at))
    if not frames:
        return None
    _, low_name, low_src, low_line_text = frames[-1].groups()
    if low_src or not low_line_text:
        return None
    allowed = callable_from(program, low_name, int(low_line_text))
    if allowed is None or any(name.startswith(partial) for name in allowed | other_names):
        return None
    return f"{low_name} on line {low_line_text} cannot start a function named {partial}..."


class ChainCheckedConstraint:
    """A regex constraint whose stacks are also chains of calls (`chain_problem`)."""

    def __init__(self, inner, program: str, other_names: frozenset[str] = frozenset()) -> None:  # noqa: ANN001 - any object with regex/allows/complete
        self.inner = inner
        self.regex = inner.regex
        self.program = program
        self.other_names = other_names  # code objects of other user files (`open_call_problem`)

    def allows(self, text: str) -> bool:
        if not self.inner.allows(text):
            return False
        at = text.rfind("<|")
        tail = text[at:] if at >= 0 and ">" not in text[at:] else ""
        if tail:  # a marker written in pieces: allowed only where some marker it begins is (else a dead end)
            return any(self.inner.allows(text[:at] + marker) and self._judged(text[:at] + marker)
                       for marker in lang.SPECIAL_TOKENS if marker.startswith(tail))
        return self._judged(text)

    def _judged(self, text: str) -> bool:
        """The chain checks of a text that does not end inside a marker."""
        if text.endswith(lang.LINE_SEP):
            return chain_problem(self.program, text) is None
        return open_call_problem(self.program, text, self.other_names) is None

    def complete(self, text: str) -> bool:
        return self.inner.complete(text) and chain_problem(self.program, text) is None

    def next_bytes(self, text: str) -> frozenset[int] | None:
        return self.inner.next_bytes(text)  # the chain check only narrows what the regex allows

    def forced_text(self, text: str) -> str:
        return self.inner.forced_text(text)  # the chain check only narrows what the regex allows: a check may refuse it, never widen it

    def __repr__(self) -> str:
        return f"ChainCheckedConstraint({self.inner!r})"
