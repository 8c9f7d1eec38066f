"""The JSON our DAP models emit validates against the official schema (tests/data/debugAdapterProtocol.json,
a copy of shared/dap/ with its MIT licence), and parse_message types what it reads."""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import dap
from protocol.dap import (
    Breakpoint, BreakpointEventBody, Capabilities, ContinueResponseBody, EvaluateResponseBody,
    ExceptionBreakpointsFilter, MessageError, OutputEventBody, Scope, ScopesResponseBody, SetBreakpointsResponseBody,
    SetExceptionBreakpointsResponseBody, SetVariableResponseBody, Source, SourceResponseBody, StackFrame,
    StackTraceResponseBody, StoppedEventBody, Thread, ThreadsResponseBody, Variable, VariablePresentationHint,
    VariablesResponseBody, error_response, event, parse_message, response_for, to_wire,
)

SCHEMA_PATH = Path(__file__).parent / "data" / "debugAdapterProtocol.json"


@cache
def validator(definition: str) -> jsonschema.Draft4Validator:
    """A validator for one ``#/definitions/<definition>`` of the official schema."""
    definitions = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["definitions"]
    assert definition in definitions, definition
    return jsonschema.Draft4Validator({"$ref": f"#/definitions/{definition}", "definitions": definitions})


def assert_valid(definition: str, instance: dict[str, Any]) -> None:
    errors = sorted(validator(definition).iter_errors(instance), key=str)
    assert not errors, f"{definition}: {[e.message for e in errors]}\n{instance}"


def cap(name: str) -> str:
    return name[0].upper() + name[1:]


def definition_for(message: dict[str, Any]) -> str:
    """The schema definition naming this message (StackTraceResponse, StoppedEvent, ...)."""
    if message["type"] == "request":
        return f"{cap(message['command'])}Request"
    if message["type"] == "response":
        return "ErrorResponse" if not message["success"] else f"{cap(message['command'])}Response"
    return f"{cap(message['event'])}Event"


# ----------------------------------------------------------------------------- representative instances

SRC = Source(name="prog.py", path="/home/u/prog.py")
REQUEST_ARGS: dict[str, dict[str, Any] | None] = {
    "initialize": {"clientID": "vscode", "clientName": "Visual Studio Code", "adapterID": "neural", "locale": "en",
                   "linesStartAt1": True, "columnsStartAt1": True, "pathFormat": "path", "supportsVariableType": True,
                   "supportsRunInTerminalRequest": True, "supportsANSIStyling": True},
    "launch": {"program": "/home/u/prog.py", "stopOnEntry": True, "backend": "oracle", "noDebug": False},
    "attach": {"port": 5678},
    "setBreakpoints": {"source": {"path": "/home/u/prog.py"}, "breakpoints": [{"line": 3}, {"line": 7, "condition": "x > 1"}],
                       "lines": [3, 7], "sourceModified": False},
    "setExceptionBreakpoints": {"filters": ["uncaught"], "filterOptions": [{"filterId": "raised", "condition": "e"}]},
    "configurationDone": None,
    "threads": None,
    "stackTrace": {"threadId": 1, "startFrame": 0, "levels": 20},
    "scopes": {"frameId": 3},
    "variables": {"variablesReference": 1000, "filter": "named", "start": 0, "count": 10},
    "evaluate": {"expression": "xs[0].name", "frameId": 3, "context": "watch"},
    "setVariable": {"variablesReference": 1000, "name": "x", "value": "3"},
    "next": {"threadId": 1, "granularity": "line"},
    "stepIn": {"threadId": 1, "targetId": 4},
    "stepOut": {"threadId": 1, "singleThread": True},
    "continue": {"threadId": 1},
    "stepBack": {"threadId": 1},
    "reverseContinue": {"threadId": 1},
    "pause": {"threadId": 1},
    # VS Code sends restart {"arguments": <launch config>}, but the schema's oneOf(Launch, Attach) of two
    # open objects matches both, so no such instance validates; we parse it (see test below) and emit {}.
    "restart": {},
    "terminate": {"restart": False},
    "disconnect": {"restart": False, "terminateDebuggee": True},
    "source": {"source": {"sourceReference": 5}, "sourceReference": 5},
}

