"""The debugger vocabulary shared by every package: what a stop shows and what moves between stops.

A `State` is what a DAP client sees at one stop (see "Stop semantics" in DESIGN.md): the stop
reason, the call stack innermost first, each frame's plain locals as ``{name: repr}``, the pending
return value, exception info, and the stdout written since the previous stop. An `Action` is what
the user pressed. A `Trajectory` is a program plus an initial state plus (action, state) pairs.

Everything here is a pydantic model, so JSON (de)serialization is ``model_dump_json`` /
``model_validate_json``. This module imports nothing of ours.
"""
from __future__ import annotations

import re
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")
ADDRESS_PLACEHOLDER = " at 0x?"


def normalize_repr(text: str) -> str:
    """Replace memory addresses in a repr (``<... at 0x7f3a...>``) by the unpredictable marker ``at 0x?``."""
    return ADDRESS_RE.sub(ADDRESS_PLACEHOLDER, text)


def display_key(name: str) -> tuple[int, str]:
    """debugpy's order of a frame's variables (pydevd's ``sorted_attributes_key``): plain names, then ``_x``,
    then ``__x``, then dunders, each group sorted."""
    if name.startswith("__"):
        return (3, name) if name.endswith("__") else (2, name)
    return (1, name) if name.startswith("_") else (0, name)


class StopReason(str, Enum):
    """Why the debugger stopped; the first four are DAP `stopped` reasons, `exited` ends a session."""

    ENTRY = "entry"
    STEP = "step"
    BREAKPOINT = "breakpoint"
    EXCEPTION = "exception"
    EXITED = "exited"


class Ending(str, Enum):
    """How a program ended: normally, by an uncaught exception, or never (a limit stopped it)."""

    NORMAL = "exit_normal"
    ERROR = "exit_error"
    NEVER = "exit_never"


class ActionKind(str, Enum):
    """The paper's actions. Forward ones map onto DAP requests; inverse ones run the state tree backwards."""

    STEP_INTO = "step_into"  # DAP stepIn
    STEP_OVER = "step_over"  # DAP next
    STEP_RETURN = "step_return"  # DAP stepOut
    BREAKPOINT = "breakpoint"  # run to the given line (a one-off breakpoint)
    CONTINUE = "continue"  # DAP continue: to the next breakpoint of the session, an uncaught exception, or the end
    INV_STEP_INTO = "inv_step_into"  # the state before the last step_into
    INV_STEP_OVER = "inv_step_over"  # the state before the last step_over
    INV_STEP_CALL = "inv_step_call"  # from a function's return (or any stop in it) back to its first line: its arguments

    @property
    def inverse(self) -> bool:
        return self.value.startswith("inv_")


DAP_TO_ACTION: dict[str, ActionKind] = {
    "stepIn": ActionKind.STEP_INTO,
    "next": ActionKind.STEP_OVER,
    "stepOut": ActionKind.STEP_RETURN,
    "continue": ActionKind.CONTINUE,
}
ACTION_TO_DAP: dict[ActionKind, str] = {v: k for k, v in DAP_TO_ACTION.items()}


class Action(BaseModel):
    """One user action. `line` (1-based) and `source` (that line's text) are set for `breakpoint` only."""

    model_config = ConfigDict(frozen=True)

    kind: ActionKind
    line: int | None = None
    source: str | None = None

    @classmethod
    def parse(cls, text: str) -> "Action":
        """Parse ``stepIn``/``next``/``stepOut``/``continue``, a kind name (``step_into``), or ``breakpoint:LINE``."""
        text = text.strip()
        if text in DAP_TO_ACTION:
            return cls(kind=DAP_TO_ACTION[text])
        name, _, arg = text.partition(":")
        try:
            kind = ActionKind(name)
        except ValueError:
            known = sorted(set(DAP_TO_ACTION) | {k.value for k in ActionKind})
            raise ValueError(f"unknown action {text!r}; expected one of {', '.join(known)} or breakpoint:LINE") from None
        if kind is ActionKind.BREAKPOINT:
            if not arg.isdigit():
                raise ValueError(f"breakpoint action needs a line number: {text!r} (e.g. breakpoint:7)")
            return cls(kind=kind, line=int(arg))
        return cls(kind=kind)

    def __str__(self) -> str:
        return f"breakpoint:{self.line}" if self.kind is ActionKind.BREAKPOINT else self.kind.value


class Frame(BaseModel):
    """One frame of the call stack: function name, 1-based line, that line's text, plain locals."""

    name: str
    line: int
    source: str = ""
    locals: dict[str, str] = Field(default_factory=dict)
    file: str | None = None  # None: the program being debugged; else a path of another user file


class ReturnValue(BaseModel):
    """The value a function just returned, shown by debugpy as ``(return) name`` in the caller."""

    name: str
    value: str


class ExceptionInfo(BaseModel):
    """An exception in flight: its type name and ``str(exc)``."""

    type: str
    message: str = ""


class State(BaseModel):
    """What a debugger shows at one stop, or at the end (reason `exited`, empty stack)."""

    reason: StopReason
    frames: list[Frame] = Field(default_factory=list)  # innermost first
    return_value: ReturnValue | None = None
    exception: ExceptionInfo | None = None
    stdout: str = ""  # written since the previous stop
    exit_code: int | None = None  # set when reason is exited
    ending: Ending | None = None  # set when reason is exited

    @property
    def top(self) -> Frame | None:
        return self.frames[0] if self.frames else None

    @property
    def finished(self) -> bool:
        return self.reason is StopReason.EXITED

    @property
    def location(self) -> list[tuple[str, int]]:
        """The stack as ``[(name, line), ...]`` innermost first: what "same location" compares."""
        return [(f.name, f.line) for f in self.frames]

    def normalized(self) -> "State":
        """A copy with memory addresses in every repr replaced by ``at 0x?``."""
        data = self.model_copy(deep=True)
        for frame in data.frames:
            frame.locals = {k: normalize_repr(v) for k, v in frame.locals.items()}
        if data.return_value is not None:
            data.return_value.value = normalize_repr(data.return_value.value)
        if data.exception is not None:
            data.exception.message = normalize_repr(data.exception.message)
        return data


class Step(BaseModel):
    """One (action, resulting state) pair of a trajectory."""

    action: Action
    state: State


class Trajectory(BaseModel):
    """A program, its session breakpoints, an initial state, then (action, state) pairs.

    `direction` is `forward` for a session run forwards and `inverse` for one that walks the state
    tree backwards with inverse actions (its initial state is a late state of the program).
    """

    program: str
    path: str | None = None
    breakpoints: list[int] = Field(default_factory=list)
    file_breakpoints: list[tuple[str, int]] = Field(default_factory=list)  # (module path, line) in `modules`
    direction: Literal["forward", "inverse"] = "forward"
    initial: State
    steps: list[Step] = Field(default_factory=list)
    ending: Ending | None = None
    meta: dict[str, str] = Field(default_factory=dict)  # e.g. source kind, seed, program id
    # the other user files the program imports (path relative to its folder -> source); frames of
    # those files carry that relative path
    modules: dict[str, str] = Field(default_factory=dict)

    @property
    def states(self) -> list[State]:
        return [self.initial] + [s.state for s in self.steps]
