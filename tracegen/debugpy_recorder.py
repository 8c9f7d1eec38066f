"""Record what real debugpy shows, stop by stop: the ground truth for the fast recorder and the model.

`DebugpySession` drives `python -Xfrozen_modules=off -m debugpy.adapter` (stdio) over DAP with
`justMyCode: true`, `showReturnValue: true`, `console: internalConsole` and the `uncaught`
exception filter, one action at a time (the adapter's `compareWith: debugpy` runs it in lockstep
with a neural session). After every stop it reads the stack, the plain locals of every frame, the
return value, the exception (on exception stops) and the stdout written since the previous stop
into a `protocol.State`. `record_debugpy` runs a whole action script.

What a stop costs: the step request, one `stackTrace`, then the `variables` of every frame sent
together (pipelined) with an `evaluate` that writes an output mark to the program's stdout (its
output reaches us on another channel than the `stopped` event; everything before the mark belongs
to this stop), plus `exceptionInfo` on exception stops. The Locals reference of a frame id is
fetched once with `scopes` and reused (debugpy maps a frame id to the same Locals reference for the
life of the frame).

Session breakpoints are lines of the program, or ``(file, line)`` in another user file (a path
absolute or relative to the program's folder); frames of other files carry the file's real path.

Mapping of actions: step_into/step_over/step_return/continue are DAP stepIn/next/stepOut/continue;
`breakpoint(line)` adds that line to the session's breakpoints for one `continue` and then restores
them (so it stops at the first breakpoint hit, the one-off line or a session one, an uncaught
exception, or the end).

Locals are plain variables: debugpy's "special variables" / "function variables" / "class
variables" / "protected variables" groups, dunder names, modules, functions and classes are left
out. debugpy shows ``(return) name`` entries (pydevd's ``__pydevd_ret_val_dict``) in a frame; they
are not locals: the top frame's entry becomes `State.return_value` (see `_forget_return_values`).
Values are debugpy's reprs (pydevd's SafeRepr: collections longer than 60 items, or 20 when nested,
are cut with ``...``).
"""
from __future__ import annotations

import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from protocol.debugger import (
    ACTION_TO_DAP,
    Action,
    ActionKind,
    Ending,
    ExceptionInfo,
    Frame,
    ReturnValue,
    State,
    StopReason,
)
from protocol.source_text import read_source
from tracegen.dap_client import DapClient, DapError, DapTimeout, Message

GROUP_NAMES = frozenset({"special variables", "function variables", "class variables", "protected variables"})
HIDDEN_TYPES = frozenset({"module", "function", "type", "builtin_function_or_method", "method"})
RETURN_PREFIX = "(return) "
RETURN_DICT = "__pydevd_ret_val_dict"  # where pydevd keeps the return values it shows
DEFAULT_TIMEOUT = 10.0  # seconds for one request, and for the adapter to start
START_TIMEOUT = 60.0  # seconds for the launched program to come up (debugpy spawns it; slow on a loaded machine)
DEFAULT_RUN_TIMEOUT = 30.0  # seconds the program may run between two stops before it counts as never ending
ENDED_GRACE_S = 10.0  # seconds to wait for `terminated` after debugpy refused a step because the program ended


class DebugpyError(RuntimeError):
    """debugpy could not be driven: it died, hung, refused a request, or the program is unusable."""


def adapter_command(python: str | None = None) -> list[str]:
    """The command that starts debugpy's adapter on stdio."""
    return [python or sys.executable, "-Xfrozen_modules=off", "-m", "debugpy.adapter"]


def is_plain_local(variable: Message) -> bool:
    """Whether a `variables` entry is a plain variable (not a group, dunder, module, function, class)."""
    name = variable.get("name", "")
    if name in GROUP_NAMES or name.startswith(RETURN_PREFIX):
        return False
    if name.startswith("__") and name.endswith("__"):
        return False
    return variable.get("type") not in HIDDEN_TYPES


