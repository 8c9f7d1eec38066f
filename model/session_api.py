"""The session interface the adapter drives: one object per debugged program.

Two implementations: `model.session.NeuralDebugger` (predicts every stop with a language model)
and `model.oracle.OracleDebugger` (answers from tracegen's fast recorder; tests and comparison
only). The adapter depends on this protocol alone.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from protocol.debugger import Action, State, Step


class SessionError(Exception):
    """A session request that cannot be honoured (e.g. step back before the start); the message is for the user."""


@runtime_checkable
class DebugSession(Protocol):
    program: str  # the program's source text
    path: str | None

    def start(self) -> State:
        """The entry state: stopped on the first line of the module (reason `entry`)."""
        ...

    def set_breakpoints(self, lines: list[int]) -> list[int]:
        """Replace the session's line breakpoints; returns the lines accepted (executable lines)."""
        ...

    def set_file_breakpoints(self, file: str, lines: list[int]) -> list[int]:
        """Replace the line breakpoints of another user file (a module the program imports from its
        folder; path absolute or relative to the program's folder); returns the lines accepted."""
        ...

    def step(self, action: Action) -> State:
        """Take one forward action (step_into, step_over, step_return, continue, breakpoint)."""
        ...

    def step_back(self) -> State:
        """Undo the last step exactly from history; before the start of history, predict with inverse actions."""
        ...

    def set_variable(self, name: str, value: str, frame_index: int = 0) -> State:
        """Edit a local of the current state (value is a repr string); later steps predict from the edited state."""
        ...

    @property
    def history(self) -> list[Step]:
        ...

    @property
    def state(self) -> State:
        """The current state."""
        ...

    def confidence(self) -> dict[str, float]:
        """Per-variable confidence (0..1) of the current state's top-frame locals; 1.0 for an oracle."""
        ...

    def close(self) -> None:
        ...
