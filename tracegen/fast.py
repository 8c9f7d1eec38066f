"""The fast recorder: run a program once under ``sys.settrace``, answer any action script from the trace.

``record_program`` runs the program in the sandboxed child (``child_runner.py``) and returns a
`ProgramTrace`. ``replay`` (or a `ReplaySession`, step by step) walks that trace the way debugpy
1.8 (pydevd, ``justMyCode``, ``showReturnValue``, exception breakpoints ``uncaught``) walks a live
program on Python 3.11, and returns the `State` after every stop. The rules are pydevd's
``PyDBFrame.trace_dispatch`` and ``_do_wait_suspend`` restated over recorded events:

- entry: the first line event of the module (reason ``entry``); without stop-on-entry it runs.
- stepIn: the next line event in user code; the return of a user frame (or of a library frame
  called from user code) to a user caller stops on the calling line, unless the caller is where
  the step started (same frame and line).
- next: the next line event of the same frame; when that frame returns, it becomes a stepIn (so
  it stops on the next line of the caller, not the calling line).
- stepOut: the return of the current frame: a stop on the calling line. At module level (no user
  caller) it runs like continue.
- Generators (and genexprs): a ``return`` event at a ``yield`` is ignored; ``next`` at a
  generator's last return continues as a stepIn limited to the caller. A generator's return goes to
  the frame that resumed it that time (its ``f_back``, e.g. a listcomp draining it), not the frame
  that created it. A coroutine (``async def``) that returns into the event loop (not to an awaiting
  user coroutine) ends a step into, or a step over/out of it, like this: the next user line stops,
  with no return stop and no return value on the way (debugpy never stops at ``asyncio.run``'s return).
- Any line event on a session breakpoint line stops with reason ``breakpoint``, whatever the step
  (the entry stop too). A breakpoint is a line of the program, or ``(file, line)`` in another user
  file (a module the program imports from its folder), given as an absolute path or relative to
  the program's folder. A breakpoint on a line without code moves to the nearest
  preceding line with code, as debugpy moves it.
- Return values: debugpy keeps ``(return) name`` entries in the caller frame for the rest of that
  frame's life (one per function name, the latest wins), recorded when (after the switch above)
  the step is next and the caller is the stepping frame, or stepOut of that frame, or stepIn and
  the caller is user code; a library function's only on stepIn, and never a library generator's or
  coroutine's (``asyncio.sleep``). Like tracegen's debugpy recorder, they are not put in `Frame.locals`;
  `State.return_value` is the top frame's *fresh* entry: of the entries recorded in that frame since
  it was last on a stop's stack (the debugpy recorder empties pydevd's dict of every shown frame after
  each stop), the last in debugpy's display order (pydevd's ``sorted_attributes_key``). The same
  name and value returned again (``None`` from a method called in a loop) is fresh again. `ReplaySession.return_values(fid)` gives
  a frame's whole ``(return)`` dict (reprs at the time of the return). `State.return_value`'s repr
  is the one at the stop, like debugpy's (a class body's ``__class__`` cell is filled after the body
  returns; a returned list may be appended to): the child takes a mutable value's repr again at the
  caller's next line event and at returns into the caller (``Event.updates``).
- An uncaught exception: a stop with reason ``exception`` in the raising frame (the traceback's
  user frames), then ``exited`` with code 1.
- ``breakpoint`` action (the paper's): run like continue with a one-off breakpoint on the given
  line; session breakpoints stop it too (like VS Code's "run to cursor").
- ``continue``: to the next session breakpoint, an uncaught exception, or the end.

After the ``exited`` state, `ReplaySession.step` raises `ReplayError`; `replay` stops there and
ignores the rest of the script. A trace cut by a limit ends in ``exited`` with ending ``exit_never``
and no exit code.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from protocol.debugger import Action, ActionKind, Ending, ExceptionInfo, Frame, ReturnValue, State, StopReason, display_key
from protocol.source_text import read_source
from tracegen.sandbox import Limits, run_traced
from tracegen.trace import CALL, EXCEPTION, LINE, RETURN, ProgramTrace, parse_trace

# a session breakpoint: a line of the program, or (file, line) in another user file (the path absolute
# or relative to the program's folder)
Breakpoint = int | tuple[str, int]

# step commands (pydevd's, justMyCode variants)
RUN, INTO, OVER, OUT, INTO_CORO, LINES = "run", "into", "over", "out", "into_coro", "lines"


class ReplayError(Exception):
    """An action the replay cannot take (after the end, an inverse action, a bad breakpoint line)."""


class RecordError(Exception):
    """The program could not be traced (the runner crashed, the file is missing)."""


def record_program(
    source: str | None = None,
    *,
    path: str | Path | None = None,
    args: Sequence[str] = (),
    limits: Limits = Limits(),
    cwd: str | Path | None = None,
    modules: Mapping[str, str] | None = None,
) -> ProgramTrace:
    """Run a program once in the sandbox and return its full trace.

    Give ``source`` (run as ``program.py`` in a fresh temporary folder) or ``path`` (run in place, so
    imports of sibling files work; its source is read from the file). The working directory is a
    fresh temporary directory unless ``cwd`` is given. ``modules`` (with ``source`` only): user
    modules written beside the program, ``{relative path: source}``; frames of those files then
    carry the relative path and the trace keeps their sources (`ProgramTrace.module_sources`).
    """
    if (source is None) == (path is None):
        raise ValueError("give exactly one of source or path")
    if modules and path is not None:
        raise ValueError("modules go with source (a program given by path imports its own files)")
    if path is not None:
        program = Path(path).resolve()
        if not program.is_file():
            raise RecordError(f"no such program file: {path}")
        text = read_source(program, errors="replace")
        return _record(program, text, str(path), args, limits, cwd)
    with tempfile.TemporaryDirectory(prefix="tracegen-src-") as tmp:
        program = Path(tmp) / "program.py"
        program.write_text(source, encoding="utf-8")
        for rel, text in (modules or {}).items():
            target = Path(tmp) / rel
            if target.resolve().parent != Path(tmp).resolve() and Path(tmp).resolve() not in target.resolve().parents:
                raise ValueError(f"a module path must stay inside the program's folder: {rel!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        trace = _record(program, source, None, args, limits, cwd)
        if modules:
            trace.relativize(str(Path(tmp).resolve()), dict(modules))
        return trace


def _record(program: Path, text: str, shown_path: str | None, args, limits: Limits, cwd) -> ProgramTrace:
    result = run_traced(program, tuple(args), limits, Path(cwd) if cwd is not None else None)
    if result.how == "crashed" and not result.trace_text.strip():
        raise RecordError(f"the tracing runner failed (exit {result.returncode}): {result.stderr[-2000:]}")
    return parse_trace(result.trace_text, text, shown_path, result.stderr, result.killed_reason)


@dataclass
class _Cursor:
    """Where a session stands: the event of the last stop and the debugger's memory."""

    pos: int = -1  # index of the event of the current stop (-1: before the start)
    top: int | None = None  # fid of the frame shown on top at the current stop
    top_line: int = 0
    retvals: dict[int, dict[str, str]] = field(default_factory=dict)  # fid -> {func name: repr}
    finished: bool = False
    exception_pending: bool = False  # stopped at the uncaught exception; next action exits
    # fid -> {func name: repr} recorded since that frame was last on a stop's stack (the debugpy
    # recorder empties pydevd's dict of every shown frame after each stop)
    fresh: dict[int, dict[str, int]] = field(default_factory=dict)  # ... {func name: index of its return event}
    # library frames (by fid) that pydevd traces: those called or resumed at least once during a
    # stepIn or stepOut proper (not a step over, a continue, or a step into a coroutine's caller);
    # only their returns can end a step
    lib_traced: set[int] = field(default_factory=set)

    def copy(self) -> "_Cursor":
        return _Cursor(self.pos, self.top, self.top_line, {k: dict(v) for k, v in self.retvals.items()},
                       self.finished, self.exception_pending, {k: dict(v) for k, v in self.fresh.items()},
                       set(self.lib_traced))


