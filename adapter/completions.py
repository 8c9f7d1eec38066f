"""Debug Console completions from the predicted state: variable names, and the parts of a value after a dot.

Nothing is run: ``a.`` lists the attributes of ``a``'s predicted repr as parsed for the Variables
view (`adapter.variables.parse_repr`); a bare word lists the names of the frame's locals and the
module's globals that start with it.
"""
from __future__ import annotations

import re

from adapter.evaluate import EvaluateError, evaluate_path, module_frame_index
from adapter.variables import parse_repr
from protocol.debugger import State

_TAIL_RE = re.compile(r"(?:(?P<path>[A-Za-z_][\w.\[\]'\"-]*)\.)?(?P<word>\w*)$")
MAX_TARGETS = 200


def completion_targets(state: State, before_cursor: str, frame_index: int = 0) -> tuple[list[dict[str, str]], int]:
    """Completions for the text left of the cursor, and the length of the word they replace."""
    found = _TAIL_RE.search(before_cursor)
    if found is None:
        return [], 0
    word, path = found.group("word"), found.group("path")
    if path:
        try:
            parsed = parse_repr(evaluate_path(state, path, frame_index))
        except EvaluateError:
            return [], len(word)
        names = [c.accessor[1:] for c in parsed.children if c.accessor.startswith(".")]
        kind = "property"
    else:
        if not state.frames:
            return [], len(word)
        index = min(max(frame_index, 0), len(state.frames) - 1)
        frame = state.frames[index]
        module = module_frame_index(state, index)
        names = list(dict.fromkeys([*frame.locals, *(state.frames[module].locals if module is not None else {})]))
        kind = "variable"
    chosen = sorted(n for n in names if n.startswith(word) and not n.startswith("("))[:MAX_TARGETS]
    return [{"label": name, "type": kind} for name in chosen], len(word)
