"""The JSON the MCP tools answer with, and the conversion of a debugger `State` into it.

Values are ``repr`` strings as the debugger shows them. One longer than the server's value limit
is cut (its name is listed in the stop's ``truncated``); `get_variables` with the variable's name
as ``path`` shows it whole and lists its parts, each with the path that expands it further.
"""
from __future__ import annotations

from pydantic import BaseModel, Field

from protocol.debugger import State

ELLIPSIS = "..."


class FrameOut(BaseModel):
    """One frame of the stack, innermost first: function, line, file (the program's path or a user module's) and line text."""

    name: str
    line: int
    file: str
    source: str = ""


class ReturnOut(BaseModel):
    name: str
    value: str


class ExceptionOut(BaseModel):
    type: str
    message: str = ""


class Divergence(BaseModel):
    """A stop where the prediction and the real debugger differ."""

    stop: int = Field(description="1 for the first stop (the entry), then one per action")
    action: str | None = Field(default=None, description="the action that led to this stop (None for the entry)")
    fields: list[str] = Field(default_factory=list, description="what differs: reason, location, locals, return_value, exception, stdout")
    text: str = Field(description="the difference in words")
    real: "Stop | None" = None


class Stop(BaseModel):
    """Where the program stands: why it stopped, the stack, the top frame's locals, and how sure the model is."""

    reason: str = Field(description="entry, step, breakpoint, exception or exited")
    frames: list[FrameOut] = Field(default_factory=list)
    locals: dict[str, str] = Field(default_factory=dict, description="the top frame's variables as repr strings")
    confidence: float = Field(description="calibrated probability (0-1) that this stop's location is right; 1 for a recorded stop")
    ended: bool = False
    exit_code: int | None = None
    return_value: ReturnOut | None = None
    exception: ExceptionOut | None = None
    stdout: str = Field(default="", description="printed since the previous stop")
    truncated: list[str] = Field(default_factory=list, description="locals whose value was cut: get_variables(path=NAME) shows them whole")
    note: str | None = Field(default=None, description="why the stop could not be predicted, or what to know about it")
    divergences: list[Divergence] | None = Field(default=None, description="backend compare: how real debugpy differed at this stop")


Divergence.model_rebuild()


def cut(value: str, limit: int) -> tuple[str, bool]:
    """`value` cut to `limit` characters (an ellipsis marking the cut) and whether it was cut."""
    if len(value) <= limit:
        return value, False
    return value[: max(0, limit - len(ELLIPSIS))] + ELLIPSIS, True


def stop_of(state: State, program_file: str, confidence: float, limit: int, note: str | None = None) -> Stop:
    """The tools' view of `state`: frames with their files, the top frame's locals cut at `limit` characters."""
    shown: dict[str, str] = {}
    truncated: list[str] = []
    top = state.top
    for name, value in (top.locals.items() if top is not None else ()):
        shown[name], was_cut = cut(value, limit)
        if was_cut:
            truncated.append(name)
    rv = state.return_value
    exc = state.exception
    return Stop(
        reason=state.reason.value,
        frames=[FrameOut(name=f.name, line=f.line, file=f.file or program_file, source=f.source) for f in state.frames],
        locals=shown,
        confidence=round(float(confidence), 4),
        ended=state.finished,
        exit_code=state.exit_code,
        return_value=None if rv is None else ReturnOut(name=rv.name, value=cut(rv.value, limit)[0]),
        exception=None if exc is None else ExceptionOut(type=exc.type, message=cut(exc.message, limit)[0]),
        stdout=cut(state.stdout, limit * 10)[0],
        truncated=truncated,
        note=note,
    )


class SessionStarted(BaseModel):
    session_id: str
    backend: str
    stop: Stop
    breakpoints: list[str] = Field(default_factory=list, description="the breakpoints accepted (lines with code), as 'N' or 'file.py:N'")
    notices: list[str] = Field(default_factory=list)


class StepResult(BaseModel):
    stop: Stop


class StackResult(BaseModel):
    frames: list[FrameOut]
    confidence: float


class Variable(BaseModel):
    name: str
    value: str
    path: str = Field(description="pass as get_variables(path=...) or evaluate(expression=...) to see this value whole and its parts")
    confidence: float
    truncated: bool = False
    expandable: bool = False


class VariablesResult(BaseModel):
    frame: int
    path: str | None = None
    value: str | None = Field(default=None, description="the value at `path` (when a path was given)")
    truncated: bool = False
    variables: list[Variable]


class EvaluateResult(BaseModel):
    expression: str
    value: str
    truncated: bool = False
    confidence: float


class SessionEnded(BaseModel):
    session_id: str
    ended: bool = True


class CallResult(BaseModel):
    """What one call does: the value it returns, or the exception it raises, and what it prints."""

    returned: str | None = Field(default=None, description="the returned value's repr")
    raised: str | None = Field(default=None, description="'Type: message' of an exception the call raises")
    output: str = Field(default="", description="what the call prints")
    confidence: float = Field(description="the lowest calibrated confidence of the stops and the value that gave the answer")
    note: str | None = Field(default=None, description="why there is no answer, when there is none")
    seconds: float = 0.0


class ArgumentsCandidate(BaseModel):
    arguments: str = Field(description="the call's argument text, e.g. \"[1, 2], key='a'\"")
    confidence: float = Field(description="this answer's share of the probability among the answers drawn")


class InputsResult(BaseModel):
    candidates: list[ArgumentsCandidate] = Field(description="ranked, most likely first")
    note: str | None = None
    seconds: float = 0.0


class VerifyResult(BaseModel):
    """A session's stops next to the real recorder's for the same program, breakpoints and actions."""

    stops: int = Field(description="stops compared")
    matched: int
    divergences: list[Divergence]
    note: str | None = None
    seconds: float = 0.0
