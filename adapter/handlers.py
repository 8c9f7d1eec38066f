"""DAP requests -> a `DebugSession`: one `DapHandler` per client connection.

The handler holds everything one debugging conversation needs: the launch configuration, the
program, the session (`model.session_api.DebugSession`, the only thing the adapter depends on),
the breakpoints, the variable references of the current stop, and the optional lockstep
comparison with debugpy. `handle(message)` answers one decoded request: it sends the response and
then the events it caused (``stopped``, ``output``, ``exited``, ``terminated``...). Slow work
(loading a model, predicting a step, running debugpy) runs in a worker thread so other
connections are served meanwhile. No request can crash the handler: failures become error
responses with a message for the user.
"""
from __future__ import annotations

import ast
import logging
import os
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ValidationError

from adapter import confidence as shown
from adapter.breakpoints import describe_unverified, executable_lines
from adapter.client_paths import path_from_client, path_to_client
from adapter.completions import completion_targets
from adapter.data_breakpoints import Change, DataBreakpoints
from adapter.conditions import BreakpointRule, ConditionError, ConditionRaised, check_hit_condition, format_log_message, should_stop
from adapter.evaluate import EvaluateError, evaluate_path, module_frame_index
from adapter import history
from adapter.launch_config import LaunchConfig, LaunchError, Program, check_syntax, load_program, open_session, parse_config
from adapter.source_edit import map_lines, move_breakpoints, move_state
from adapter.variables import VariableStore, parse_repr, replace_path
from adapter.watch import WatchTarget
from model.session_api import DebugSession, SessionError
from protocol import dap
from protocol.debugger import Action, ActionKind, Ending, State, StopReason
from protocol.source_text import read_source

THREAD_ID = 1
LOW_CONFIDENCE = 0.5
MAX_INVERSE_STEPS = 20  # reverseContinue past the start of the history: at most this many predicted steps back
MAX_PASSED_BREAKPOINTS = 1000  # breakpoint hits (false conditions, logpoints) one continue passes before it stops anyway
LIMIT_EXIT_CODE = 124  # exitCode for a run that never ended (ending exit_never), as timeout(1) reports a cut-off
Send = Callable[[BaseModel | dict[str, Any]], Awaitable[Any]]

CAPABILITIES: dict[str, Any] = {
    "supportsConfigurationDoneRequest": True,
    "supportsStepBack": True,
    "supportsSetVariable": True,
    "supportsEvaluateForHovers": True,
    "supportsRestartRequest": True,
    "supportsTerminateRequest": True,
    "supportsDelayedStackTraceLoading": True,
    "supportsExceptionInfoRequest": True,
    "supportsConditionalBreakpoints": True,
    "supportsCompletionsRequest": True,
    "supportsHitConditionalBreakpoints": True,
    "supportsLogPoints": True,
    "supportsDataBreakpoints": True,
    "supportsValueFormattingOptions": False,
    "exceptionBreakpointFilters": [
        {
            "filter": "uncaught",
            "label": "Uncaught Exceptions",
            "description": "Stop where a predicted uncaught exception is raised (as debugpy does).",
            "default": True,
        }
    ],
}


class RequestError(Exception):
    """A request that cannot be honoured; the message goes back in the error response."""


@dataclass
class _Run:
    """One launched program: its configuration, source, session and where it stands."""

    config: LaunchConfig
    program: Program
    session: DebugSession
    started: bool = False
    ended: bool = False
    closed: bool = False  # the session's resources have been released
    comparer: Any = None  # adapter.compare.LockstepComparer when compareWith is "debugpy"
    summary_reported: bool = False  # the comparison summary went out (at the program's end)
    first: State | None = None  # the session's first stop (its history follows it)
    earlier: list[State] = field(default_factory=list)  # stops before the program was edited (adapter.history)
    stamp: tuple[int, int] | None = None  # the program file's (mtime_ns, size) when last read: an edit changes it


@dataclass
class _Outbox:
    """Events a request caused, sent after its response."""

    events: list[BaseModel | dict[str, Any]] = field(default_factory=list)