FRAMES = [
    StackFrame(id=1, name="add", source=SRC, line=2, column=1),
    StackFrame(id=2, name="<module>", source=SRC, line=5, column=1, presentation_hint="normal", end_line=5),
    StackFrame(id=3, name="frozen", line=1, column=1, source=Source(source_reference=7, presentation_hint="deemphasize")),
]
VARIABLES = [
    Variable(name="x", value="3", type="int", variables_reference=0, evaluate_name="x"),
    Variable(name="xs", value="[1, 2, 3]", type="list", variables_reference=1001, indexed_variables=3),
    Variable(name="(return) add", value="3", variables_reference=0,
             presentation_hint=VariablePresentationHint(kind="property", attributes=["readOnly"])),
    Variable(name="s", value="'h\u00e9\U0001f600 \"q\"'", variables_reference=0),
]
RESPONSE_BODIES: dict[str, Any] = {
    "initialize": Capabilities(
        supports_configuration_done_request=True, supports_step_back=True, supports_evaluate_for_hovers=True,
        supports_set_variable=False, supports_terminate_request=True, supports_restart_request=True,
        supports_ansi_styling=False, support_terminate_debuggee=True,
        exception_breakpoint_filters=[ExceptionBreakpointsFilter(filter="uncaught", label="Uncaught Exceptions", default=True)],
    ),
    "launch": None,
    "attach": None,
    "setBreakpoints": SetBreakpointsResponseBody(breakpoints=[
        Breakpoint(id=1, verified=True, line=3, source=SRC),
        Breakpoint(id=2, verified=False, line=70, message="no code on line 70", reason="failed"),
    ]),
    "setExceptionBreakpoints": SetExceptionBreakpointsResponseBody(breakpoints=[Breakpoint(verified=True)]),
    "configurationDone": None,
    "threads": ThreadsResponseBody(threads=[Thread(id=1, name="MainThread")]),
    "stackTrace": StackTraceResponseBody(stack_frames=FRAMES, total_frames=3),
    "scopes": ScopesResponseBody(scopes=[
        Scope(name="Locals", variables_reference=1000, expensive=False, presentation_hint="locals"),
        Scope(name="Globals", variables_reference=1001, expensive=False, named_variables=4),
    ]),
    "variables": VariablesResponseBody(variables=VARIABLES),
    "evaluate": EvaluateResponseBody(result="[1, 2]", type="list", variables_reference=1002, indexed_variables=2),
    "setVariable": SetVariableResponseBody(value="4", type="int", variables_reference=0),
    "next": None, "stepIn": None, "stepOut": None, "stepBack": None, "reverseContinue": None, "pause": None,
    "continue": ContinueResponseBody(all_threads_continued=True),
    "restart": None, "terminate": None, "disconnect": None,
    "source": SourceResponseBody(content="x = 1\nprint(x)\n", mime_type="text/x-python"),
}
EVENTS: list[tuple[str, Any]] = [
    ("initialized", None),
    ("stopped", StoppedEventBody(reason="entry", thread_id=1, all_threads_stopped=True)),
    ("stopped", StoppedEventBody(reason="breakpoint", thread_id=1, hit_breakpoint_ids=[1], description="Paused on breakpoint")),
    ("stopped", {"reason": "exception", "threadId": 1, "text": "ZeroDivisionError: division by zero"}),
    ("output", OutputEventBody(category="stdout", output="[3, 6]\n")),
    ("output", {"category": "console", "output": "model: checkpoints/default\n", "group": "start"}),
    ("terminated", None),
    ("terminated", {"restart": {"program": "x.py"}}),
    ("exited", {"exitCode": 1}),
    ("continued", {"threadId": 1, "allThreadsContinued": True}),
    ("breakpoint", BreakpointEventBody(reason="changed", breakpoint=Breakpoint(id=1, verified=True, line=4))),
    ("thread", {"reason": "started", "threadId": 1}),
]


def build_request(command: str, seq: int = 1) -> dap.Request:
    raw: dict[str, Any] = {"seq": seq, "type": "request", "command": command}
    if REQUEST_ARGS[command] is not None:
        raw["arguments"] = REQUEST_ARGS[command]
    return parse_message(raw)  # type: ignore[return-value]


