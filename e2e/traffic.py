"""What the adapter sent VS Code, read back from the DAP tap log (see `e2e.dap_tap`).

`adapter_stops(log)` splits the conversation at each ``stopped`` event and, for every stop, keeps
what VS Code was told: the reason, the call stack (``stackTrace`` response), the top frame's
``Locals`` scope (``variables`` response), and every ``evaluate`` answer (hover, repl). It also
collects the Debug Console output events and whether the session ended (``terminated``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Evaluation:
    """One evaluate request and the adapter's answer (result, or the error message)."""

    expression: str
    context: str
    result: str | None
    error: str | None = None
    reference: int = 0  # the result's variablesReference (its children: `AdapterStop.children`)
    confidence: float | None = None  # the result's neuralConfidence


@dataclass
class AdapterStop:
    """One stop as the adapter described it to VS Code."""

    reason: str
    stack: list[tuple[str, int]] = field(default_factory=list)  # (name, line), innermost first
    locals: dict[str, str] | None = None  # the top frame's Locals scope, in the adapter's order
    total_frames: int | None = None  # the stackTrace replies' totalFrames
    evaluations: list[Evaluation] = field(default_factory=list)
    description: str | None = None  # the stopped event's description (e.g. "predicted, 64% sure")
    confidence: float | None = None  # the stopped event's neuralConfidence
    locals_sent: list[dict[str, Any]] = field(default_factory=list)  # the Locals scope's Variables as sent (first answer)
    locals_answers: list[list[dict[str, Any]]] = field(default_factory=list)  # every answer for the Locals scope (VS Code asks again after a console evaluation)
    children: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # variables answers by reference
    scopes: dict[str, int] = field(default_factory=dict)  # the top frame's scopes: name -> variablesReference
    data_breakpoints: list[dict[str, Any]] = field(default_factory=list)  # setDataBreakpoints answers at this stop


@dataclass
class AdapterSession:
    """Everything one debug session's traffic shows."""

    stops: list[AdapterStop] = field(default_factory=list)
    output: list[str] = field(default_factory=list)  # output events' text, in order
    custom_events: list[dict[str, Any]] = field(default_factory=list)
    terminated: bool = False
    exit_code: int | None = None
    launch_arguments: dict[str, Any] | None = None
    failed_requests: list[str] = field(default_factory=list)


def read_log(path: Path) -> list[dict[str, Any]]:
    """The tap log's entries (``{"dir", "t", "msg"}``), skipping a torn last line."""
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def _error_text(msg: dict[str, Any]) -> str:
    body = msg.get("body") or {}
    error = body.get("error") or {}
    return str(error.get("format") or msg.get("message") or "error")


def _requests_by_seq(entries: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Every request VS Code sent, by its sequence number."""
    return {
        entry["msg"].get("seq", -1): entry["msg"]
        for entry in entries
        if entry.get("dir") == "in" and (entry.get("msg") or {}).get("type") == "request"
    }


def adapter_session(entries: list[dict[str, Any]]) -> AdapterSession:
    """Rebuild the session (stops, output, end) from tap log entries."""
    session = AdapterSession()
    # Requests first: the two directions are logged by separate threads, so a reply may precede its request.
    requests = _requests_by_seq(entries)
    top_frame_ids: set[int] = set()
    locals_refs: set[int] = set()
    for entry in entries:
        msg = entry.get("msg") or {}
        kind = msg.get("type")
        if entry.get("dir") == "in" and kind == "request":
            if msg.get("command") in ("launch", "attach"):
                session.launch_arguments = msg.get("arguments") or {}
            continue
        if entry.get("dir") != "out":
            continue
        if kind == "event":
            _on_event(session, msg)
            if msg.get("event") == "stopped":
                top_frame_ids, locals_refs = set(), set()
            continue
        if kind != "response" or not session.stops:
            if kind == "response" and not msg.get("success", True):
                session.failed_requests.append(f"{msg.get('command')}: {_error_text(msg)}")
            continue
        request = requests.get(msg.get("request_seq", -1), {})
        stop = session.stops[-1]
        args = request.get("arguments") or {}
        body = msg.get("body") or {}
        command = msg.get("command")
        if not msg.get("success", True):
            if command == "evaluate":
                stop.evaluations.append(Evaluation(args.get("expression", ""), args.get("context", ""), None, _error_text(msg)))
            else:
                session.failed_requests.append(f"{command}: {_error_text(msg)}")
            continue
        if command == "stackTrace":
            # VS Code loads the stack lazily (supportsDelayedStackTraceLoading): the top frame first, then the rest.
            start = int(args.get("startFrame") or 0)
            frames = body.get("stackFrames") or []
            stop.stack = stop.stack[:start] + [(f.get("name", ""), int(f.get("line", 0))) for f in frames]
            if body.get("totalFrames") is not None:
                stop.total_frames = int(body["totalFrames"])
            if frames and start == 0:
                top_frame_ids.add(frames[0].get("id"))
        elif command == "scopes" and args.get("frameId") in top_frame_ids:
            for scope in body.get("scopes", []):
                stop.scopes[str(scope.get("name"))] = int(scope.get("variablesReference") or 0)
                if scope.get("name") == "Locals":
                    locals_refs.add(scope["variablesReference"])
                    if scope.get("namedVariables") == 0 and stop.locals is None:
                        stop.locals = {}  # VS Code does not ask for the variables of an empty scope
        elif command == "variables" and args.get("variablesReference") in locals_refs:
            stop.locals_answers.append(list(body.get("variables", [])))
            if not stop.locals:
                stop.locals = {v["name"]: v.get("value", "") for v in body.get("variables", [])}
                stop.locals_sent = list(body.get("variables", []))
        elif command == "variables":
            stop.children.setdefault(int(args.get("variablesReference") or 0), []).extend(body.get("variables", []))
        elif command == "setDataBreakpoints":
            stop.data_breakpoints.extend(body.get("breakpoints", []))
        elif command == "evaluate":
            stop.evaluations.append(Evaluation(args.get("expression", ""), args.get("context", ""), body.get("result"),
                                               reference=int(body.get("variablesReference") or 0),
                                               confidence=body.get("neuralConfidence")))
    return session


def _on_event(session: AdapterSession, msg: dict[str, Any]) -> None:
    name = msg.get("event")
    body = msg.get("body") or {}
    if name == "stopped":
        session.stops.append(AdapterStop(reason=str(body.get("reason", "")), description=body.get("description"),
                                         confidence=body.get("neuralConfidence")))
    elif name == "output":
        session.output.append(str(body.get("output", "")))
    elif name == "terminated":
        session.terminated = True
    elif name == "exited":
        session.exit_code = body.get("exitCode")
    elif name not in ("initialized", "continued", "thread", "process", "capabilities", "breakpoint", "module", "loadedSource", "invalidated"):
        session.custom_events.append(msg)
