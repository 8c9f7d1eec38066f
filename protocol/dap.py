"""Typed Debug Adapter Protocol messages (pydantic v2) for the requests, responses and events we use.

Python attributes are snake_case; on the wire every field has its DAP name (``threadId``,
``request_seq``, ``adapterID``, ``__restart``...). Models accept either spelling, keep unknown
fields (DAP is open-ended: launch configurations carry our own keys, debugpy adds its own), and
serialize with `to_wire` (DAP names, ``exclude_none``). `protocol.wire` sends models directly.

API
---
``SeqCounter()``: ``counter()`` / ``counter.next()`` -> 1, 2, 3...; one per connection (pass it to
    ``protocol.wire.MessageWriter(stream, seq=counter)`` to number messages at send time).
``parse_message(obj: dict) -> Request | Response | Event``: typed by ``command`` / ``event``
    (e.g. `StackTraceRequest`, `StoppedEvent`, `ErrorResponse` for ``success: false``); unknown
    commands and events parse as plain `Request` / `Event`. Raises `MessageError` (a ValueError
    carrying ``request_seq`` and ``command`` when known, so the caller can answer it).
``response_for(request, body=None, *, seq=0) -> Response``: success response; the body (model or
    dict) is validated against the command's body model when we know it.
``error_response(request, message, *, error_id=1, show_user=True, variables=None, seq=0)``:
    ``success: false``, ``message``, and ``body.error``: a DAP `Message` (``format``, ``showUser``).
``event(name, body=None, *, seq=0) -> Event``: typed for known events (body validated).
``to_wire(model) -> dict``: the JSON object for the wire.
``REQUESTS``, ``RESPONSE_BODIES``, ``RESPONSES``, ``EVENTS``: command/event name -> model class.

``seq`` defaults to 0 everywhere: the `MessageWriter` with a `SeqCounter` overwrites it when sending.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.alias_generators import to_camel


class DapModel(BaseModel):
    """Base of every DAP structure: camelCase wire names, either spelling accepted, extra keys kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


def to_wire(model: BaseModel) -> dict[str, Any]:
    """The JSON object of ``model``: DAP field names, no ``None`` fields."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class SeqCounter:
    """Sequence numbers for one connection's outgoing messages. Holds the last number handed out."""

    def __init__(self, start: int = 1) -> None:
        self._next = start

    def next(self) -> int:
        """The next sequence number."""
        value = self._next
        self._next += 1
        return value

    __call__ = next


# ------------------------------------------------------------------------------- shared structures


class Checksum(DapModel):
    """A checksum of a source file."""

    algorithm: str
    checksum: str


class Source(DapModel):
    """A source file: by ``path``, or by ``sourceReference`` (> 0) when its content comes from a `source` request."""

    name: str | None = None
    path: str | None = None
    source_reference: int | None = None
    presentation_hint: Literal["normal", "emphasize", "deemphasize"] | None = None
    origin: str | None = None
    sources: list[Source] | None = None
    adapter_data: Any = None
    checksums: list[Checksum] | None = None


class SourceBreakpoint(DapModel):
    """A breakpoint the client asks for in `setBreakpoints`."""

    line: int
    column: int | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    mode: str | None = None


class Breakpoint(DapModel):
    """A breakpoint as the adapter reports it (set, moved, or rejected with a ``message``)."""

    id: int | None = None
    verified: bool
    message: str | None = None
    source: Source | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    reason: Literal["pending", "failed"] | None = None


class ExceptionBreakpointsFilter(DapModel):
    """An exception filter offered in the Capabilities (e.g. "uncaught")."""

    filter: str
    label: str
    description: str | None = None
    default: bool | None = None
    supports_condition: bool | None = None
    condition_description: str | None = None


class ExceptionFilterOptions(DapModel):
    """A filter selected in `setExceptionBreakpoints`, with an optional condition."""

    filter_id: str
    condition: str | None = None
    mode: str | None = None


class Message(DapModel):
    """A structured error message: ``format`` may hold ``{name}`` placeholders filled from ``variables``."""

    id: int
    format: str
    variables: dict[str, str] | None = None
    send_telemetry: bool | None = None
    show_user: bool | None = None
    url: str | None = None
    url_label: str | None = None