class ReplaySession:
    """Step through a recorded trace like a debugpy session (see the module docstring)."""

    def __init__(self, trace: ProgramTrace, breakpoints: Sequence[Breakpoint] = (), stop_on_entry: bool = True) -> None:
        self.trace = trace
        self.breakpoints, self.file_breakpoints = split_breakpoints(trace, breakpoints)
        self.stop_on_entry = stop_on_entry
        self.cursor = _Cursor()
        self.state: State | None = None

    # ---- public -------------------------------------------------------------------------
    def start(self) -> State:
        """The first stop: ``entry`` on the module's first line, or (without stop-on-entry) a run."""
        if self.state is not None:
            raise ReplayError("the session has already started")
        if self.stop_on_entry:
            for i, ev in enumerate(self.trace.events):
                if ev.kind == LINE:
                    on_bp = self._on_breakpoint(self.trace.frames[ev.fid], ev.line, None)
                    return self._stop_line(i, StopReason.BREAKPOINT if on_bp else StopReason.ENTRY, self._stdout(0, i))
        return self._run(RUN, None, None, None)

    def step(self, action: Action) -> State:
        """Take one forward action from the current stop."""
        if self.state is None:
            raise ReplayError("call start() first")
        if self.cursor.finished:
            raise ReplayError("the program has exited; no more actions")
        kind = action.kind
        if kind.inverse:
            raise ReplayError(f"{kind.value} is an inverse action; the replay only runs forwards")
        if self.cursor.exception_pending:
            return self._exit(len(self.trace.events))
        top = self.cursor.top
        if kind is ActionKind.STEP_INTO:
            return self._run(INTO, None, (top, self.cursor.top_line), None)
        if kind is ActionKind.STEP_OVER:
            return self._run(OVER, top, None, None)
        if kind is ActionKind.STEP_RETURN:
            stop = self._step_out_frame(top)
            return self._run(OUT, stop, None, None) if stop is not None else self._run(RUN, None, None, None)
        if kind is ActionKind.CONTINUE:
            return self._run(RUN, None, None, None)
        if kind is ActionKind.BREAKPOINT:
            if action.line is None:
                raise ReplayError("a breakpoint action needs a line")
            return self._run(RUN, None, None, self.trace.adjust_breakpoint(action.line))
        raise ReplayError(f"unsupported action {kind.value}")

    def fork(self) -> "ReplaySession":
        """An independent copy at the same stop (for building state trees)."""
        other = ReplaySession(self.trace, (), self.stop_on_entry)
        other.breakpoints, other.file_breakpoints = self.breakpoints, self.file_breakpoints
        other.cursor = self.cursor.copy()
        other.state = self.state
        return other

    @property
    def position(self) -> int:
        """Index of the trace event of the current stop (``len(events)`` at the end)."""
        return self.cursor.pos

    def set_breakpoints(self, breakpoints: Sequence[Breakpoint]) -> None:
        """Replace the session breakpoints (program lines, or ``(file, line)`` in other user files)."""
        self.breakpoints, self.file_breakpoints = split_breakpoints(self.trace, breakpoints)

    def _on_breakpoint(self, info, line: int, one_off: int | None) -> bool:  # noqa: ANN001 - FrameInfo
        """Whether a line event of frame `info` is on a session breakpoint (or the one-off line)."""
        if info.lib:
            return False
        if info.file is None:
            return line in self.breakpoints or line == one_off
        return bool(self.file_breakpoints) and (info.file, line) in self.file_breakpoints

    # ---- the walk ------------------------------------------------------------------------
    def _step_out_frame(self, top: int | None) -> int | None:
        """pydevd's stepOut target: the frame whose return ends the step (None: no user caller -> run)."""
        if top is None:
            return None
        frames = self.trace.frames
        info = frames[top]
        frame = top
        while True:
            if info.parent is None:
                return None
            parent = frames[info.parent]
            if info.direct and not parent.lib:
                return frame
            frame = info.parent
            info = parent

    def _run(self, cmd: str, stop: int | None, init: tuple | None, one_off: int | None) -> State:
        trace = self.trace
        events = trace.events
        frames = trace.frames
        bps = self.breakpoints
        fbps = self.file_breakpoints
        retvals = self.cursor.retvals
        fresh = self.cursor.fresh
        lib_traced = self.cursor.lib_traced
        start = self.cursor.pos + 1
        last_ret: tuple[int, str, str] | None = None
        for i in range(start, len(events)):
            ev = events[i]
            kind = ev.kind
            if kind == CALL:
                if (cmd == INTO or cmd == OUT) and frames[ev.fid].lib:
                    lib_traced.add(ev.fid)  # a resume that pydevd declines leaves f_trace as it was
                continue
            if kind == EXCEPTION:
                continue
            fid = ev.fid
            info = frames[fid]
            old_cmd, old_stop = cmd, stop
            if kind == RETURN:
                if info.generator:
                    if not ev.at_return_line:
                        continue  # a yield: pydevd ignores it
                    if info.coroutine and not info.lib and not self._resumed_by_user(ev) and (
                        old_cmd == INTO or (old_stop == fid and old_cmd in (OVER, INTO_CORO))
                    ):
                        cmd, stop = LINES, None  # back into the event loop: the next user line, no return stops
                    elif old_stop == fid and old_cmd in (OVER, INTO):
                        back = self._user_ancestor(fid)
                        cmd, stop = (INTO_CORO, back) if back is not None else (INTO, None)
                    elif old_cmd == INTO_CORO and old_stop == fid:
                        back = self._user_ancestor(fid)
                        cmd, stop = (INTO_CORO, back) if back is not None else (INTO, None)
                elif old_stop == fid and old_cmd in (OVER, OUT):
                    cmd, stop = INTO, None
            elif kind == LINE:
                if ((ev.line in bps or ev.line == one_off) and info.file is None and not info.lib) or (
                        fbps and info.file is not None and not info.lib and (info.file, ev.line) in fbps):
                    return self._stop_line(i, StopReason.BREAKPOINT, self._stdout(start, i), last_ret)
            if kind == RETURN:
                if info.generator and ev.stack:
                    # pydevd looks at f_back: the frame that resumed the generator this time
                    parent, direct = ev.stack[0][0], ev.ret_direct
                else:
                    parent, direct = info.parent, info.direct
                back_user = direct and parent is not None and not frames[parent].lib
                # debugpy keeps a library function's return value only when stepping in, and never a
                # library generator's or coroutine's (e.g. asyncio.sleep)
                shows_value = not info.lib or (cmd == INTO and not info.generator)
                if parent is not None and shows_value and (
                    (cmd == OVER and direct and old_stop == parent)
                    or (cmd == OUT and old_stop == fid)
                    or (cmd == INTO_CORO and self._in_chain(old_stop, fid))
                    or (cmd == INTO and back_user)
                ):
                    retvals.setdefault(parent, {})[ev.ret_name] = ev.ret_value
                    fresh.setdefault(parent, {})[ev.ret_name] = i
                    last_ret = (parent, ev.ret_name, ev.ret_value)
                hit = False
                if old_cmd in (INTO, INTO_CORO):
                    if back_user and ev.stack and (not info.lib or fid in lib_traced):
                        hit = init != (parent, ev.stack[0][1])
                        if hit and old_cmd == INTO_CORO:
                            hit = self._in_chain(old_stop, fid)
                elif old_cmd == OUT:
                    hit = old_stop == fid and back_user
                if hit:
                    return self._stop_return(i, self._stdout(start, i), last_ret)
            elif kind == LINE:
                if old_cmd in (INTO, INTO_CORO):
                    if not info.lib and (old_cmd == INTO or self._in_chain(old_stop, fid)):
                        return self._stop_line(i, StopReason.STEP, self._stdout(start, i), last_ret)
                elif old_cmd == OVER and fid == old_stop:
                    return self._stop_line(i, StopReason.STEP, self._stdout(start, i), last_ret)
                elif old_cmd == LINES and not info.lib:
                    return self._stop_line(i, StopReason.STEP, self._stdout(start, i), last_ret)
        return self._end(start, last_ret)

    def _resumed_by_user(self, ev) -> bool:  # noqa: ANN001 - a return Event of a generator frame
        """Whether a generator's return goes straight back to user code (its f_back is a user frame)."""
        return bool(ev.stack) and ev.ret_direct and not self.trace.frames[ev.stack[0][0]].lib

    def _user_ancestor(self, fid: int) -> int | None:
        frames = self.trace.frames
        parent = frames[fid].parent
        while parent is not None and frames[parent].lib:
            parent = frames[parent].parent
        return parent

    def _in_chain(self, target: int | None, fid: int) -> bool:
        frames = self.trace.frames
        current: int | None = fid
        while current is not None:
            if current == target:
                return True
            current = frames[current].parent
        return False

    def _stdout(self, start: int, stop: int) -> str:
        events = self.trace.events
        return "".join(events[k].stdout for k in range(start, stop + 1) if events[k].stdout)

    # ---- building states -----------------------------------------------------------------
    def _frames(self, stack) -> list[Frame]:
        """The shown frames (library frames left out); built without validation (the data is ours)."""
        trace = self.trace
        frames = trace.frames
        table = trace.locals_table
        construct = _frame
        out = []
        for fid, line, lid in stack:
            info = frames[fid]
            if info.lib:
                continue
            out.append(construct(name=info.name, line=line, source=trace.source_line(line, info.file),
                                 locals=dict(table[lid]), file=info.file))
        return out

    def _locals(self, fid: int, lid: int) -> dict[str, str]:
        return dict(self.trace.locals_table[lid])

    def return_values(self, fid: int) -> dict[str, str]:
        """The ``(return) name`` entries debugpy shows in frame ``fid`` now, in display order."""
        rets = self.cursor.retvals.get(fid)
        if not rets:
            return {}
        if len(rets) == 1:
            return dict(rets)
        return {name: rets[name] for name in sorted(rets, key=display_key)}

    def _finish_stop(self, i: int, top: int, top_line: int, state: State) -> State:
        self.cursor.pos = i
        self.cursor.top = top
        self.cursor.top_line = top_line
        self.state = state
        return state

    def _return_value(self, top: int, stack, at: int | None = None) -> ReturnValue | None:
        """The top frame's fresh ``(return)`` entry (see the module docstring), its repr as of event
        ``at`` (the stop's); then forgets the fresh entries of every frame on this stop's stack."""
        fresh = self.cursor.fresh
        if not fresh:
            return None
        current = fresh.get(top)
        for fid, _line, _lid in stack:
            fresh.pop(fid, None)
        if not current:
            return None
        name = next(iter(current)) if len(current) == 1 else max(current, key=display_key)
        events = self.trace.events
        k = current[name]
        updates = events[at].updates if at is not None else None
        value = updates.get(k, events[k].ret_value) if updates else events[k].ret_value
        return _fast_model(ReturnValue, {"name": name, "value": value})

    def _stop_line(self, i: int, reason: StopReason, stdout: str, last_ret=None) -> State:
        ev = self.trace.events[i]
        state = _state(reason, self._frames(ev.stack), stdout, self._return_value(ev.fid, ev.stack, i))
        return self._finish_stop(i, ev.fid, ev.line, state)

    def _stop_return(self, i: int, stdout: str, last_ret) -> State:
        ev = self.trace.events[i]
        caller, line = ev.stack[0][0], ev.stack[0][1]
        state = _state(StopReason.STEP, self._frames(ev.stack), stdout, self._return_value(caller, ev.stack, i))
        return self._finish_stop(i, caller, line, state)

    def _end(self, start: int, last_ret) -> State:
        trace = self.trace
        end = trace.end
        n = len(trace.events)
        stdout = self._stdout(start, n - 1) + end.stdout if start < n else end.stdout
        if end.how == "uncaught" and end.stack:
            exc = ExceptionInfo(type=end.exception[0], message=end.exception[1]) if end.exception else None
            top = end.stack[0][0]
            state = State(reason=StopReason.EXCEPTION, frames=self._frames(end.stack), exception=exc, stdout=stdout,
                          return_value=self._return_value(top, end.stack))
            self.cursor.exception_pending = True
            return self._finish_stop(n, top, end.stack[0][1], state)
        self.cursor.pos = n
        return self._exit(n, stdout)

    def _exit(self, n: int, stdout: str = "") -> State:
        end = self.trace.end
        self.cursor.finished = True
        self.cursor.pos = n
        self.cursor.top = None
        exc = ExceptionInfo(type=end.exception[0], message=end.exception[1]) if end.exception else None
        self.state = State(reason=StopReason.EXITED, exit_code=end.exit_code, ending=end.ending, stdout=stdout,
                           exception=exc if end.ending is not Ending.NORMAL else None)
        return self.state


