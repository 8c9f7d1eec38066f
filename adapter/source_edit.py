"""Edit and re-predict: the program's file changed on disk while stopped; where does the stop stand now?

`map_lines` pairs the old source's lines with the new one's (`difflib`): a line inside an unchanged
block moves with it; a block replaced by one of the same size (a line edited in place) maps line
for line; a line deleted, or inside a block replaced by one of another size, has no place.
`move_state` moves a stop into the new source: each frame of the program (not of its other user
files) gets its mapped line and that line's new text; it says why when a frame's line has no place
or is no longer a line with code. Nothing is run: the next stops are predicted from the new text.
"""
from __future__ import annotations

import difflib

from protocol.debugger import State


def map_lines(old: str, new: str) -> dict[int, int]:
    """1-based old line -> 1-based new line, for the lines that keep a place in `new`."""
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            mapping.update({i + 1: j1 + (i - i1) + 1 for i in range(i1, i2)})
    return mapping


def move_state(state: State, new: str, mapping: dict[int, int], executable: set[int]) -> State | str:
    """`state` with the program's frames on their lines in `new`; a str saying why it cannot be moved."""
    moved = state.model_copy(deep=True)
    lines = new.splitlines()
    for frame in moved.frames:
        if frame.file is not None:  # another user file: not the one edited
            continue
        line = mapping.get(frame.line)
        where = "the current line" if frame is moved.frames[0] else f"line {frame.line} (in {frame.name})"
        if line is None:
            return f"{where} ({frame.line}) was changed or deleted, so the stop has no place in the edited source"
        if line not in executable:
            return f"{where} ({frame.line}, now {line}) is no longer a line with code"
        frame.line = line
        frame.source = lines[line - 1].strip() if line <= len(lines) else ""
    return moved


def move_breakpoints(lines: list[int], mapping: dict[int, int], executable: set[int]) -> tuple[list[int], list[int]]:
    """The breakpoint lines in the new source (moved with their code), and those that no longer stand on code."""
    kept: list[int] = []
    dropped: list[int] = []
    for line in lines:
        target = mapping.get(line, line)
        (kept if target in executable else dropped).append(target)
    return sorted(set(kept)), dropped