@dataclass
class _Sources:
    """Source lines of the files seen in stack frames, read once per file."""

    lines: dict[str, list[str]] = field(default_factory=dict)

    def line(self, path: str | None, lineno: int) -> str:
        if not path:
            return ""
        if path not in self.lines:
            try:
                self.lines[path] = read_source(path, errors="replace").splitlines()
            except OSError:
                self.lines[path] = []
        text = self.lines[path]
        return text[lineno - 1].strip() if 0 < lineno <= len(text) else ""


def _return_entries(variables: list[Message]) -> list[tuple[str, str]]:
    """The ``(return) name`` entries of a frame's variables as (name, value), in debugpy's order."""
    return [(v["name"][len(RETURN_PREFIX):], v.get("value", "")) for v in variables
            if v.get("name", "").startswith(RETURN_PREFIX)]


class DebugpySession:
    """One program under real debugpy, stepped one action at a time.

    Holds the adapter process, the session's line breakpoints, the thread id, the Locals
    reference of each frame id, the stdout not yet attributed to a stop, and the current state.
    Use as a context manager or call `close`.
    """

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT, run_timeout: float = DEFAULT_RUN_TIMEOUT,
                 python: str | None = None) -> None:
        self.timeout = timeout
        self.run_timeout = run_timeout
        self.python = python or sys.executable
        self.path: str | None = None
        self.breakpoints: list[int] = []
        self.file_breakpoints: dict[str, list[int]] = {}  # real path of another user file -> lines
        self._client: DapClient | None = None
        self._thread_id: int | None = None
        self._locals_ref: dict[int, int] = {}
        self._stdout: list[str] = []
        self._nonce = uuid.uuid4().hex[:12]  # output marks (see _send_output_mark)
        self._marks = 0
        self._exit_code: int | None = None
        self._sources = _Sources()
        self._state: State | None = None

    # -- lifetime -------------------------------------------------------------------------------
    def __enter__(self) -> "DebugpySession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def state(self) -> State:
        if self._state is None:
            raise DebugpyError("the session has not started")
        return self._state

    def start(self, program: str | os.PathLike[str], breakpoints: Sequence[int | tuple[str, int]] = (), *, stop_on_entry: bool = True,
              args: Sequence[str] = (), cwd: str | os.PathLike[str] | None = None,
              env: dict[str, str] | None = None) -> State:
        """Launch the program under debugpy; the first state (entry, a breakpoint, an exception or the end)."""
        if self._client is not None:
            raise DebugpyError("the session has already started")
        path = Path(program).resolve()
        if not path.is_file():
            raise DebugpyError(f"no such program file: {program}")
        self.path = str(path)
        self.breakpoints = sorted(set(int(b) for b in breakpoints if not isinstance(b, tuple)))
        self.file_breakpoints = {}
        for b in breakpoints:
            if isinstance(b, tuple):
                file = os.path.realpath(os.path.join(path.parent, b[0]))
                if file == self.path:
                    self.breakpoints = sorted(set(self.breakpoints) | {int(b[1])})
                else:
                    self.file_breakpoints.setdefault(file, [])
                    self.file_breakpoints[file] = sorted(set(self.file_breakpoints[file]) | {int(b[1])})
        child_env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1", PYTHONIOENCODING="utf-8", PYTHONHASHSEED="0", PYTHONUNBUFFERED="1")
        self._client = DapClient(adapter_command(self.python), env=child_env, timeout=self.timeout)
        client = self._client
        try:
            client.request("initialize", {"clientID": "neural-debugger", "adapterID": "debugpy", "pathFormat": "path",
                                          "linesStartAt1": True, "columnsStartAt1": True})
            launch = client.send("launch", {
                "program": self.path, "stopOnEntry": stop_on_entry, "justMyCode": True, "showReturnValue": True,
                "console": "internalConsole", "cwd": str(cwd or path.parent), "args": list(args),
                "python": [self.python, "-Xfrozen_modules=off"], "env": dict(env or {}),
            })
            client.wait_event(lambda e: e.get("event") == "initialized", timeout=max(self.timeout, START_TIMEOUT),
                              on_other=self._on_event)
            self._set_breakpoints(self.breakpoints)
            for file, lines in self.file_breakpoints.items():
                self._set_breakpoints(lines, file)
            client.request("setExceptionBreakpoints", {"filters": ["uncaught"]})
            client.request("configurationDone")
            client.response(launch)
        except DapError as exc:
            self.close()
            raise DebugpyError(f"debugpy did not start {program}: {exc}") from exc
        self._state = self._wait_stop()
        return self._state

    def close(self) -> None:
        """End the debuggee and the adapter (idempotent)."""
        client, self._client = self._client, None
        if client is None:
            return
        if client.alive:
            try:
                client.request("disconnect", {"terminateDebuggee": True}, timeout=2.0)
            except DapError:
                pass
        client.close()

    # -- breakpoints ----------------------------------------------------------------------------
    def set_breakpoints(self, lines: Sequence[int]) -> list[int]:
        """Replace the session's line breakpoints; returns the lines debugpy accepted."""
        self.breakpoints = sorted(set(int(b) for b in lines))
        if self._state is not None and self._state.finished:
            return list(self.breakpoints)
        return self._set_breakpoints(self.breakpoints)

    def set_file_breakpoints(self, file: str | os.PathLike[str], lines: Sequence[int]) -> list[int]:
        """Replace the line breakpoints of another user file (absolute, or relative to the program's folder)."""
        if self.path is None:
            raise DebugpyError("start the session before setting breakpoints")
        path = os.path.realpath(os.path.join(os.path.dirname(self.path), file))
        if path == self.path:
            return self.set_breakpoints(lines)
        self.file_breakpoints[path] = sorted(set(int(b) for b in lines))
        if self._state is not None and self._state.finished:
            return list(self.file_breakpoints[path])
        return self._set_breakpoints(self.file_breakpoints[path], path)

    def _set_breakpoints(self, lines: Sequence[int], file: str | None = None) -> list[int]:
        body = self._require_client().request(
            "setBreakpoints", {"source": {"path": file or self.path}, "breakpoints": [{"line": n} for n in lines]})
        return [b["line"] for b in body.get("breakpoints", []) if b.get("verified") and "line" in b]

    # -- stepping -------------------------------------------------------------------------------
    def step(self, action: Action) -> State:
        """Take one forward action; the state at the next stop (or the `exited` state)."""
        if self._state is None:
            raise DebugpyError("start the session before stepping")
        if self._state.finished:
            raise DebugpyError("the program has ended; no more steps")
        if action.kind.inverse:
            raise DebugpyError(f"debugpy cannot run backwards: {action}")
        try:
            if action.kind is ActionKind.BREAKPOINT:
                if action.line is None:
                    raise DebugpyError("a breakpoint action needs a line")
                self._set_breakpoints(sorted(set(self.breakpoints) | {action.line}))
                state = self._resume("continue")
                if not state.finished:
                    self._set_breakpoints(self.breakpoints)
            else:
                state = self._resume(ACTION_TO_DAP[action.kind])
        except DapError as exc:
            raise DebugpyError(f"debugpy failed on {action}: {exc}") from exc
        self._state = state
        return state

    def _resume(self, command: str) -> State:
        """Send a step or continue request and wait for where it stops.

        A program that ends while debugpy hands the request on makes debugpy refuse it ("Server[1] disconnected
        unexpectedly"; seen on loaded machines when a Step Out runs off the end): the `terminated` event that
        follows says the program ended, and that is the step's answer. Any other refusal is an error."""
        client = self._require_client()
        reply = client.response(client.send(command, {"threadId": self._thread_id}), check=False)
        if reply.get("success", False):
            return self._wait_stop()
        refused = DapError(f"request {command!r} failed: {reply.get('message') or reply.get('body')}")
        try:
            client.wait_event(lambda e: e.get("event") == "terminated", timeout=ENDED_GRACE_S, on_other=self._on_event)
        except DapError:
            raise refused from None
        return self._ended()

    def _require_client(self) -> DapClient:
        if self._client is None:
            raise DebugpyError("the debugpy session is closed")
        return self._client

    def _on_event(self, event: Message) -> None:
        name = event.get("event")
        body = event.get("body") or {}
        if name == "output" and body.get("category") == "stdout":
            self._stdout.append(body.get("output", ""))
        elif name == "exited":
            self._exit_code = int(body.get("exitCode", 0))

    def _take_stdout(self) -> str:
        text = "".join(self._stdout)
        self._stdout.clear()
        return text

    def _wait_stop(self) -> State:
        """Wait for the next `stopped` (read the state) or the end of the program (`exited` state)."""
        client = self._require_client()
        try:
            event = client.wait_event(lambda e: e.get("event") in ("stopped", "terminated"),
                                      timeout=self.run_timeout, on_other=self._on_event)
        except DapTimeout:
            return self._never_ends()
        if event["event"] == "terminated":
            return self._ended()
        body = event.get("body") or {}
        self._thread_id = body.get("threadId", self._thread_id)
        return self._read_state(StopReason(body.get("reason", "step")))

    def _ended(self) -> State:
        client = self._require_client()
        client.drain_events(self._on_event)
        code = self._exit_code if self._exit_code is not None else 0
        ending = Ending.NORMAL if code == 0 else Ending.ERROR
        last = self._state
        exception = last.exception if code != 0 and last is not None and last.reason is StopReason.EXCEPTION else None
        return State(reason=StopReason.EXITED, stdout=self._take_stdout(), exit_code=code, ending=ending,
                     exception=exception)

    def _never_ends(self) -> State:
        """The program ran past run_timeout without stopping: end it, the way the fast recorder ends an infinite loop."""
        client = self._require_client()
        client.drain_events(self._on_event)
        self.close()
        return State(reason=StopReason.EXITED, stdout=self._take_stdout(), exit_code=None, ending=Ending.NEVER)

    # -- reading a stop -------------------------------------------------------------------------
    def _read_state(self, reason: StopReason) -> State:
        client = self._require_client()
        tid = self._thread_id
        stack_seq = client.send("stackTrace", {"threadId": tid})
        exc_seq = client.send("exceptionInfo", {"threadId": tid}) if reason is StopReason.EXCEPTION else None
        frames_raw = client.response(stack_seq)["body"].get("stackFrames", [])
        refs = self._locals_refs([f["id"] for f in frames_raw])
        var_seqs = [client.send("variables", {"variablesReference": r}) for r in refs]
        mark = self._send_output_mark(frames_raw[0]["id"]) if frames_raw else None
        variables = [client.response(s)["body"].get("variables", []) for s in var_seqs]
        frames = [self._frame(raw, vs) for raw, vs in zip(frames_raw, variables)]
        return_value = self._return_value(variables[0] if variables else [])
        self._forget_return_values([f["id"] for f, vs in zip(frames_raw, variables) if _return_entries(vs)])
        exception = None
        if exc_seq is not None:
            exception = self._exception(client.response(exc_seq, check=False))
        client.drain_events(self._on_event)
        return State(reason=reason, frames=frames, return_value=return_value, exception=exception,
                     stdout=self._stdout_until(mark))

    def _send_output_mark(self, frame_id: int) -> tuple[int, str]:
        """Have the stopped program write a unique mark to its stdout (fd 1, behind all its output so far).

        debugpy's launcher forwards the program's stdout on its own channel, so an output event can
        arrive after the `stopped` event it precedes; the mark tells where this stop's output ends.
        """
        self._marks += 1
        text = f"\x1e{self._nonce}:{self._marks}\x1e"
        expression = f"__import__('os').write(1, {text.encode()!r})"
        seq = self._require_client().send("evaluate", {"expression": expression, "frameId": frame_id, "context": "repl"})
        return seq, text

    def _stdout_until(self, mark: tuple[int, str] | None) -> str:
        """The stdout written since the previous stop: everything before this stop's mark."""
        client = self._require_client()
        if mark is not None and client.response(mark[0], check=False).get("success"):
            text = mark[1]

            def arrived(event: Message) -> bool:
                self._on_event(event)
                return text in "".join(self._stdout)

            try:
                if text not in "".join(self._stdout):
                    client.wait_event(arrived)
            except DapTimeout:
                pass  # the mark never came back: keep what arrived
            before, _, after = "".join(self._stdout).partition(text)
            self._stdout[:] = [after]
            return before
        return self._take_stdout()

    @staticmethod
    def _return_value(top_variables: list[Message]) -> ReturnValue | None:
        """The top frame's ``(return)`` entry: every one shown was recorded during the last step (see below)."""
        entries = _return_entries(top_variables)
        if not entries:
            return None
        name, value = entries[-1]
        return ReturnValue(name=name, value=value)

    def _forget_return_values(self, frame_ids: list[int]) -> None:
        """Empty pydevd's return-value dict in these frames, so the next stop shows only fresh ones.

        pydevd keeps every ``(return) name`` it recorded in a frame until the frame ends; emptying
        the dict after each stop makes what the next stop shows exactly the return values recorded
        during that step (the fast recorder's `State.return_value`).
        """
        client = self._require_client()
        seqs = [client.send("evaluate", {"expression": f"{RETURN_DICT}.clear()", "frameId": fid, "context": "repl"})
                for fid in frame_ids]
        for seq in seqs:
            client.response(seq, check=False)

    def _locals_refs(self, frame_ids: list[int]) -> list[int]:
        """The Locals variablesReference of each frame id (scopes requests only for frame ids not seen yet)."""
        client = self._require_client()
        missing = [fid for fid in frame_ids if fid not in self._locals_ref]
        seqs = [client.send("scopes", {"frameId": fid}) for fid in missing]
        for fid, seq in zip(missing, seqs):
            scopes = client.response(seq)["body"].get("scopes", [])
            local = next((s for s in scopes if s.get("name") == "Locals"), scopes[0] if scopes else None)
            if local is None:
                raise DebugpyError(f"debugpy gave frame {fid} no scopes")
            self._locals_ref[fid] = int(local["variablesReference"])
        return [self._locals_ref[fid] for fid in frame_ids]

    def _frame(self, raw: Message, variables: list[Message]) -> Frame:
        path = (raw.get("source") or {}).get("path")
        line = int(raw.get("line", 0))
        real = os.path.realpath(path) if path else None
        same = real is not None and real == self.path
        return Frame(
            name=raw.get("name", "?"), line=line, source=self._sources.line(path, line),
            locals={v["name"]: v.get("value", "") for v in variables if is_plain_local(v)},
            file=None if same else real,
        )

    @staticmethod
    def _exception(response: Message) -> ExceptionInfo | None:
        if not response.get("success"):
            return None
        body: dict[str, Any] = response.get("body") or {}
        details = body.get("details") or {}
        type_name = details.get("typeName") or body.get("exceptionId") or "Exception"
        return ExceptionInfo(type=type_name, message=body.get("description") or details.get("message") or "")


