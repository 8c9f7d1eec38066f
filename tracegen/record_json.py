"""`State` -> the contract JSON of ``tracegen record`` (DESIGN.md, "Contracts").

One object per stop: ``{"reason", "stack": [[name, line], ...] (innermost first; a frame of another
user file than the program is ``[name, line, file]``, the path relative to the program's folder), "locals": {name: repr}
(the top frame's locals as debugpy lists them, in its order; no ``(return) name`` entries: those are
`State.return_value`, not locals), "action"}`` (no
``"action"`` on the first stop), and at the end ``{"end": "exited", "body": {"exitCode": N}}``
(``exitCode`` null when a limit stopped the program: ending ``exit_never``). Memory addresses are
normalized to `` at 0x?``.
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence

from protocol.debugger import ACTION_TO_DAP, Action, ActionKind, Frame, State, normalize_repr


def action_name(action: Action) -> str:
    """The DAP request name (``stepIn``...) or ``breakpoint:LINE`` for the paper's breakpoint action."""
    if action.kind is ActionKind.BREAKPOINT:
        return f"breakpoint:{action.line}"
    return ACTION_TO_DAP.get(action.kind, action.kind.value)


def relative_file(file: str, folder: str | None) -> str:
    """A user file's path as the contract writes it: relative to the program's folder, with ``/``."""
    if folder is None or not os.path.isabs(file):
        return file.replace(os.sep, "/")
    try:
        rel = os.path.relpath(os.path.realpath(file), os.path.realpath(folder))
    except ValueError:  # another drive (Windows)
        return file
    return rel.replace(os.sep, "/")


def _stack_entry(frame: Frame, folder: str | None) -> list:
    if frame.file is None:
        return [frame.name, frame.line]
    return [frame.name, frame.line, relative_file(frame.file, folder)]


def state_record(state: State, action: Action | None = None, folder: str | None = None) -> dict:
    """The contract object of one state (``action``: the one that led to it; None for the first stop).

    ``folder``: the program's folder, against which frames of other files are written (``[name,
    line, file]``)."""
    if state.finished:
        return {"end": "exited", "body": {"exitCode": state.exit_code}}
    top = state.top
    record: dict = {
        "reason": state.reason.value,
        "stack": [_stack_entry(f, folder) for f in state.frames],
        "locals": {k: normalize_repr(v) for k, v in (top.locals.items() if top else [])},
    }
    if action is not None:
        record["action"] = action_name(action)
    return record


def session_lines(states: Sequence[State], actions: Sequence[Action], folder: str | None = None) -> list[str]:
    """One JSON line per state: states[0] has no action, states[k] comes from actions[k-1]."""
    lines = []
    for k, state in enumerate(states):
        action = actions[k - 1] if k > 0 else None
        lines.append(json.dumps(state_record(state, action, folder), ensure_ascii=False))
    return lines