# ----------------------------------------------------------------------------- tests


def test_every_request_the_adapter_uses_is_typed() -> None:
    assert set(dap.REQUESTS) == set(REQUEST_ARGS)
    for command in REQUEST_ARGS:
        assert type(build_request(command)) is dap.REQUESTS[command]


@pytest.mark.parametrize("command", sorted(REQUEST_ARGS))
def test_requests_round_trip_and_validate(command: str) -> None:
    request = build_request(command, seq=9)
    wire = to_wire(request)
    assert_valid(definition_for(wire), wire)
    assert_valid("ProtocolMessage", wire)
    assert wire["seq"] == 9 and wire["command"] == command
    if REQUEST_ARGS[command] is not None:
        assert wire["arguments"] == REQUEST_ARGS[command]  # DAP names and unknown keys survive


@pytest.mark.parametrize("command", sorted(RESPONSE_BODIES))
def test_responses_validate(command: str) -> None:
    request = build_request(command, seq=4)
    wire = to_wire(response_for(request, RESPONSE_BODIES[command], seq=11))
    assert_valid(definition_for(wire), wire)
    assert_valid("Response", wire)
    assert wire["request_seq"] == 4 and wire["seq"] == 11 and wire["success"] is True
    reparsed = parse_message(wire)
    assert to_wire(reparsed) == wire
    if command in dap.RESPONSE_BODIES and RESPONSE_BODIES[command] is not None:
        assert isinstance(reparsed.body, dap.RESPONSE_BODIES[command])


def test_response_bodies_use_dap_names_and_drop_none() -> None:
    wire = to_wire(response_for(build_request("stackTrace"), RESPONSE_BODIES["stackTrace"]))
    frame = wire["body"]["stackFrames"][0]
    assert frame == {"id": 1, "name": "add", "source": {"name": "prog.py", "path": "/home/u/prog.py"}, "line": 2, "column": 1}
    assert wire["body"]["totalFrames"] == 3
    caps = to_wire(RESPONSE_BODIES["initialize"])
    assert caps["supportsANSIStyling"] is False and caps["supportTerminateDebuggee"] is True
    assert "supportsFunctionBreakpoints" not in caps


@pytest.mark.parametrize("command", ["stackTrace", "evaluate", "scopes", "launch", "nosuchCommand"])
def test_error_responses_validate(command: str) -> None:
    request = parse_message({"seq": 5, "type": "request", "command": command, "arguments": REQUEST_ARGS.get(command)})
    wire = to_wire(error_response(request, "no frame with id 99", error_id=1002, seq=6))
    assert_valid("ErrorResponse", wire)
    assert wire["success"] is False and wire["message"] == "no frame with id 99"
    assert wire["body"]["error"] == {"id": 1002, "format": "no frame with id 99", "showUser": True}
    assert isinstance(parse_message(wire), dap.ErrorResponse)


@pytest.mark.parametrize(("name", "body"), EVENTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(EVENTS)])
def test_events_validate(name: str, body: Any) -> None:
    built = event(name, body, seq=3)
    assert type(built) is dap.EVENTS[name]
    wire = to_wire(built)
    assert_valid(definition_for(wire), wire)
    assert_valid("Event", wire)
    assert to_wire(parse_message(wire)) == wire


def test_custom_and_unknown_events_are_valid_generic_events() -> None:
    custom = event("neural/divergence", {"step": 4, "predicted": {"line": 3}, "real": {"line": 5}}, seq=1)
    assert isinstance(custom, dap.CustomEvent)
    assert_valid("Event", to_wire(custom))
    other = event("process", {"name": "prog.py"}, seq=2)
    assert type(other) is dap.Event
    assert_valid("ProcessEvent", to_wire(other))
    with pytest.raises(ValueError):
        dap.CustomEvent(event="not-namespaced")


def test_unknown_requests_parse_as_generic_requests() -> None:
    raw = {"seq": 2, "type": "request", "command": "completions", "arguments": {"text": "x", "column": 2, "nested": [None]}}
    request = parse_message(raw)
    assert type(request) is dap.Request and to_wire(request) == raw
    assert_valid("CompletionsRequest", to_wire(request))