class Capabilities(DapModel):
    """What the adapter supports (the body of the `initialize` response). Unset means false."""

    supports_configuration_done_request: bool | None = None
    supports_function_breakpoints: bool | None = None
    supports_conditional_breakpoints: bool | None = None
    supports_hit_conditional_breakpoints: bool | None = None
    supports_evaluate_for_hovers: bool | None = None
    exception_breakpoint_filters: list[ExceptionBreakpointsFilter] | None = None
    supports_step_back: bool | None = None
    supports_set_variable: bool | None = None
    supports_restart_frame: bool | None = None
    supports_goto_targets_request: bool | None = None
    supports_step_in_targets_request: bool | None = None
    supports_completions_request: bool | None = None
    supports_modules_request: bool | None = None
    supports_restart_request: bool | None = None
    supports_exception_options: bool | None = None
    supports_value_formatting_options: bool | None = None
    supports_exception_info_request: bool | None = None
    support_terminate_debuggee: bool | None = None
    support_suspend_debuggee: bool | None = None
    supports_delayed_stack_trace_loading: bool | None = None
    supports_loaded_sources_request: bool | None = None
    supports_log_points: bool | None = None
    supports_terminate_threads_request: bool | None = None
    supports_set_expression: bool | None = None
    supports_terminate_request: bool | None = None
    supports_cancel_request: bool | None = None
    supports_breakpoint_locations_request: bool | None = None
    supports_clipboard_context: bool | None = None
    supports_stepping_granularity: bool | None = None
    supports_exception_filter_options: bool | None = None
    supports_single_thread_execution_requests: bool | None = None
    supports_ansi_styling: bool | None = Field(default=None, alias="supportsANSIStyling")


class Thread(DapModel):
    """A thread (we have one: the program's main thread)."""

    id: int
    name: str


class StackFrame(DapModel):
    """One frame of a `stackTrace` response; ``line``/``column`` are 1-based by default."""

    id: int
    name: str
    source: Source | None = None
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    can_restart: bool | None = None
    module_id: int | str | None = None
    presentation_hint: Literal["normal", "label", "subtle"] | None = None


class Scope(DapModel):
    """A named group of variables of a frame (Locals, Globals...)."""

    name: str
    presentation_hint: str | None = None
    variables_reference: int
    named_variables: int | None = None
    indexed_variables: int | None = None
    expensive: bool
    source: Source | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None


class VariablePresentationHint(DapModel):
    """How the client should show a variable (kind, attributes such as readOnly, visibility)."""

    kind: str | None = None
    attributes: list[str] | None = None
    visibility: str | None = None
    lazy: bool | None = None


class Variable(DapModel):
    """A variable: ``value`` is its display string; ``variablesReference`` > 0 when it can be expanded."""

    name: str
    value: str
    type: str | None = None
    presentation_hint: VariablePresentationHint | None = None
    evaluate_name: str | None = None
    variables_reference: int
    named_variables: int | None = None
    indexed_variables: int | None = None
    memory_reference: str | None = None


# ------------------------------------------------------------------------------- base messages


class ProtocolMessage(DapModel):
    """Every DAP message: a sequence number and a type (request, response or event)."""

    seq: int = 0
    type: str


class Request(ProtocolMessage):
    """A request; ``arguments`` is whatever the command takes (typed in the subclasses)."""

    type: Literal["request"] = "request"
    command: str
    arguments: Any = None


class Response(ProtocolMessage):
    """A response to request ``request_seq``; ``message`` says why when ``success`` is false."""

    type: Literal["response"] = "response"
    request_seq: int = Field(alias="request_seq")
    success: bool
    command: str
    message: str | None = None
    body: Any = None


class Event(ProtocolMessage):
    """An event the adapter sends on its own."""

    type: Literal["event"] = "event"
    event: str
    body: Any = None


class ErrorResponseBody(DapModel):
    """The body of a failed response."""

    error: Message | None = None


class ErrorResponse(Response):
    """A response with ``success: false``."""

    success: Literal[False] = False
    body: ErrorResponseBody | None = None


# ------------------------------------------------------------------------------- request arguments


