"""OracleDebugger: a DebugSession answered by tracegen's fast recorder. Tests and comparison only.

It RUNS the program (once, in tracegen's sandbox) and replays the recording for every action, so
its stops are debugpy's; the adapter can then be tested exactly, independent of model quality.
Never a default: the product's sessions are `model.session.NeuralDebugger`.
"""
from __future__ import annotations

import os
from pathlib import Path

from model.session_api import SessionError
from protocol.debugger import Action, State, Step
from protocol.source_text import read_source


class OracleDebugger:
    """Replays one recording of `program`; `step_back` is exact (a copy of the replay per stop).

    path: the program's file; when it exists and holds `program`, the recording runs it in place
    (so imports of sibling files work), else it runs `program` from a temporary folder.
    """

    def __init__(self, program: str, path: str | None = None, *, breakpoints: list[int] | None = None, args: list[str] | None = None,
                 cwd: str | None = None) -> None:
        self.program = program
        self.path = path
        self.args = list(args or [])
        self.cwd = cwd  # the program's working directory (None: a fresh temporary one)
        self._breakpoints: list[int] = sorted(set(breakpoints or []))
        self._file_breakpoints: dict[str, list[int]] = {}  # real path of another user file -> lines
        self._trace = None
        self._replays: list = []  # a ReplaySession per stop, forked, so stepping back is exact
        self._states: list[State] = []
        self._actions: list[Action] = []

    def start(self) -> State:
        from tracegen.fast import ReplayError, ReplaySession

        trace = self._record()
        replay = ReplaySession(trace, self._all_breakpoints(), stop_on_entry=True)
        try:
            state = replay.start()
        except ReplayError as exc:
            raise SessionError(f"the recording cannot be replayed: {exc}") from None
        self._replays, self._states, self._actions = [replay], [state], []
        return state

    def set_breakpoints(self, lines: list[int]) -> list[int]:
        wanted = set(int(line) for line in lines) & _breakable(self.program)
        self._breakpoints = sorted(wanted)
        return list(self._breakpoints)

    def set_file_breakpoints(self, file: str, lines: list[int]) -> list[int]:
        """Breakpoints in another user file (absolute, or relative to the program's folder): the lines with code."""
        if not self.path:
            raise SessionError("the program has no file, so it has no other user files")
        path = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(self.path)), file))
        try:
            text = read_source(path, errors="replace")
        except OSError as exc:
            raise SessionError(f"cannot read {file}: {exc}") from None
        accepted = sorted(set(int(n) for n in lines) & _breakable(text))
        if accepted:
            self._file_breakpoints[path] = accepted
        else:
            self._file_breakpoints.pop(path, None)
        return accepted

    def _all_breakpoints(self) -> list:
        return [*self._breakpoints, *((f, n) for f, lines in self._file_breakpoints.items() for n in lines)]

    def step(self, action: Action) -> State:
        from tracegen.fast import ReplayError

        self._require_started()
        if self._states[-1].finished:
            raise SessionError("the program has exited; restart the session to debug it again")
        if action.kind.inverse:
            raise SessionError(f"the oracle replays a recording forwards; use step_back instead of {action.kind.value}")
        replay = self._replays[-1].fork()
        replay.set_breakpoints(self._all_breakpoints())
        try:
            state = replay.step(action)
        except ReplayError as exc:
            raise SessionError(str(exc)) from None
        self._replays.append(replay)
        self._states.append(state)
        self._actions.append(action)
        return state

    def step_back(self) -> State:
        self._require_started()
        if not self._actions:
            raise SessionError("already at the start of the recording: there is no earlier stop")
        self._replays.pop()
        self._states.pop()
        self._actions.pop()
        return self._states[-1]

    def replace_program(self, program: str, state: State) -> State:
        """Go on with an edited program (its file changed while stopped), on whose lines `state` stands.

        The oracle runs the edited program again and takes as many stepIn stops as the old run took to
        get here: when that stop is `state` (the same frames on the moved lines, the same locals), the
        edit changed nothing that already ran, and the next stops come from the new run. Otherwise it
        raises SessionError (the edit changed code that already ran: only a restart shows the real run).
        """
        from tracegen.fast import ReplayError, ReplaySession

        self._require_started()
        try:
            old = ReplaySession(self._record(), (), stop_on_entry=True)
            count, at = 0, self._replays[-1].position
            old.start()
            while old.position < at and not old.cursor.finished:
                old.step(Action.parse("stepIn"))
                count += 1
            if old.position != at:
                raise SessionError("the stop is not one a run of stepIn stops reaches")
            kept = self.program, self._trace
            self.program, self._trace = program, None
            try:
                replay = ReplaySession(self._record(), self._all_breakpoints(), stop_on_entry=True)
                now = replay.start()
                for _ in range(count):
                    if now.finished:
                        break
                    now = replay.step(Action.parse("stepIn"))
                if _place(now) != _place(state):
                    raise SessionError("run again, the edited program does not reach this stop with the same values "
                                       "(the edit changed code that already ran)")
            except BaseException:
                self.program, self._trace = kept
                raise
        except ReplayError as exc:
            raise SessionError(f"the edited program's run cannot be replayed: {exc}") from None
        self._breakpoints = sorted(set(self._breakpoints) & _breakable(program))
        self._replays, self._states, self._actions = [replay], [now], []
        return now

    def set_variable(self, name: str, value: str, frame_index: int = 0) -> State:
        """Edit the shown state only: the oracle's later steps still come from the recording."""
        self._require_started()
        state = self._states[-1].model_copy(deep=True)
        if not 0 <= frame_index < len(state.frames):
            raise SessionError(f"no frame {frame_index}: the stack has {len(state.frames)} frame(s)")
        state.frames[frame_index].locals[name] = value
        self._states[-1] = state
        return state

    @property
    def history(self) -> list[Step]:
        return [Step(action=a, state=s) for a, s in zip(self._actions, self._states[1:])]

    @property
    def state(self) -> State:
        self._require_started()
        return self._states[-1]

    def confidence(self) -> dict[str, float]:
        top = self.state.top
        return {name: 1.0 for name in top.locals} if top is not None else {}

    def close(self) -> None:
        self._replays = []

    # ------------------------------------------------------------------

    def _require_started(self) -> None:
        if not self._states:
            raise SessionError("the session has not started: call start() first")

    def _record(self):  # noqa: ANN202 - tracegen.trace.ProgramTrace, imported lazily
        if self._trace is not None:
            return self._trace
        from tracegen.fast import RecordError, record_program

        try:
            if self.path and Path(self.path).is_file() and read_source(self.path, errors="replace") == self.program:
                self._trace = record_program(path=self.path, args=self.args, cwd=self.cwd)
            else:
                self._trace = record_program(self.program, args=self.args, cwd=self.cwd)
        except (RecordError, OSError, ValueError) as exc:
            raise SessionError(f"the oracle could not record the program: {exc}") from None
        return self._trace


def _place(state: State) -> list[tuple[str, str | None, int, dict[str, str]]]:
    """What must agree for two stops to be the same one: each frame's name, line and locals."""
    return [(f.name, f.file, f.line, f.locals) for f in state.normalized().frames]


def _breakable(program: str) -> set[int]:
    from model.session import executable_lines

    return executable_lines(program)