def _state(reason: StopReason, frames: list[Frame], stdout: str, return_value: ReturnValue | None) -> State:
    """A stop's State without pydantic validation (every field is built here from the trace)."""
    return _fast_model(State, {"reason": reason, "frames": frames, "return_value": return_value, "exception": None,
                               "stdout": stdout, "exit_code": None, "ending": None})


def _frame(name: str, line: int, source: str, locals: dict[str, str], file: str | None) -> Frame:  # noqa: A002
    return _fast_model(Frame, {"name": name, "line": line, "source": source, "locals": locals, "file": file})


def _fast_model(cls, values: dict):  # noqa: ANN001, ANN202
    """``cls.model_construct(**values)`` for a model whose every field is in ``values`` (no defaults, no
    validators), without pydantic's per-call overhead; ~10x faster on the replay's hot path."""
    obj = _new(cls)
    _setattr(obj, "__dict__", values)
    _setattr(obj, "__pydantic_fields_set__", set(values))
    _setattr(obj, "__pydantic_extra__", None)
    _setattr(obj, "__pydantic_private__", None)
    return obj


_new = object.__new__
_setattr = object.__setattr__


def split_breakpoints(trace: ProgramTrace, breakpoints: Sequence[Breakpoint]) -> tuple[frozenset[int], frozenset[tuple[str, int]]]:
    """Session breakpoints as debugpy places them: program lines, and ``(real path, line)`` of other
    user files (a path is absolute or relative to the program's folder; the program's own path
    counts as the program). Each moves to the nearest preceding line with code."""
    lines: set[int] = set()
    files: set[tuple[str, int]] = set()
    program = os.path.realpath(trace.real_path) if trace.real_path else None
    for bp in breakpoints:
        if isinstance(bp, int):
            lines.add(trace.adjust_breakpoint(bp))
            continue
        file, line = bp
        if file in trace.module_sources:  # a trace whose frames carry relative paths
            path, line = file, trace.adjust_module_breakpoint(file, int(line))
            files.add((path, line))
            continue
        path, line = trace.adjust_file_breakpoint(file, int(line))
        if path == program:
            lines.add(trace.adjust_breakpoint(line))
        else:
            files.add((path, line))
    return frozenset(lines), frozenset(files)


def replay(trace: ProgramTrace, actions: Sequence[Action], breakpoints: Sequence[Breakpoint] = (), stop_on_entry: bool = True) -> list[State]:
    """The states after the start and after each action, ending at (and including) ``exited``.

    Actions left over after the program ended are ignored; if the script runs out first, the
    list ends at the last stop (no ``exited`` state).
    """
    return _replay(ReplaySession(trace, breakpoints, stop_on_entry), actions)


def replay_to_end(trace: ProgramTrace, actions: Sequence[Action], breakpoints: Sequence[Breakpoint] = (), stop_on_entry: bool = True) -> list[State]:
    """Like `replay`, then ``continue`` until the program exits (what ``tracegen record`` prints)."""
    session = ReplaySession(trace, breakpoints, stop_on_entry)
    states = _replay(session, actions)
    while not states[-1].finished:
        states.append(session.step(Action(kind=ActionKind.CONTINUE)))
    return states


def _replay(session: ReplaySession, actions: Sequence[Action]) -> list[State]:
    states = [session.start()]
    for action in actions:
        if states[-1].finished:
            break
        states.append(session.step(action))
    return states