class InitializeRequestArguments(DapModel):
    """What the client tells about itself; ``linesStartAt1``/``columnsStartAt1`` default to true."""

    client_id: str | None = Field(default=None, alias="clientID")
    client_name: str | None = None
    adapter_id: str = Field(alias="adapterID")
    locale: str | None = None
    lines_start_at1: bool | None = None
    columns_start_at1: bool | None = None
    path_format: str | None = None
    supports_variable_type: bool | None = None
    supports_variable_paging: bool | None = None
    supports_run_in_terminal_request: bool | None = None
    supports_memory_references: bool | None = None
    supports_progress_reporting: bool | None = None
    supports_invalidated_event: bool | None = None
    supports_memory_event: bool | None = None
    supports_start_debugging_request: bool | None = None
    supports_ansi_styling: bool | None = Field(default=None, alias="supportsANSIStyling")


class LaunchRequestArguments(DapModel):
    """Launch arguments: ``noDebug`` plus whatever keys the launch configuration has (kept as extras)."""

    no_debug: bool | None = None
    restart: Any = Field(default=None, alias="__restart")


class NeuralLaunchArguments(LaunchRequestArguments):
    """The ``neural`` launch configuration (DESIGN.md, "Contracts"). Validate it with
    ``NeuralLaunchArguments.model_validate(to_wire(request.arguments))``."""

    program: str
    stop_on_entry: bool = False
    model: str | None = None
    backend: Literal["transformers", "vllm", "oracle"] = "transformers"
    vllm_url: str | None = None
    temperature: float = Field(default=0.0, ge=0.0)
    compare_with: Literal["debugpy"] | None = None
    args: list[str] = Field(default_factory=list)
    cwd: str | None = None


class AttachRequestArguments(DapModel):
    """Attach arguments: implementation specific (kept as extras)."""

    restart: Any = Field(default=None, alias="__restart")


class SetBreakpointsArguments(DapModel):
    """All breakpoints of one source (replacing the previous set)."""

    source: Source
    breakpoints: list[SourceBreakpoint] | None = None
    lines: list[int] | None = None
    source_modified: bool | None = None


class SetExceptionBreakpointsArguments(DapModel):
    """The selected exception filters."""

    filters: list[str]
    filter_options: list[ExceptionFilterOptions] | None = None
    exception_options: list[dict[str, Any]] | None = None


class ConfigurationDoneArguments(DapModel):
    """No arguments."""


class ThreadArguments(DapModel):
    """Arguments naming one thread (continue, reverseContinue, pause)."""

    thread_id: int
    single_thread: bool | None = None


class StepArguments(ThreadArguments):
    """Arguments of next, stepIn, stepOut, stepBack."""

    granularity: Literal["statement", "line", "instruction"] | None = None
    target_id: int | None = None  # stepIn only


class StackTraceArguments(DapModel):
    """Which frames of a thread to return (``levels`` 0 or absent: all)."""

    thread_id: int
    start_frame: int | None = None
    levels: int | None = None
    format: dict[str, Any] | None = None


class ScopesArguments(DapModel):
    """The frame whose scopes to list."""

    frame_id: int


class VariablesArguments(DapModel):
    """The container to expand, optionally a page of it."""

    variables_reference: int
    filter: Literal["indexed", "named"] | None = None
    start: int | None = None
    count: int | None = None
    format: dict[str, Any] | None = None


class EvaluateArguments(DapModel):
    """An expression in the context of a frame (``context``: watch, repl, hover, clipboard, variables...)."""

    expression: str
    frame_id: int | None = None
    line: int | None = None
    column: int | None = None
    source: Source | None = None
    context: str | None = None
    format: dict[str, Any] | None = None


class DataBreakpointInfoArguments(DapModel):
    """What a data breakpoint could watch: a child ``name`` of the container ``variablesReference``, or an
    expression ``name`` in frame ``frameId`` when no reference is given."""

    name: str
    variables_reference: int | None = None
    frame_id: int | None = None


class DataBreakpoint(DapModel):
    """One data breakpoint of `setDataBreakpoints`: the ``dataId`` that `dataBreakpointInfo` gave."""

    data_id: str
    access_type: Literal["read", "write", "readWrite"] | None = None
    condition: str | None = None
    hit_condition: str | None = None


class SetDataBreakpointsArguments(DapModel):
    """All data breakpoints (replacing the previous set; empty clears them)."""

    breakpoints: list[DataBreakpoint]


class CompletionsArguments(DapModel):
    """Debug Console completion: the input ``text`` and the cursor ``column`` in it (client's column base)."""

    text: str
    column: int
    line: int | None = None
    frame_id: int | None = None


