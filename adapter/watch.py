"""Watching one value across stops: the frame it lives in, and how to read it from any state.

A `WatchTarget` names a value of one frame: a local or global (``x``), or an item inside a
container (``d['k']``, ``obj.attr``, ``a[0]``), as `adapter.evaluate.evaluate_path` reads it from
the predicted reprs. The frame is named by its place counted from the bottom of the stack (the
module is 0) with its function name and file, so the same frame is found at a later or an earlier
stop whatever was called above it. Data breakpoints (`adapter.data_breakpoints`) and value history
(`adapter.history`) both read values this way; nothing is ever run.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache

from adapter.evaluate import EvaluateError, evaluate_path, parse_path
from protocol.debugger import State


@dataclass(frozen=True)
class WatchTarget:
    """A value path in one frame: depth from the bottom of the stack, the frame's name and file."""

    expression: str
    depth: int
    frame: str
    file: str | None = None

    @classmethod
    def at(cls, state: State, frame_index: int, expression: str) -> "WatchTarget":
        """The target for `expression` in frame `frame_index` (0: the top) of `state`."""
        frame = state.frames[frame_index]
        return cls(expression=expression, depth=len(state.frames) - 1 - frame_index, frame=frame.name, file=frame.file)

    @property
    def data_id(self) -> str:
        """The DAP dataId: the target itself as JSON, so it outlives the stop that made it."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_data_id(cls, data_id: str) -> "WatchTarget":
        """The target a dataId stands for; ValueError when it is not one of ours."""
        try:
            raw = json.loads(data_id)
            return cls(expression=str(raw["expression"]), depth=int(raw["depth"]), frame=str(raw["frame"]),
                       file=None if raw.get("file") is None else str(raw["file"]))
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"not a data breakpoint id of the neural debugger: {data_id[:80]!r}") from exc

    def where(self) -> str:
        """The target as the user reads it: ``d['k'] in f``."""
        return self.expression if self.frame == "<module>" else f"{self.expression} in {self.frame}"

    def frame_index(self, state: State) -> int | None:
        """The index of the watched frame in `state`, or None when that frame is not on its stack."""
        index = len(state.frames) - 1 - self.depth
        if not 0 <= index < len(state.frames):
            return None
        frame = state.frames[index]
        return index if frame.name == self.frame and frame.file == self.file else None

    def read(self, state: State) -> str | None:
        """The value's repr at `state`; None when the frame is not on the stack or the value is not there."""
        index = self.frame_index(state)
        if index is None or state.finished:
            return None
        local = state.frames[index].locals
        if self.expression.isidentifier():
            return local.get(self.expression)
        try:
            if _root(self.expression) not in local:  # not yet set (or no longer) in that frame
                return None
            return evaluate_path(state, self.expression, index)
        except EvaluateError:
            return None


@lru_cache(maxsize=256)
def _root(expression: str) -> str:
    return parse_path(expression)[0]