class DapHandler:
    """One client connection's debugging session (see the module docstring)."""

    def __init__(self, send: Send, log: logging.Logger | None = None) -> None:
        self._send = send
        self.log = log or logging.getLogger("adapter")
        self.run: _Run | None = None
        self.breakpoints: dict[str, list[int]] = {}  # source path -> requested lines
        self.rules: dict[str, dict[int, BreakpointRule]] = {}  # source path -> line -> condition/hit count/log message
        self.exception_filters: set[str] = {"uncaught"}
        self.data_breakpoints = DataBreakpoints()  # Break on Value Change (adapter.data_breakpoints)
        self.variables = VariableStore()
        # Frame ids are new at every stop (debugpy keeps a frame's id while it lives): frames of stop k are
        # frame_base+1..frame_base+n. VS Code keeps a stop's lazily loaded rows (and a "Load More
        # Stack Frames" link) when the next stop's frames compare equal by id, name and line.
        self.frame_base = 0
        self.frames_shown = 0
        self.closed = False  # True after disconnect: the connection should end
        self.line_base = 1  # the client's first line and column: 1, or 0 when initialize says linesStartAt1: false
        self.uri_paths = False  # initialize said pathFormat "uri": source paths travel as file:// URIs
        self.column_base = 1
        self._outbox = _Outbox()

    # ------------------------------------------------------------------ dispatch

    async def handle(self, obj: dict[str, Any]) -> None:
        """Answer one decoded message (requests only; anything else is logged and ignored)."""
        try:
            message = dap.parse_message(obj)
        except dap.MessageError as exc:
            if exc.request_seq is not None:
                await self._reply_error(dap.Request(seq=exc.request_seq, command=exc.command or "unknown"), str(exc))
            else:
                await self.output(f"ignored a message that is not a DAP request: {exc}\n", "console")
            return
        if not isinstance(message, dap.Request):
            self.log.debug("ignoring %s message", obj.get("type"))
            return
        self.log.debug("request %s #%s", message.command, message.seq)
        self._outbox = _Outbox()
        if message.command not in _NO_EDIT_CHECK and self.run is not None and self.run.started and not self.run.ended:
            try:
                await self._check_edit(self.run, message.command)
            except Exception:  # noqa: BLE001 - an edit that cannot be followed must not fail the request
                self.log.error("following an edit failed:\n%s", traceback.format_exc())
                self.note("neural debugger: the program's file changed, but the edit could not be followed (see the log); "
                          "restart to debug the edited program")
        method = getattr(self, "on_" + message.command, None)
        if method is None:
            await self._reply_error(message, f"unsupported request {message.command!r}: the neural debugger does not implement it")
            return
        try:
            body = await method(message)
        except (RequestError, LaunchError, SessionError, EvaluateError) as exc:
            await self._reply_error(message, str(exc))
        except ValidationError as exc:
            await self._reply_error(message, f"invalid {message.command} arguments: {exc.errors()[0]['msg']}")
        except Exception as exc:  # noqa: BLE001 - a bug must not end the session
            self.log.error("request %s failed:\n%s", message.command, traceback.format_exc())
            await self._reply_error(message, f"internal error in {message.command}: {type(exc).__name__}: {exc}")
        else:
            await self._send(dap.response_for(message, body))
        for item in self._outbox.events:
            await self._send(item)
        self._outbox = _Outbox()

    async def _reply_error(self, request: dap.Request, text: str) -> None:
        self.log.info("request %s failed: %s", request.command, text)
        await self._send(dap.error_response(request, text))

    def emit(self, name: str, body: Any = None) -> None:
        """Queue an event to send after the current response."""
        self._outbox.events.append(dap.event(name, body))

    def note(self, text: str, category: str = "console") -> None:
        """Queue an output event (Debug Console)."""
        self.emit("output", {"category": category, "output": text if text.endswith("\n") else text + "\n"})

    async def output(self, text: str, category: str = "console") -> None:
        """Send an output event now."""
        await self._send(dap.event("output", {"category": category, "output": text}))

    async def close(self) -> None:
        """Release the session (the connection ended)."""
        await self._end_run(send_summary=False)

    # ------------------------------------------------------------------ helpers

    def _require_run(self) -> _Run:
        if self.run is None:
            raise RequestError("no program is being debugged: send a launch (or attach) request first")
        return self.run

    def _require_stopped(self) -> tuple[_Run, State]:
        run = self._require_run()
        if run.ended:
            raise RequestError("the debug session has ended: the program is no longer running")
        if not run.started:
            raise RequestError("the program has not started yet: send configurationDone first")
        return run, run.session.state

    @staticmethod
    def _args(request: dap.Request, model: type[dap.DapModel]) -> Any:
        raw = request.arguments
        if isinstance(raw, BaseModel):
            raw = dap.to_wire(raw)
        return model.model_validate(raw or {})

    def _frame_index(self, state: State, frame_id: int | None) -> int:
        if frame_id is None:
            return 0
        index = frame_id - 1 - self.frame_base
        if not 0 <= index < len(state.frames):
            raise RequestError(f"unknown frameId {frame_id}: the program has moved on")
        return index

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)

    # ------------------------------------------------------------------ lifecycle

    async def on_initialize(self, request: dap.Request) -> dict[str, Any]:
        raw = dap.to_wire(request.arguments) if isinstance(request.arguments, BaseModel) else request.arguments
        raw = raw if isinstance(raw, dict) else {}
        self.line_base = 0 if raw.get("linesStartAt1") is False else 1
        self.column_base = 0 if raw.get("columnsStartAt1") is False else 1
        self.uri_paths = raw.get("pathFormat") == "uri"
        return CAPABILITIES

    def _line_in(self, client_line: int) -> int:
        """A client's line number as a 1-based source line."""
        return client_line + 1 - self.line_base

    def _line_out(self, line: int) -> int:
        """A 1-based source line as the client counts lines."""
        return line - 1 + self.line_base

    async def on_launch(self, request: dap.Request) -> None:
        await self._launch(request.arguments)

    async def on_attach(self, request: dap.Request) -> None:
        """Attach carries the same configuration as launch (the TCP server is already running)."""
        await self._launch(request.arguments)

    async def _launch(self, arguments: Any) -> None:
        if self.run is not None and not self.run.ended:
            raise RequestError("a program is already being debugged on this connection")
        if isinstance(arguments, BaseModel):
            arguments = dap.to_wire(arguments)
        try:
            self.run = await self._open(arguments)
        except LaunchError as exc:
            await self.output(f"neural debugger: {exc}\n", "stderr")
            raise
        self._warn_outside(self.run)
        self.emit("initialized")

    def _warn_outside(self, run: _Run) -> None:
        """One Debug Console warning naming what the program reads from outside itself (adapter.outside_inputs)."""
        from adapter.outside_inputs import describe, find_outside
        from model.static.user_modules import collect_user_modules

        found = find_outside(run.program.source)
        modules = collect_user_modules(run.program.source, run.program.path)
        for rel, text in modules.sources.items():
            found += find_outside(text, rel)
        text = describe(found)
        if text is None:
            return
        if run.config.backend == "oracle":
            text = text.replace("the model predicts this program from its source alone and cannot know",
                                "the oracle runs this program once for real (empty stdin); a model would not know", 1)
        self.note(text)

    async def _open(self, arguments: Any) -> _Run:
        config = parse_config(arguments)
        program = load_program(config)
        if config.backend != "oracle":
            await self.output(f"neural debugger: loading the {config.backend} backend...\n")
        session = await self._in_thread(open_session, config, program)
        for notice in getattr(session, "notices", ()):  # e.g. a companion model left out: the session still works
            self.log.warning("session notice: %s", notice)
            await self.output(f"neural debugger: {notice}\n")
        run = _Run(config=config, program=program, session=session, stamp=_stamp(program.path))
        self._apply_breakpoints(run)
        if config.compare_with == "debugpy":
            from adapter.compare import LockstepComparer

            run.comparer = LockstepComparer(program.path, config)
        return run

    async def on_configurationDone(self, request: dap.Request) -> None:
        run = self._require_run()
        if run.started:
            return
        await self._start(run)

    async def _start(self, run: _Run) -> None:
        state = await self._in_thread(run.session.start)
        run.started = True
        run.first = state
        if run.comparer is not None:
            self._report_comparison(await self._in_thread(run.comparer.start, state, self._comparer_breakpoints(run)))
        if run.config.stop_on_entry:
            self._show(run, state)
        elif state.top is not None and state.top.line in self._program_breakpoints(run):
            self._show(run, state, reason="breakpoint")
        else:
            await self._advance(run, Action(kind=ActionKind.CONTINUE))

    async def on_restart(self, request: dap.Request) -> None:
        run = self._require_run()
        args = self._args(request, dap.RestartArguments)
        arguments = args.arguments if args.arguments else dap.to_wire(run.config)
        await self._end_run(send_summary=True, quiet=True)
        self.run = None
        try:
            self.run = await self._open(arguments)
        except LaunchError as exc:
            await self.output(f"neural debugger: {exc}\n", "stderr")
            raise
        await self._start(self.run)

    async def on_terminate(self, request: dap.Request) -> None:
        run = self._require_run()
        if not run.ended:
            await self._end_run(send_summary=True)
            self.emit("terminated")

    async def on_disconnect(self, request: dap.Request) -> None:
        await self._end_run(send_summary=True)
        self.closed = True

    async def _end_run(self, send_summary: bool, quiet: bool = False) -> None:
        run = self.run
        if run is None:
            return
        if not run.ended:
            run.ended = True
        if run.comparer is not None:
            comparer, run.comparer = run.comparer, None
            if send_summary and not quiet and not run.summary_reported:
                self._report_summary(comparer)
            await self._in_thread(comparer.close)
        if not run.closed:
            run.closed = True
            await self._in_thread(run.session.close)

    # ------------------------------------------------------------------ edit and re-predict

    async def _check_edit(self, run: _Run, command: str) -> None:
        """When the program's file changed on disk while stopped: say so, move the stop and the breakpoints into
        the new source and predict the next steps from it (adapter.source_edit); or say why not and offer a restart."""
        stamp = _stamp(run.program.path)
        if stamp is None or stamp == run.stamp:
            return
        run.stamp = stamp
        text = _read_text(str(run.program.path))
        name = run.program.path.name
        if text is None or text == run.program.source:
            return
        try:
            check_syntax(text, name)
        except LaunchError as exc:
            self.note(f"neural debugger: {name} changed on disk but does not compile ({exc}); the next steps still follow "
                      "the version loaded before: save a version that compiles")
            return
        if run.comparer is not None:
            self.note("neural debugger: the comparison with debugpy no longer applies: the program was edited, and debugpy "
                      "runs the version it started with")
            comparer, run.comparer = run.comparer, None
            self._report_summary(comparer)
            await self._in_thread(comparer.close)
        state = run.session.state
        mapping = map_lines(run.program.source, text)
        executable = executable_lines(text)
        moved = move_state(state, text, mapping, executable) if not state.finished else "the program has exited"
        replace = getattr(run.session, "replace_program", None)
        if replace is None:
            moved = "this session cannot take an edited program"
        earlier = self._stops(run)[:-1]
        try:
            now = moved if isinstance(moved, str) else await self._in_thread(replace, text, moved)
        except SessionError as exc:
            now = str(exc)
        if isinstance(now, str):
            self.note(f"neural debugger: {name} changed on disk, but {now}: the next steps still follow the version "
                      "loaded before. Restart (Ctrl+Shift+F5) to debug the edited program from the start")
            return
        run.program = Program(path=run.program.path, source=text)
        run.earlier, run.first = earlier, now
        path = str(run.program.path)
        kept, dropped = move_breakpoints(self.breakpoints.get(path, []), mapping, executable)
        self.breakpoints[path] = await self._in_thread(run.session.set_breakpoints, kept)
        self.rules[path] = {mapping.get(n, n): rule for n, rule in self.rules.get(path, {}).items() if mapping.get(n, n) in kept}
        where = f"line {state.top.line} is now line {now.top.line}" if state.top and now.top and state.top.line != now.top.line \
            else f"the stop stays on line {now.top.line if now.top else '?'}"
        lost = f"; breakpoints on no code now: {', '.join(map(str, dropped))}" if dropped else ""
        self.note(f"neural debugger: {name} changed on disk: {where}; the next steps are predicted from the edited "
                  f"source (breakpoints checked again: {', '.join(map(str, self.breakpoints[path])) or 'none'}{lost})")
        if command not in _STEPS:  # a step shows its own stop; else the views move to the new line now (continued
            # first: without it VS Code 1.139 kept the previous stop's Call Stack state label over the redrawn stop)
            self.emit("continued", {"threadId": THREAD_ID, "allThreadsContinued": True})
            self._show(run, now, reason="step", replay=True)

    # ------------------------------------------------------------------ breakpoints

    def _comparer_breakpoints(self, run: _Run) -> list[int | tuple[str, int]]:
        """The session breakpoints for debugpy: the program's lines, then (real path, line) in other user files."""
        out: list[int | tuple[str, int]] = sorted(self._program_breakpoints(run))
        for path, lines in self.breakpoints.items():
            if path != str(run.program.path) and _library_file(run.program.path, os.path.realpath(path)) is None:
                out += [(os.path.realpath(path), n) for n in lines]
        return out

    def _program_breakpoints(self, run: _Run) -> set[int]:
        return set(self.breakpoints.get(str(run.program.path), []))

    def _apply_breakpoints(self, run: _Run) -> None:
        program = str(run.program.path)
        for path in [p for p in self.breakpoints if p != program and os.path.realpath(p) == program]:
            self.breakpoints[program] = sorted(set(self.breakpoints.get(program, [])) | set(self.breakpoints.pop(path)))
            self.rules[program] = {**self.rules.pop(path, {}), **self.rules.get(program, {})}
        lines = self.breakpoints.get(str(run.program.path), [])
        accepted = run.session.set_breakpoints(sorted(set(lines) & executable_lines(run.program.source)))
        self.breakpoints[str(run.program.path)] = sorted(set(accepted))
        for path, lines in list(self.breakpoints.items()):  # breakpoints set in other files before the launch
            if path == str(run.program.path) or not lines:
                continue
            path_real = os.path.realpath(path)
            try:
                kept = [] if _library_file(run.program.path, path_real) else run.session.set_file_breakpoints(path_real, sorted(lines))
            except SessionError:
                kept = []
            self.breakpoints[path] = sorted(kept)

    async def on_setBreakpoints(self, request: dap.Request) -> dict[str, Any]:
        args = self._args(request, dap.SetBreakpointsArguments)
        asked = [bp.line for bp in args.breakpoints] if args.breakpoints is not None else list(args.lines or [])
        wanted = [self._line_in(n) for n in asked]
        source = args.source
        if not source.path:
            return {"breakpoints": [{"verified": False, "line": n, "message": "no source path"} for n in asked]}
        path = path_from_client(source.path)
        run = self.run if self.run is not None and not self.run.ended else None
        if run is not None and path != str(run.program.path) and os.path.realpath(path) == str(run.program.path):
            path = str(run.program.path)  # the program, written another way (a symlink, "..")
        other = run is not None and path != str(run.program.path)  # another file of the user's project
        if other:
            path = os.path.realpath(path)
            message = _library_file(run.program.path, path)
            if message is not None:
                return {"breakpoints": [{"verified": False, "line": n, "message": message, "source": {"path": source.path}} for n in asked]}
        text = run.program.source if run is not None and not other else _read_text(path)
        executable = executable_lines(text) if text is not None else set()
        accepted = set(n for n in wanted if n in executable)
        rules, refused = _rules(args.breakpoints or [], wanted, accepted)
        accepted -= set(refused)
        session_refusal = None
        if run is not None and other:
            try:
                accepted = set(await self._in_thread(run.session.set_file_breakpoints, path, sorted(accepted)))
            except SessionError as exc:
                session_refusal, accepted = str(exc), set()
        elif run is not None:
            accepted = set(await self._in_thread(run.session.set_breakpoints, sorted(accepted)))
        self.breakpoints[path] = sorted(accepted)
        self.rules[path] = rules
        if run is not None and run.comparer is not None:
            if other:
                await self._in_thread(run.comparer.set_file_breakpoints, path, sorted(accepted))
            else:
                await self._in_thread(run.comparer.set_breakpoints, sorted(accepted))
        result = []
        for i, line in enumerate(wanted):
            item: dict[str, Any] = {"id": i + 1, "verified": line in accepted, "line": self._line_out(line), "source": {"path": source.path}}
            if line not in accepted:
                item["message"] = (refused[line] if line in refused else
                                   session_refusal if session_refusal else
                                   f"cannot read {path}" if text is None else
                                   f"{Path(path).name} does not compile" if not executable else
                                   describe_unverified(line, executable))
            result.append(item)
        return {"breakpoints": result}

    @staticmethod
    def _frame_path(run: _Run, file: str | None) -> str:
        """The real path of a frame's file: the program, or another user file (frames of a model
        carry paths relative to the program's folder, the oracle's absolute ones)."""
        if file is None:
            return str(run.program.path)
        return os.path.realpath(os.path.join(run.program.path.parent, file))

    async def on_dataBreakpointInfo(self, request: dap.Request) -> dict[str, Any]:
        """What "Break on Value Change" would watch: a variable of a scope, an item inside one, or an expression."""
        run, state = self._require_stopped()
        args = self._args(request, dap.DataBreakpointInfoArguments)
        if state.finished:
            return {"dataId": None, "description": "the program has exited: nothing to watch"}
        if args.variables_reference:
            found = self._watch_target(state, args.variables_reference, args.name)
            if isinstance(found, str):
                return {"dataId": None, "description": found}
            target = found
        else:
            index = self._frame_index(state, args.frame_id)
            try:
                evaluate_path(state, args.name, index)
            except EvaluateError as exc:
                return {"dataId": None, "description": str(exc)}
            target = self._target(state, index, args.name)
        return {"dataId": target.data_id, "description": f"when {target.where()} changes", "accessTypes": ["write"],
                "canPersist": False}

    def _watch_target(self, state: State, ref: int, name: str) -> WatchTarget | str:
        """The watch target of entry `name` of container `ref`, or why it cannot be watched."""
        if ref not in self.variables:
            return f"unknown variablesReference {ref}: the program has moved on"
        index = self.variables.index_of(ref, name)
        if index is None:
            return f"{name!r} is not shown under this reference: the program has moved on"
        _, _, expression = self.variables.entry(ref, index)
        current = ref
        while self.variables.frame_of(current) is None:
            owner = self.variables.owner(current)
            if owner is None:
                return f"{name!r} is not a value of a frame (e.g. a model's alternative or a history row): it cannot be watched"
            current = owner[0]
        frame_index = self.variables.frame_of(current)
        if expression is None or frame_index is None:
            return f"{name!r} has no path from a variable (e.g. an item of a set): it cannot be watched"
        return WatchTarget.at(state, frame_index, expression)

    async def on_setDataBreakpoints(self, request: dap.Request) -> dict[str, Any]:
        args = self._args(request, dap.SetDataBreakpointsArguments)
        run = self.run if self.run is not None and self.run.started and not self.run.ended else None
        state = run.session.state if run is not None else None
        return {"breakpoints": self.data_breakpoints.replace(args.breakpoints, state)}

    async def on_setExceptionBreakpoints(self, request: dap.Request) -> dict[str, Any]:
        args = self._args(request, dap.SetExceptionBreakpointsArguments)
        filters = set(args.filters) | {o.filter_id for o in args.filter_options or []}
        self.exception_filters = filters
        return {"breakpoints": [{"verified": f == "uncaught"} for f in args.filters]}

    # ------------------------------------------------------------------ inspection

    async def on_threads(self, request: dap.Request) -> dict[str, Any]:
        return {"threads": [{"id": THREAD_ID, "name": "MainThread"}]}

    async def on_stackTrace(self, request: dap.Request) -> dict[str, Any]:
        run, state = self._require_stopped()
        args = self._args(request, dap.StackTraceArguments)
        if state.finished:  # an exit shown as a stop (stopAtExit)
            return {"stackFrames": self._exit_frames(run, state), "totalFrames": 1}
        start = max(args.start_frame or 0, 0)
        end = len(state.frames) if not args.levels else min(len(state.frames), start + args.levels)
        frames = []
        for index in range(start, end):
            frame = state.frames[index]
            path = Path(self._frame_path(run, frame.file))
            frames.append(
                {"id": self.frame_base + index + 1, "name": frame.name, "line": self._line_out(frame.line), "column": self.column_base,
                 "source": {"name": path.name, "path": path_to_client(path, self.uri_paths)}}
            )
        return {"stackFrames": frames, "totalFrames": len(state.frames)}

    async def on_scopes(self, request: dap.Request) -> dict[str, Any]:
        run, state = self._require_stopped()
        args = self._args(request, dap.ScopesArguments)
        if state.finished:  # an exit shown as a stop: no frame, no variables
            return {"scopes": []}
        index = self._frame_index(state, args.frame_id)
        frame = state.frames[index]
        entries: list[tuple[str, str, str | None]] = []
        sure: list[float | None] = []
        if index == 0 and state.return_value is not None:
            entries.append((f"(return) {state.return_value.name}", state.return_value.value, None))
            sure.append(shown.return_confidence(run.session))
        scores = shown.frame_confidence(run.session, index)
        entries += [(name, value, name) for name, value in frame.locals.items()]
        sure += [scores.get(name, 1.0) for name in frame.locals]
        scopes = [{"name": "Locals", "presentationHint": "locals", "expensive": False, "namedVariables": len(entries),
                   "variablesReference": self.variables.add_scope(entries, frame_index=index, confidence=sure,
                                                                  alternatives=shown.alternatives_for(run.session, index))}]
        last = module_frame_index(state, index)  # the module globals of this frame's file, if on the stack
        if last is not None and last > index:
            module = state.frames[last].locals
            scores = shown.frame_confidence(run.session, last)
            scopes.append({"name": "Globals", "expensive": False, "namedVariables": len(module),
                           "variablesReference": self.variables.add_scope(
                               [(k, v, k) for k, v in module.items()], frame_index=last,
                               confidence=[scores.get(k, 1.0) for k in module],
                               alternatives=shown.alternatives_for(run.session, last))})  # fmt: skip
        scopes += self._history_scope(run, state, index)
        return {"scopes": scopes}

    def _stops(self, run: _Run) -> list[State]:
        """The session's stops so far, the current one last (only the current one after a prediction backwards)."""
        if getattr(run.session, "predicted_backwards", False) or run.first is None:
            return [run.session.state]
        return [*run.earlier, run.first, *(step.state for step in run.session.history)]

    def _reals(self, run: _Run) -> list[State] | None:
        """debugpy's stops beside `_stops` (compare mode), else None."""
        if run.comparer is None or run.earlier:
            return None
        return list(run.comparer.reals)

    def _history_scope(self, run: _Run, state: State, index: int) -> list[dict[str, Any]]:
        """A "History" scope for a frame seen at an earlier stop: each local's values across the stops (adapter.history)."""
        stops = self._stops(run)
        frame = WatchTarget.at(state, index, "_")
        if not any(frame.frame_index(earlier) is not None for earlier in stops[:-1]):
            return []
        reals = self._reals(run)
        entries = []
        for name in state.frames[index].locals:
            rows = history.value_history(stops, WatchTarget.at(state, index, name), reals)
            children = self.variables.add_rows([(r.label, r.shown, 0) for r in history.runs(rows, reals is not None)])
            entries.append((name, history.summary(rows), children))
        return [{"name": "History", "expensive": False, "namedVariables": len(entries),
                 "variablesReference": self.variables.add_rows(entries)}]

    def _target(self, state: State, index: int, expression: str) -> WatchTarget:
        """The watch target of an expression typed in frame `index` (a global seen from a function: the module's frame)."""
        expression = expression.strip()
        if _root_name(expression) not in state.frames[index].locals:
            index = module_frame_index(state, index) or index
        return WatchTarget.at(state, index, expression)

    async def on_variables(self, request: dap.Request) -> dict[str, Any]:
        self._require_stopped()
        args = self._args(request, dap.VariablesArguments)
        if args.variables_reference not in self.variables:
            raise RequestError(f"unknown variablesReference {args.variables_reference}: the program has moved on")
        if self.variables.pending(args.variables_reference):  # the model's alternatives: generated off the event loop
            await self._in_thread(self.variables.variables, args.variables_reference)
        if args.filter == "named" and self._is_indexed(args.variables_reference):
            return {"variables": []}
        found = self.variables.variables(args.variables_reference, args.start or 0, args.count or 0)
        return {"variables": found}

    def _is_indexed(self, ref: int) -> bool:
        items = self.variables.variables(ref, 0, 1)
        return bool(items) and items[0]["name"] == "0"

    async def on_evaluate(self, request: dap.Request) -> dict[str, Any]:
        args = self._args(request, dap.EvaluateArguments)
        run, state = self._require_stopped()
        index = self._frame_index(state, args.frame_id)
        expression = args.expression.strip()
        if expression == "?history" or expression.startswith("?history "):  # "?history x": x's values at the stops so far
            return self._ask_history(run, state, expression[len("?history"):].strip(), index)
        if expression.startswith("?"):  # "?x": how sure the model is of x, and what else it might be
            return await self._ask_alternatives(run, state, expression[1:].strip(), index)
        value = evaluate_path(state, args.expression, index)
        parsed = parse_repr(value)
        root = _root_name(expression)
        sure = shown.frame_confidence(run.session, index).get(root, 1.0) if root in state.frames[index].locals else None
        # A low-confidence local (the bare name, e.g. a hover) lists the model's alternatives among its children.
        offers = shown.alternatives_for(run.session, index) if sure is not None and expression == root else None
        body: dict[str, Any] = {"result": value, "variablesReference": self.variables.add_value(value, expression, sure, offers)}
        if parsed.type_name:
            body["type"] = parsed.type_name
        return shown.mark_variable(body, sure)

    def _ask_history(self, run: _Run, state: State, expression: str, index: int) -> dict[str, Any]:
        if not expression:
            raise RequestError("?history: write ?history NAME with a variable of the frame, or a path such as d['k']")
        evaluate_path(state, expression, index)  # EvaluateError when it names nothing here
        target = self._target(state, index, expression)
        reals = self._reals(run)
        rows = history.value_history(self._stops(run), target, reals)
        return {"result": history.describe(target, rows, reals is not None), "variablesReference": 0,
                "neuralHistory": [{"stop": r.stop, "line": self._line_out(r.line), "value": r.value,
                                   **({"real": r.real} if reals is not None else {})} for r in rows]}

    async def _ask_alternatives(self, run: _Run, state: State, name: str, index: int) -> dict[str, Any]:
        if name not in state.frames[index].locals:
            raise RequestError(f"?{name}: write ?NAME with a local variable of the frame (e.g. ?x)")
        value = state.frames[index].locals[name]
        sure = shown.frame_confidence(run.session, index).get(name, 1.0)
        find = shown.alternatives_for(run.session, index)
        alternatives = await self._in_thread(find, name) if find is not None and sure < 1.0 else []
        return {"result": shown.describe_alternatives(name, value, sure, alternatives), "variablesReference": 0,
                "neuralConfidence": round(sure, 4), "neuralAlternatives": [{"value": v, "neuralConfidence": round(p, 4)}
                                                                         for v, p in alternatives]}  # fmt: skip

    async def on_completions(self, request: dap.Request) -> dict[str, Any]:
        run, state = self._require_stopped()
        args = self._args(request, dap.CompletionsArguments)
        index = self._frame_index(state, args.frame_id)
        cursor = max(0, min(len(args.text), args.column - self.column_base))
        targets, replaced = completion_targets(state, args.text[:cursor], index)
        for target in targets:
            target.update(start=cursor - replaced + self.column_base, length=replaced)
        return {"targets": targets}

    async def on_exceptionInfo(self, request: dap.Request) -> dict[str, Any]:
        _, state = self._require_stopped()
        if state.exception is None and state.reason is StopReason.EXCEPTION:  # a prediction that names no exception
            return {"exceptionId": "Exception", "description": "the model predicted an exception here without naming it",
                    "breakMode": "unhandled"}
        if state.exception is None:
            raise RequestError("no exception at this stop")
        return {"exceptionId": state.exception.type, "description": state.exception.message,
                "breakMode": "unhandled" if state.reason is StopReason.EXCEPTION else "always"}

    async def on_setVariable(self, request: dap.Request) -> dict[str, Any]:
        run, state = self._require_stopped()
        args = self._args(request, dap.SetVariableArguments)
        if state.finished:
            raise RequestError("the program has exited: step back to a stop to edit its variables")
        value = args.value.strip()
        try:
            ast.parse(value, mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            raise RequestError(f"not a Python value: {value!r} (write it as its repr, e.g. 3, 'text', [1, 2])") from None
        scope, frame_index, local, new_local = self._edit_target(state, args.variables_reference, args.name, value)
        await self._in_thread(run.session.set_variable, local, new_local, frame_index)
        if scope != args.variables_reference:
            self.variables.update(scope, local, new_local)
        if run.comparer is not None:
            self.note("neural debugger: the comparison with debugpy no longer applies: a variable was edited, and debugpy runs the real program")
            comparer, run.comparer = run.comparer, None
            self._report_summary(comparer)
            await self._in_thread(comparer.close)
        self.variables.update(args.variables_reference, args.name, value)
        parsed = parse_repr(value)
        return {"value": value, "type": parsed.type_name or None,
                "variablesReference": self.variables.add_value(value, args.name, 1.0)}

    def _edit_target(self, state: State, ref: int, name: str, value: str) -> tuple[int, int, str, str]:
        """What setVariable changes: (scope reference, frame index, local name, the local's new repr).

        `ref` is a frame's Locals/Globals scope (the local `name` itself) or the children of one of
        its values, at any depth (an item, a key's value, a field): the local's repr is rebuilt with
        that part replaced (`adapter.variables.replace_path`).
        """
        index = self.variables.index_of(ref, name)
        if index is None:
            raise RequestError(f"{name!r} is not shown under this reference: the program has moved on")
        path = [index]
        current = ref
        while self.variables.frame_of(current) is None:
            owner = self.variables.owner(current)
            if owner is None:
                raise RequestError("only a frame's variables and the items of its containers can be set")
            current, index = owner
            path.append(index)
        frame_index = self.variables.frame_of(current)
        assert frame_index is not None
        path.reverse()
        local, old, _ = self.variables.entry(current, path[0])
        if local not in state.frames[frame_index].locals:
            raise RequestError(f"{local!r} is not a variable of this frame")
        new_local = replace_path(old, path[1:], value)
        if new_local is None:
            raise RequestError(f"cannot set {name!r}: it is not an item of {local}'s value (e.g. one of the model's alternatives)")
        return current, frame_index, local, new_local

    async def on_neuralPredictBefore(self, request: dap.Request) -> dict[str, Any]:
        """Custom request: predict an earlier stop with the inverse model ("how did we get here?").

        arguments: {"kind": "inv_step_call" (default: the current function's first stop, its
        arguments) | "inv_step_over" | "inv_step_into"}. Answers with a stopped event whose
        description says "predicted backwards"; the forward history is left behind.
        """
        run, state = self._require_stopped()
        raw = request.arguments if isinstance(request.arguments, dict) else (dap.to_wire(request.arguments) if request.arguments else {})
        kind_name = (raw or {}).get("kind") or "inv_step_call"
        try:
            kind = ActionKind(kind_name)
        except ValueError:
            raise RequestError(f"unknown kind {kind_name!r}: use inv_step_call, inv_step_over or inv_step_into") from None
        predict = getattr(run.session, "predict_before", None)
        if predict is None:
            raise RequestError("this backend cannot predict backwards (the oracle only replays its recording): use a model")
        self._stop_comparison_for_step_back(run)
        before = await self._in_thread(predict, kind)
        self._show(run, before, reason="step")
        return {"kind": kind.value}

    async def on_source(self, request: dap.Request) -> dict[str, Any]:
        run = self._require_run()
        try:
            args = self._args(request, dap.SourceArguments)
        except ValidationError:
            args = None  # no usable arguments: the program's own source, as before
        path = args.source.path if args is not None and args.source is not None else None
        if path:  # another user file of the program (a frame's source.path)
            real = os.path.realpath(path_from_client(path))
            if real != str(run.program.path):
                if _library_file(run.program.path, real) is not None:
                    raise RequestError(f"{Path(real).name} is not a file of the program's folder")
                text = _read_text(real)
                if text is None:
                    raise RequestError(f"cannot read {real}")
                return {"content": text, "mimeType": "text/x-python"}
        return {"content": run.program.source, "mimeType": "text/x-python"}

    # ------------------------------------------------------------------ execution

    async def on_next(self, request: dap.Request) -> None:
        await self._step(ActionKind.STEP_OVER)

    async def on_stepIn(self, request: dap.Request) -> None:
        await self._step(ActionKind.STEP_INTO)

    async def on_stepOut(self, request: dap.Request) -> None:
        await self._step(ActionKind.STEP_RETURN)

    async def on_continue(self, request: dap.Request) -> dict[str, Any]:
        await self._step(ActionKind.CONTINUE)
        return {"allThreadsContinued": True}

    async def on_pause(self, request: dap.Request) -> None:
        """Predictions are synchronous: the program is always stopped between requests."""
        self._require_run()

    async def _step(self, kind: ActionKind) -> None:
        run, state = self._require_stopped()
        if state.finished:  # stopped at a shown exit (stopAtExit): going on ends the session
            run.ended = True
            if run.comparer is not None and not run.summary_reported:
                self._report_summary(run.comparer)
                run.summary_reported = True
            self.emit("exited", {"exitCode": self._exit_code_quiet(state)})
            self.emit("terminated")
            return
        await self._advance(run, Action(kind=kind))

    async def _advance(self, run: _Run, action: Action) -> None:
        if action.kind is ActionKind.CONTINUE and self.data_breakpoints:
            await self._continue_watching(run)
            return
        state = await self._in_thread(run.session.step, action)
        if run.comparer is not None:
            self._report_comparison(await self._in_thread(run.comparer.step, action, state))
        passed = 0
        while True:
            skip_exception = state.reason is StopReason.EXCEPTION and "uncaught" not in self.exception_filters
            stop, log = (False, None) if skip_exception else self._breakpoint_decision(run, state)
            if stop:
                break
            if not skip_exception and action.kind not in (ActionKind.CONTINUE, ActionKind.BREAKPOINT):
                # a step that arrived on a breakpoint that does not stop (condition false, logpoint): the step's stop
                self._show(run, state, reason="step", log=log)
                return
            passed += 1
            self._forward_stdout(state)
            self._log(run, state, log)
            if passed > MAX_PASSED_BREAKPOINTS:
                self.note(f"neural debugger: stopped after passing {MAX_PASSED_BREAKPOINTS} breakpoint hits and "
                          "exceptions that do not stop")
                self._show(run, state, replay=True)
                return
            action = Action(kind=ActionKind.CONTINUE)
            state = await self._in_thread(run.session.step, action)
            if run.comparer is not None:
                self._report_comparison(await self._in_thread(run.comparer.step, action, state))
        self._show(run, state)

    async def _continue_watching(self, run: _Run) -> None:
        """Continue with data breakpoints: predicted stepIn stops, one at a time, until a watched value changes.

        Also stops where a plain Continue would: a line breakpoint that says stop (not the calling line a
        function returned to: Continue never stops there again), an uncaught exception, the end. After
        `dataBreakpointSteps` stops without any of these it stops anyway and says so.
        """
        watch = self.data_breakpoints
        watch.arm(run.session.state)
        limit = run.config.data_breakpoint_steps
        lines = self._program_breakpoints(run)
        action = Action(kind=ActionKind.STEP_INTO)
        for taken in range(1, limit + 1):
            state = await self._in_thread(run.session.step, action)
            if run.comparer is not None:
                self._report_comparison(await self._in_thread(run.comparer.step, action, state))
            changes = watch.changes(state)
            for text in watch.notes:
                self.note(f"neural debugger: {text}")
            watch.notes.clear()
            if changes:
                self._show(run, state, reason="data breakpoint", changes=changes)
                return
            if state.finished or (state.reason is StopReason.EXCEPTION and "uncaught" in self.exception_filters):
                self._show(run, state)
                return
            top = state.top
            if top is not None and state.return_value is None and self._on_session_breakpoint(run, top, lines):
                stop, log = self._breakpoint_decision(run, state.model_copy(update={"reason": StopReason.BREAKPOINT}))
                if stop:
                    self._show(run, state, reason="breakpoint")
                    return
                self._log(run, state, log)
            if taken < limit:
                self._forward_stdout(state)
        self.note(f"neural debugger: no watched value changed in {limit} predicted steps (launch attribute "
                  "dataBreakpointSteps); stopped here, Continue goes on watching")
        self._show(run, state, reason="step")

    def _breakpoint_decision(self, run: _Run, state: State) -> tuple[bool, str | None]:
        """Whether a stop is kept, and a logpoint's message to write.

        Kept: any stop but a breakpoint stop, or a breakpoint whose hit count / condition says stop
        (`adapter.conditions.should_stop`). A logpoint whose condition holds gives its message and
        does not stop; a condition that cannot be judged stops (as in debugpy) with a note saying why.
        """
        top = state.top
        if state.reason is not StopReason.BREAKPOINT or top is None:
            return True, None
        rule = self.rules.get(self._frame_path(run, top.file), {}).get(top.line)
        if rule is None or rule.plain:
            return True, None
        try:
            stop = should_stop(rule, state)
        except ConditionRaised as exc:
            if not rule.noted:
                rule.noted = True
                self.note(f"neural debugger: the condition of the breakpoint on line {self._line_out(top.line)} "
                          f"raises ({exc}); not stopping there, as debugpy")
            return False, None
        except ConditionError as exc:
            self.note(f"neural debugger: breakpoint on line {self._line_out(top.line)}: {exc}; stopping here")
            return True, None
        if stop and rule.log_message is not None:
            return False, format_log_message(rule.log_message, state)
        return stop, None

    def _log(self, run: _Run, state: State, log: str | None) -> None:
        """A logpoint's message as debugpy writes it: a stdout line, after the program's own output."""
        if log is None or state.top is None:
            return
        where = Path(self._frame_path(run, state.top.file))
        self.emit("output", {"category": "stdout", "output": log + "\n", "line": self._line_out(state.top.line),
                             "source": {"name": where.name, "path": path_to_client(where, self.uri_paths)}})

    async def on_stepBack(self, request: dap.Request) -> None:
        run, _ = self._require_stopped()
        self._stop_comparison_for_step_back(run)
        replay = bool(run.session.history)  # else the model predicts the stop before (inverse)
        state = await self._in_thread(run.session.step_back)
        self._show(run, state, reason="step", replay=replay)

    async def on_reverseContinue(self, request: dap.Request) -> None:
        run, _ = self._require_stopped()
        self._stop_comparison_for_step_back(run)
        lines = self._program_breakpoints(run)
        state = run.session.state
        while run.session.history:
            state = await self._in_thread(run.session.step_back)
            top = state.top
            if top is not None and self._on_session_breakpoint(run, top, lines):
                self._show(run, state, reason="breakpoint", replay=True)
                return
        if getattr(run.session, "predicted_backwards", False):  # past the start of the history: the inverse model
            for _ in range(MAX_INVERSE_STEPS):
                if state.reason is StopReason.ENTRY:
                    break
                state = await self._in_thread(run.session.step_back)
                top = state.top
                if top is not None and self._on_session_breakpoint(run, top, lines):
                    self._show(run, state, reason="breakpoint")
                    return
            self._show(run, state, reason="step")
            return
        self._show(run, state, reason="entry", replay=True)

    def _on_session_breakpoint(self, run: _Run, top: Any, program_lines: set[int]) -> bool:
        """Whether a frame stands on a session breakpoint: a line of the program, or of another user file."""
        if top.file is None:
            return top.line in program_lines
        return top.line in self.breakpoints.get(self._frame_path(run, top.file), [])

    def _stop_comparison_for_step_back(self, run: _Run) -> None:
        if run.comparer is not None:
            self.note("neural debugger: comparison with debugpy stopped (debugpy cannot step back)")
            self._report_summary(run.comparer)
            comparer, run.comparer = run.comparer, None
            comparer.close()

    # ------------------------------------------------------------------ showing a state

    def _forward_stdout(self, state: State) -> None:
        if state.stdout:
            self.emit("output", {"category": "stdout", "output": state.stdout})

    def _show(self, run: _Run, state: State, reason: str | None = None, replay: bool = False, log: str | None = None,
              changes: Sequence[Change] = ()) -> None:
        """Queue the events for a new current state: output, then stopped or exited + terminated."""
        self.variables.clear()
        self.frame_base += self.frames_shown
        self.frames_shown = max(len(state.frames), 1)
        if not replay and not getattr(run.session, "predicted_backwards", False):
            self._forward_stdout(state)
        self._log(run, state, log)
        if state.finished and getattr(run.config, "stop_at_exit", False):
            self._show_exit(run, state, replay)
            return
        if state.top is not None:
            self._last_top = (state.top.line, state.top.file)
        if state.finished:
            run.ended = True
            if run.comparer is not None and not run.summary_reported:
                self._report_summary(run.comparer)
                run.summary_reported = True
            self.emit("exited", {"exitCode": self._exit_code(run, state)})
            self.emit("terminated")
            return
        if not replay:
            self._confidence_notes(run)
        body: dict[str, Any] = {"reason": reason or state.reason.value, "threadId": THREAD_ID, "allThreadsStopped": True}
        sure = shown.stop_confidence(run.session)
        body["neuralConfidence"] = round(sure, 4)
        body["description"] = shown.describe_stop(run.session, sure, replay=replay)
        if changes:
            body.update(self._describe_changes(run, changes))
        if state.reason is StopReason.EXCEPTION and state.exception is not None:
            body["description"] = f"Exception: {state.exception.type} ({body['description']})"
            body["text"] = f"{state.exception.type}: {state.exception.message}".rstrip(": ")
        self.emit("stopped", body)

    @staticmethod
    def _describe_changes(run: _Run, changes: Sequence[Change]) -> dict[str, Any]:
        """A data breakpoint stop's fields: old -> new for each watched value, and how sure the model is of each new one."""
        texts, sure = [], []
        for change in changes:
            root = _root_name(change.breakpoint.target.expression)
            p = shown.frame_confidence(run.session, change.frame_index).get(root, 1.0)
            sure.append(p)
            texts.append(f"{change.describe()} ({shown.percent(p)} sure)" if getattr(run.session, "predicted", False)
                         else change.describe())
        text = "; ".join(texts)
        return {"description": f"data breakpoint: {text}", "text": text, "neuralValueConfidence": round(min(sure), 4),
                "hitBreakpointIds": [change.breakpoint.id for change in changes]}

    def _show_exit(self, run: _Run, state: State, replay: bool) -> None:
        """A (predicted) exit shown as one more stop (launch attribute stopAtExit): Step Back works from it.

        Any forward step from here ends the session (exited, terminated), as the exit would have.
        """
        sure = shown.stop_confidence(run.session)
        code = self._exit_code(run, state)
        what = f"exited with code {code}"
        if getattr(run.session, "predicted", False):
            text = f"predicted: {what}, {shown.percent(sure)} sure; Step Back to see how"
        else:
            text = f"{what}; Step Back to see how"
        self.emit("stopped", {"reason": "exit", "threadId": THREAD_ID, "allThreadsStopped": True,
                              "neuralConfidence": round(sure, 4), "description": text, "text": text})

    def _exit_frames(self, run: _Run, state: State) -> list[dict[str, Any]]:
        """The stack shown at an exit stop: one frame on the last line that ran, named after the exit."""
        line, file = getattr(self, "_last_top", None) or (0, None)
        path = Path(file) if file else run.program.path
        return [{"id": self.frame_base + 1, "name": f"<exit code {self._exit_code_quiet(state)}>", "line": self._line_out(max(line, 1)),
                 "column": self.column_base, "source": {"name": path.name, "path": path_to_client(path, self.uri_paths)}}]

    @staticmethod
    def _exit_code_quiet(state: State) -> int:
        if state.ending is Ending.NEVER:
            return state.exit_code if state.exit_code else LIMIT_EXIT_CODE
        return state.exit_code if state.exit_code is not None else 0

    def _exit_code(self, run: _Run, state: State) -> int:
        """The exited event's code; a run that never ended (exit_never) is reported as stopped by a limit."""
        if state.ending is not Ending.NEVER:
            return state.exit_code if state.exit_code is not None else 0
        if run.config.backend == "oracle":
            why = "it was stopped by a tracegen limit (time, memory or number of events): it may loop forever"
        else:
            why = "the model predicts it never ends (e.g. an endless loop), so the debugger stopped it as a limit would"
        code = state.exit_code if state.exit_code else LIMIT_EXIT_CODE
        self.note(f"neural debugger: the program did not end (ending exit_never): {why}; exit code {code}")
        return code

    def _confidence_notes(self, run: _Run) -> None:
        for attribute in ("note", "remark"):  # why a prediction failed; what the step's budget cut
            remark = getattr(run.session, attribute, None)
            if isinstance(remark, str) and remark:
                self.note(f"neural debugger: {remark}")
        try:
            scores = run.session.confidence()
        except Exception:  # noqa: BLE001 - a missing score is no reason to fail a step
            return
        low = {name: p for name, p in scores.items() if p < LOW_CONFIDENCE}
        if low:
            listed = ", ".join(f"{name} ({p:.0%})" for name, p in sorted(low.items(), key=lambda kv: kv[1]))
            self.note(f"neural debugger: low confidence in {listed}")

    # ------------------------------------------------------------------ comparison reports

    def _report_comparison(self, divergences: list[dict[str, Any]]) -> None:
        for item in divergences:
            self.note(f"neural debugger vs debugpy: {item['text']}")
            if item.get("fields"):
                self.emit("neuralDivergence", item)

    def _report_summary(self, comparer: Any) -> None:
        summary = comparer.summary
        self.note(summary.describe())
        self.emit("neuralComparisonSummary", summary.to_json())


_NO_EDIT_CHECK = frozenset({"initialize", "launch", "attach", "restart", "terminate", "disconnect", "configurationDone"})
_STEPS = frozenset({"next", "stepIn", "stepOut", "continue", "stepBack", "reverseContinue", "neuralPredictBefore"})


def _stamp(path: Path) -> tuple[int, int] | None:
    """What tells that a file changed: its modification time and size (None: it cannot be read)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def _rules(asked: Sequence[dap.SourceBreakpoint], wanted: list[int], accepted: set[int]) -> tuple[dict[int, BreakpointRule], dict[int, str]]:
    """The accepted breakpoints' rules by line, and the lines refused for a hit condition not understood."""
    rules: dict[int, BreakpointRule] = {}
    refused: dict[int, str] = {}
    for bp, line in zip(asked, wanted):
        if line not in accepted:
            continue
        if bp.hit_condition:
            try:
                check_hit_condition(bp.hit_condition)
            except ConditionError as exc:
                refused[line] = str(exc)
                continue
        rules[line] = BreakpointRule(line, bp.condition or None, bp.hit_condition or None, bp.log_message or None)
    return rules, refused


def _root_name(expression: str) -> str:
    """The variable an evaluate path starts from: ``a`` of ``a[0].b``."""
    end = 0
    while end < len(expression) and (expression[end].isalnum() or expression[end] == "_"):
        end += 1
    return expression[:end]


def _library_file(program: Path, path: str) -> str | None:
    """Why breakpoints in `path` cannot be hit (None: it is user code, a file under the program's folder)."""
    folder = os.path.realpath(program.parent)
    if not path.startswith(folder + os.sep) or any(part in ("site-packages", "dist-packages") for part in Path(path).parts):
        return (f"{Path(path).name} is not under {folder}: the neural debugger steps through the program and its own "
                "modules only, and steps over library code (like debugpy's justMyCode)")
    return None


def _read_text(path: str) -> str | None:
    try:
        return read_source(path)
    except (OSError, UnicodeDecodeError, SyntaxError):
        return None