class SetVariableArguments(DapModel):
    """Assign ``value`` (an expression) to ``name`` in container ``variablesReference``."""

    variables_reference: int
    name: str
    value: str
    format: dict[str, Any] | None = None


class RestartArguments(DapModel):
    """The latest launch or attach configuration, if the client sends it."""

    arguments: dict[str, Any] | None = None


class TerminateArguments(DapModel):
    """Whether this terminate is part of a restart."""

    restart: bool | None = None


class DisconnectArguments(DapModel):
    """How to end the session."""

    restart: bool | None = None
    terminate_debuggee: bool | None = None
    suspend_debuggee: bool | None = None


class SourceArguments(DapModel):
    """Which source's content to return."""

    source: Source | None = None
    source_reference: int


# ------------------------------------------------------------------------------- typed requests


class InitializeRequest(Request):
    command: Literal["initialize"] = "initialize"
    arguments: InitializeRequestArguments


class LaunchRequest(Request):
    command: Literal["launch"] = "launch"
    arguments: LaunchRequestArguments = Field(default_factory=LaunchRequestArguments)


class AttachRequest(Request):
    command: Literal["attach"] = "attach"
    arguments: AttachRequestArguments = Field(default_factory=AttachRequestArguments)


class SetBreakpointsRequest(Request):
    command: Literal["setBreakpoints"] = "setBreakpoints"
    arguments: SetBreakpointsArguments


class SetExceptionBreakpointsRequest(Request):
    command: Literal["setExceptionBreakpoints"] = "setExceptionBreakpoints"
    arguments: SetExceptionBreakpointsArguments


class ConfigurationDoneRequest(Request):
    command: Literal["configurationDone"] = "configurationDone"
    arguments: ConfigurationDoneArguments | None = None


class ThreadsRequest(Request):
    command: Literal["threads"] = "threads"


class StackTraceRequest(Request):
    command: Literal["stackTrace"] = "stackTrace"
    arguments: StackTraceArguments


class ScopesRequest(Request):
    command: Literal["scopes"] = "scopes"
    arguments: ScopesArguments


class VariablesRequest(Request):
    command: Literal["variables"] = "variables"
    arguments: VariablesArguments


class EvaluateRequest(Request):
    command: Literal["evaluate"] = "evaluate"
    arguments: EvaluateArguments


class SetVariableRequest(Request):
    command: Literal["setVariable"] = "setVariable"
    arguments: SetVariableArguments


class NextRequest(Request):
    command: Literal["next"] = "next"
    arguments: StepArguments


class StepInRequest(Request):
    command: Literal["stepIn"] = "stepIn"
    arguments: StepArguments


class StepOutRequest(Request):
    command: Literal["stepOut"] = "stepOut"
    arguments: StepArguments


class StepBackRequest(Request):
    command: Literal["stepBack"] = "stepBack"
    arguments: StepArguments


class ContinueRequest(Request):
    command: Literal["continue"] = "continue"
    arguments: ThreadArguments


class ReverseContinueRequest(Request):
    command: Literal["reverseContinue"] = "reverseContinue"
    arguments: ThreadArguments


class PauseRequest(Request):
    command: Literal["pause"] = "pause"
    arguments: ThreadArguments


class RestartRequest(Request):
    command: Literal["restart"] = "restart"
    arguments: RestartArguments | None = None


class TerminateRequest(Request):
    command: Literal["terminate"] = "terminate"
    arguments: TerminateArguments | None = None


class DisconnectRequest(Request):
    command: Literal["disconnect"] = "disconnect"
    arguments: DisconnectArguments | None = None


class SourceRequest(Request):
    command: Literal["source"] = "source"
    arguments: SourceArguments


REQUESTS: dict[str, type[Request]] = {
    cls.model_fields["command"].default: cls
    for cls in (
        InitializeRequest, LaunchRequest, AttachRequest, SetBreakpointsRequest, SetExceptionBreakpointsRequest,
        ConfigurationDoneRequest, ThreadsRequest, StackTraceRequest, ScopesRequest, VariablesRequest,
        EvaluateRequest, SetVariableRequest, NextRequest, StepInRequest, StepOutRequest, StepBackRequest,
        ContinueRequest, ReverseContinueRequest, PauseRequest, RestartRequest, TerminateRequest,
        DisconnectRequest, SourceRequest,
    )
}


# ------------------------------------------------------------------------------- response bodies