@pytest.mark.parametrize(
    ("raw", "needle", "request_seq"),
    [
        ({"seq": 1, "type": "request", "command": "scopes", "arguments": {}}, "frameId", 1),
        ({"seq": 2, "type": "request", "command": "next"}, "arguments", 2),
        ({"seq": 3, "type": "request", "command": "stackTrace", "arguments": {"threadId": "one"}}, "threadId", 3),
        ({"seq": 4, "type": "request", "command": 7}, "command", 4),
        ({"seq": 5, "type": "reply"}, "reply", None),
        ({"seq": 6, "type": "event", "event": "stopped", "body": {}}, "reason", None),
        ({"seq": 7, "type": "response", "command": "threads", "success": True}, "request_seq", None),
    ],
)
def test_invalid_messages_raise_message_error(raw: dict[str, Any], needle: str, request_seq: int | None) -> None:
    with pytest.raises(MessageError) as info:
        parse_message(raw)
    assert needle in str(info.value)
    assert info.value.request_seq == request_seq


def test_helpers_reject_bodies_that_do_not_fit() -> None:
    with pytest.raises(MessageError, match="stackFrames"):
        response_for(build_request("stackTrace"), {"frames": []})
    with pytest.raises(MessageError, match="exitCode"):
        event("exited", {"code": 0})


def test_restart_carries_the_launch_configuration() -> None:
    raw = {"seq": 3, "type": "request", "command": "restart", "arguments": {"arguments": {"program": "p.py"}}}
    request = parse_message(raw)
    assert isinstance(request, dap.RestartRequest) and request.arguments.arguments == {"program": "p.py"}


def test_seq_counters_are_independent() -> None:
    a, b = dap.SeqCounter(), dap.SeqCounter(start=10)
    assert [a(), a.next(), b(), a()] == [1, 2, 10, 3]


def test_neural_launch_arguments_from_a_launch_request() -> None:
    request = build_request("launch")
    args = dap.NeuralLaunchArguments.model_validate(to_wire(request.arguments))
    assert args.program == "/home/u/prog.py" and args.stop_on_entry and args.backend == "oracle"
    with pytest.raises(ValueError):
        dap.NeuralLaunchArguments.model_validate({"program": "x.py", "backend": "gpt"})


def test_schema_check_catches_bad_messages() -> None:
    """The validator is not vacuous: it rejects what the schema forbids. In particular seq 0 (the
    helpers' default, meaning "not numbered yet") is invalid: MessageWriter numbers every message."""
    assert list(validator("InitializedEvent").iter_errors(to_wire(event("initialized"))))
    assert list(validator("StackTraceResponse").iter_errors(
        {"seq": 1, "type": "response", "request_seq": 1, "success": True, "command": "stackTrace",
         "body": {"stackFrames": [{"id": 1, "name": "f", "line": 1}]}}))  # no column
    assert list(validator("StoppedEvent").iter_errors({"seq": 1, "type": "event", "event": "stopped", "body": {}}))
    assert list(validator("ErrorResponse").iter_errors(
        {"seq": 1, "type": "response", "request_seq": 1, "success": False, "command": "x", "body": {"error": {"id": 1}}}))


TEXT = st.text(max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    frames=st.lists(st.tuples(st.integers(1, 2**31 - 1), TEXT, st.integers(1, 10**6), st.none() | TEXT), max_size=5),
    variables=st.lists(st.tuples(TEXT, TEXT, st.integers(0, 2**31 - 1), st.none() | TEXT), max_size=5),
    output=TEXT,
)
def test_generated_bodies_validate(frames: list, variables: list, output: str) -> None:
    stack = StackTraceResponseBody(stack_frames=[
        StackFrame(id=i, name=n, line=line, column=1, source=None if p is None else Source(path=p)) for i, n, line, p in frames
    ])
    assert_valid("StackTraceResponse", to_wire(response_for(build_request("stackTrace"), stack, seq=2)))
    body = VariablesResponseBody(variables=[Variable(name=n, value=v, variables_reference=r, type=t) for n, v, r, t in variables])
    assert_valid("VariablesResponse", to_wire(response_for(build_request("variables"), body, seq=3)))
    assert_valid("OutputEvent", to_wire(event("output", {"category": "stdout", "output": output}, seq=4)))