def record_debugpy(path: str | os.PathLike[str], actions: Sequence[Action], breakpoints: Sequence[int | tuple[str, int]] = (),
                   stop_on_entry: bool = True, timeout: float = DEFAULT_TIMEOUT,
                   run_timeout: float = DEFAULT_RUN_TIMEOUT, args: Sequence[str] = (),
                   to_end: bool = False) -> list[State]:
    """Run `path` under debugpy with an action script; every state from the first stop to `exited`.

    Actions left over after the program ended are ignored; if the script runs out first, the list
    ends at the last stop (no `exited` state), like `tracegen.fast.replay`, or with `to_end` goes on
    with ``continue`` until the program ends, like `tracegen.fast.replay_to_end` (what
    ``tracegen record`` prints).
    """
    with DebugpySession(timeout=timeout, run_timeout=run_timeout) as session:
        states = [session.start(path, breakpoints, stop_on_entry=stop_on_entry, args=args)]
        for action in actions:
            if states[-1].finished:
                break
            states.append(session.step(action))
        while to_end and not states[-1].finished:
            states.append(session.step(Action(kind=ActionKind.CONTINUE)))
        return states


def _elapsed_demo() -> None:  # pragma: no cover - manual timing aid
    start = time.perf_counter()
    states = record_debugpy(sys.argv[1], [Action.parse(a) for a in sys.argv[2].split(",") if a])
    for state in states:
        print(state.reason.value, state.location, state.top.locals if state.top else state.exit_code)
    print(f"{len(states)} states in {time.perf_counter() - start:.2f}s", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    _elapsed_demo()