class SetBreakpointsResponseBody(DapModel):
    """One `Breakpoint` per requested breakpoint, in the same order."""

    breakpoints: list[Breakpoint]


class SetExceptionBreakpointsResponseBody(DapModel):
    breakpoints: list[Breakpoint] | None = None


class ThreadsResponseBody(DapModel):
    threads: list[Thread]


class StackTraceResponseBody(DapModel):
    """Frames innermost first; ``totalFrames`` lets the client page."""

    stack_frames: list[StackFrame]
    total_frames: int | None = None


class ScopesResponseBody(DapModel):
    scopes: list[Scope]


class VariablesResponseBody(DapModel):
    variables: list[Variable]


class EvaluateResponseBody(DapModel):
    """The result's display string; ``variablesReference`` > 0 when it can be expanded."""

    result: str
    type: str | None = None
    presentation_hint: VariablePresentationHint | None = None
    variables_reference: int
    named_variables: int | None = None
    indexed_variables: int | None = None
    memory_reference: str | None = None


class SetVariableResponseBody(DapModel):
    value: str
    type: str | None = None
    variables_reference: int | None = None
    named_variables: int | None = None
    indexed_variables: int | None = None


class CompletionItem(DapModel):
    label: str
    text: str | None = None
    type: str | None = None
    start: int | None = None
    length: int | None = None


class CompletionsResponseBody(DapModel):
    targets: list[CompletionItem]


class ContinueResponseBody(DapModel):
    all_threads_continued: bool | None = None


class SourceResponseBody(DapModel):
    content: str
    mime_type: str | None = None


RESPONSE_BODIES: dict[str, type[DapModel]] = {
    "initialize": Capabilities,
    "setBreakpoints": SetBreakpointsResponseBody,
    "setExceptionBreakpoints": SetExceptionBreakpointsResponseBody,
    "threads": ThreadsResponseBody,
    "stackTrace": StackTraceResponseBody,
    "scopes": ScopesResponseBody,
    "variables": VariablesResponseBody,
    "evaluate": EvaluateResponseBody,
    "setVariable": SetVariableResponseBody,
    "continue": ContinueResponseBody,
    "completions": CompletionsResponseBody,
    "source": SourceResponseBody,
}

RESPONSES: dict[str, type[Response]] = {
    command: create_model(f"{command[0].upper()}{command[1:]}Response", __base__=Response, body=(body_cls | None, None))
    for command, body_cls in RESPONSE_BODIES.items()
}
"""Success responses whose ``body`` is the command's typed body (``parse_message`` uses them)."""


# ------------------------------------------------------------------------------- events


class StoppedEventBody(DapModel):
    """Why and where execution stopped (reason: step, breakpoint, exception, pause, entry, goto...)."""

    reason: str
    description: str | None = None
    thread_id: int | None = None
    preserve_focus_hint: bool | None = None
    text: str | None = None
    all_threads_stopped: bool | None = None
    hit_breakpoint_ids: list[int] | None = None


class ContinuedEventBody(DapModel):
    thread_id: int
    all_threads_continued: bool | None = None


class ExitedEventBody(DapModel):
    exit_code: int


class TerminatedEventBody(DapModel):
    restart: Any = None


class OutputEventBody(DapModel):
    """Program or adapter output (category: console, important, stdout, stderr, telemetry)."""

    category: str | None = None
    output: str
    group: Literal["start", "startCollapsed", "end"] | None = None
    variables_reference: int | None = None
    source: Source | None = None
    line: int | None = None
    column: int | None = None
    data: Any = None


class BreakpointEventBody(DapModel):
    """A breakpoint changed (reason: changed, new, removed)."""

    reason: str
    breakpoint: Breakpoint


class ThreadEventBody(DapModel):
    reason: str
    thread_id: int


class InitializedEvent(Event):
    event: Literal["initialized"] = "initialized"


class StoppedEvent(Event):
    event: Literal["stopped"] = "stopped"
    body: StoppedEventBody


class ContinuedEvent(Event):
    event: Literal["continued"] = "continued"
    body: ContinuedEventBody


class ExitedEvent(Event):
    event: Literal["exited"] = "exited"
    body: ExitedEventBody


class TerminatedEvent(Event):
    event: Literal["terminated"] = "terminated"
    body: TerminatedEventBody | None = None


class OutputEvent(Event):
    event: Literal["output"] = "output"
    body: OutputEventBody


class BreakpointEvent(Event):
    event: Literal["breakpoint"] = "breakpoint"
    body: BreakpointEventBody


class ThreadEvent(Event):
    event: Literal["thread"] = "thread"
    body: ThreadEventBody


class CustomEvent(Event):
    """An event of our own, namespaced ``neural/...`` (e.g. ``neural/divergence`` from the debugpy
    comparison); clients that do not know it ignore it. The body is any JSON object."""

    event: str = Field(pattern=r"^neural/[A-Za-z0-9_.-]+$")
    body: dict[str, Any] = Field(default_factory=dict)


EVENTS: dict[str, type[Event]] = {
    cls.model_fields["event"].default: cls
    for cls in (
        InitializedEvent, StoppedEvent, ContinuedEvent, ExitedEvent, TerminatedEvent, OutputEvent,
        BreakpointEvent, ThreadEvent,
    )
}


# ------------------------------------------------------------------------------- helpers


class MessageError(ValueError):
    """A JSON object that is not a valid DAP message. ``request_seq``/``command``: the request to
    answer with an error response, when the object was recognisably a request."""

    def __init__(self, detail: str, *, request_seq: int | None = None, command: str | None = None) -> None:
        super().__init__(detail)
        self.request_seq = request_seq
        self.command = command


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "message"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def parse_message(obj: dict[str, Any]) -> Request | Response | Event:
    """The typed message for a decoded JSON object (see the module docstring)."""
    kind = obj.get("type")
    name = obj.get("command") if kind in ("request", "response") else obj.get("event")
    if kind == "request":
        cls: type[ProtocolMessage] = REQUESTS.get(name, Request) if isinstance(name, str) else Request
    elif kind == "response":
        cls = ErrorResponse if obj.get("success") is False else _response_class(name)
    elif kind == "event":
        cls = EVENTS.get(name, Event) if isinstance(name, str) else Event
    else:
        raise MessageError(f"unknown message type {kind!r}")
    try:
        return cls.model_validate(obj)  # type: ignore[return-value]
    except ValidationError as exc:
        seq = obj.get("seq")
        raise MessageError(
            f"invalid {name or kind!s} {kind}: {_describe(exc)}",
            request_seq=seq if kind == "request" and isinstance(seq, int) else None,
            command=name if kind == "request" and isinstance(name, str) else None,
        ) from None


def _response_class(command: object) -> type[Response]:
    return RESPONSES.get(command, Response) if isinstance(command, str) else Response


def _validate_body(cls: type[DapModel] | None, body: Any, what: str) -> Any:
    if cls is None or body is None:
        return body
    try:
        return cls.model_validate(body.model_dump(by_alias=True) if isinstance(body, BaseModel) else body)
    except ValidationError as exc:
        raise MessageError(f"invalid {what} body: {_describe(exc)}") from None


def response_for(request: Request, body: BaseModel | dict[str, Any] | None = None, *, seq: int = 0) -> Response:
    """A success response to ``request``; the body is checked against the command's model when known."""
    typed = _validate_body(RESPONSE_BODIES.get(request.command), body, f"{request.command} response")
    return Response(seq=seq, request_seq=request.seq, success=True, command=request.command, body=typed)


def error_response(
    request: Request,
    message: str,
    *,
    error_id: int = 1,
    show_user: bool = True,
    variables: dict[str, str] | None = None,
    seq: int = 0,
) -> ErrorResponse:
    """A failed response: ``message`` both as the short reason and as ``body.error.format``."""
    error = Message(id=error_id, format=message, show_user=show_user, variables=variables)
    return ErrorResponse(
        seq=seq, request_seq=request.seq, command=request.command, message=message, body=ErrorResponseBody(error=error)
    )


def event(name: str, body: BaseModel | dict[str, Any] | None = None, *, seq: int = 0) -> Event:
    """An event; known names get their typed model (body validated), ``neural/...`` a `CustomEvent`."""
    cls = EVENTS.get(name)
    if cls is None and name.startswith("neural/"):
        cls = CustomEvent
    if cls is None:
        return Event(seq=seq, event=name, body=body)
    data: dict[str, Any] = {"seq": seq, "event": name}
    if body is not None:
        data["body"] = body.model_dump(by_alias=True) if isinstance(body, BaseModel) else body
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise MessageError(f"invalid {name} event: {_describe(exc)}") from None
