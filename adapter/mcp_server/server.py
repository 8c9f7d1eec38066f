"""The MCP tools, on the official SDK's `MCPServer` (structured output from the pydantic result models).

`build_server(settings)` makes one server with its own `SessionRegistry` and its own one-shot model
(for `predict_call` and `predict_inputs`). Every tool runs in a worker thread (the SDK runs plain
functions so); every failure a caller can cause (a missing file, a syntax error, an unknown session,
an exhausted program, a huge argument) comes back as a tool error (``isError``) with a message that
says what to do, and the server goes on.
"""
from __future__ import annotations

import ast
import functools
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from adapter.evaluate import EvaluateError, evaluate_path, module_frame_index, parse_path
from adapter.launch_config import LaunchError, load_program, open_session, parse_config
from adapter.mcp_server.calls import CallError, pose_call, pose_inputs, run_call, run_inputs
from adapter.mcp_server.results import (ArgumentsCandidate, CallResult, Divergence, EvaluateResult, InputsResult, SessionEnded,
                                        SessionStarted, StackResult, StepResult, Stop, Variable, VariablesResult, VerifyResult, cut, stop_of)  # fmt: skip
from adapter.mcp_server.sessions import OpenSession, RegistryError, SessionRegistry
from adapter.mcp_server.verify import verify_trail
from adapter.variables import parse_repr
from model import paths
from model.session_api import SessionError
from protocol.debugger import Action, ActionKind, State

INSTRUCTIONS = (
    "A debugger for Python that predicts instead of running: every stop of a 'neural' session, and the answers of "
    "predict_call and predict_inputs, are predicted by a small language model from the source alone, each with a "
    "calibrated confidence (0-1). Nothing is executed except by verify and by a session with backend 'debugpy' or "
    "'compare', which say so. Use low confidence as a cue to verify or to read the code."
)
ACTIONS: dict[str, ActionKind] = {"in": ActionKind.STEP_INTO, "over": ActionKind.STEP_OVER, "out": ActionKind.STEP_RETURN,
                                  "continue": ActionKind.CONTINUE}  # fmt: skip
MAX_PATH = 4096
MAX_SOURCE = 200_000
MAX_TEXT = 20_000
EXPAND_FACTOR = 50  # get_variables / evaluate show a value up to this many times the value limit


@dataclass(frozen=True)
class ServerSettings:
    """model: the checkpoint folder (None: the shipped one). value_limit: characters of a value in a stop before it is cut."""

    model: Path | None = None
    max_sessions: int = 4
    idle_seconds: float = 900.0
    reap_every_seconds: float = 30.0
    value_limit: int = 200
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "WARNING"


class OneShotModel:
    """The model that answers predict_call and predict_inputs: loaded once, one question at a time."""

    def __init__(self, model: Path | None) -> None:
        self.model = model
        self.lock = threading.Lock()
        self._base: Any = None  # the first session: its backend, tokenizer, companions and calibration serve every question

    def session(self, program: str, **options: Any) -> Any:
        """A fresh `NeuralDebugger` on `program` sharing the loaded model (hold `lock` while it is used)."""
        from model.session import NeuralDebugger

        if self._base is None:
            try:
                folder = paths.resolve_checkpoint(str(self.model) if self.model else None)
            except paths.CheckpointNotFound as exc:
                raise ToolError(str(exc)) from None
            self._base = NeuralDebugger.from_checkpoint(folder, program)
        base = self._base
        return NeuralDebugger(base.backend, base.tokenizer, program, calibration=base.calibration, companions=base.companions, **options)


_F = TypeVar("_F", bound=Callable[..., Any])


def _tool_errors(fn: _F) -> _F:
    """Every failure of a tool becomes a ToolError (isError) with a message for the agent; the server goes on."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except (RegistryError, SessionError, LaunchError, EvaluateError, CallError) as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a model or recorder failure must not end the server
            raise ToolError(f"{fn.__name__} failed: {type(exc).__name__}: {exc}") from None

    return wrapper  # type: ignore[return-value]


def build_server(settings: ServerSettings = ServerSettings()) -> MCPServer:
    """The MCP server with the ten tools (see docs/mcp.md)."""
    registry = SessionRegistry(settings.max_sessions, settings.idle_seconds)
    oneshot = OneShotModel(settings.model)
    limit = settings.value_limit

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            async def reaper() -> None:
                while True:
                    await anyio.sleep(settings.reap_every_seconds)
                    await anyio.to_thread.run_sync(registry.reap)

            group.start_soon(reaper)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                await anyio.to_thread.run_sync(registry.close_all)

    server = MCPServer("neural-debugger", instructions=INSTRUCTIONS, lifespan=lifespan, log_level=settings.log_level)

    def show(opened: OpenSession, state: State, note: str | None = None) -> Stop:
        return stop_of(state, str(opened.program.path), _stop_confidence(opened.session), limit, note or getattr(opened.session, "note", None))

    @server.tool(description=(
        "Start debugging a Python program (a file path). backend 'neural' (default) predicts every stop with the model and runs "
        "nothing; 'debugpy' RUNS the program under the real recorder (in a sandbox) and shows its true stops; 'compare' predicts "
        "and also RUNS real debugpy in lockstep, listing at each stop how reality differed. breakpoints: lines of the program ('12') "
        "or of a module it imports ('util.py:7'). stop_on_entry=false runs to the first breakpoint. Returns the session id and the first stop."))  # fmt: skip
    @_tool_errors
    def start_session(
        program: Annotated[str, Field(max_length=MAX_PATH, description="path of the .py file (absolute, or relative to the server's folder)")],
        backend: Literal["neural", "debugpy", "compare"] = "neural",
        breakpoints: Annotated[list[Annotated[str, Field(max_length=MAX_PATH)]], Field(max_length=200)] = [],  # noqa: B006 - the SDK copies defaults
        stop_on_entry: bool = True,
    ) -> SessionStarted:
        config = parse_config({"program": program, "backend": "oracle" if backend == "debugpy" else "transformers",
                               "model": str(settings.model) if settings.model else None})  # fmt: skip
        loaded = load_program(config)
        lines, files = _parse_breakpoints(breakpoints, loaded.path)

        def make(session_id: str) -> OpenSession:
            opened = OpenSession(session_id=session_id, backend=backend, program=loaded, session=open_session(config, loaded))
            try:
                return _begin(opened, lines, files, stop_on_entry)
            except BaseException:
                opened.close()
                raise

        opened = registry.open(make)
        accepted = [str(n) for n in opened.breakpoints] + [f"{f}:{n}" for f, ns in opened.file_breakpoints.items() for n in ns]
        return SessionStarted(session_id=opened.session_id, backend=backend, stop=show(opened, opened.trail[-1][1]), breakpoints=accepted,
                              notices=list(getattr(opened.session, "notices", [])))  # fmt: skip

    def _begin(opened: OpenSession, lines: list[int], files: dict[str, list[int]], stop_on_entry: bool) -> OpenSession:
        session = opened.session
        opened.breakpoints = session.set_breakpoints(lines)
        for file, wanted in files.items():
            accepted = session.set_file_breakpoints(file, wanted)
            if accepted:
                opened.file_breakpoints[file] = accepted
        state = session.start()
        opened.trail = [(None, state)]
        if opened.backend == "compare":
            from adapter.compare import LockstepComparer

            opened.comparer = LockstepComparer(opened.program.path)
            every = [*opened.breakpoints, *((str((opened.program.path.parent / f).resolve()), n) for f, ns in opened.file_breakpoints.items() for n in ns)]
            opened.comparer.start(state, every)
        if not stop_on_entry:
            _take(opened, Action(kind=ActionKind.CONTINUE))
        return opened

    def _take(opened: OpenSession, action: Action) -> list[Divergence] | None:
        state = opened.session.step(action)
        opened.trail.append((action, state))
        if opened.comparer is None:
            return None
        found = opened.comparer.step(action, state)
        return [Divergence(stop=d.get("stop", len(opened.trail)), action=str(action), fields=d.get("fields", []), text=d["text"]) for d in found]

    @server.tool(description=(
        "Take one debugger action and return the next stop: 'in' (step into calls), 'over' (next line in this frame), 'out' "
        "(run until this function returns), 'continue' (to the next breakpoint, an uncaught exception or the end), 'back' "
        "(undo the last step; before the first stop a neural session predicts the earlier stop)."))  # fmt: skip
    @_tool_errors
    def step(session_id: Annotated[str, Field(max_length=64)], action: Literal["in", "over", "out", "continue", "back"] = "over") -> StepResult:
        with registry.use(session_id) as opened:
            if action == "back":
                return StepResult(stop=show(opened, _back(opened)))
            divergences = _take(opened, Action(kind=ACTIONS[action]))
            stop = show(opened, opened.trail[-1][1])
            stop.divergences = divergences
            return StepResult(stop=stop)

    def _back(opened: OpenSession) -> State:
        state = opened.session.step_back()
        if len(opened.trail) > 1:
            opened.trail.pop()
            opened.edited.discard(len(opened.trail))
        else:  # predicted before the first stop: the trail no longer starts at the program's entry
            opened.trail = [(None, state)]
            opened.replayable = False
        if opened.comparer is not None:
            opened.comparer.close()
            opened.comparer = None
        return state

    @server.tool(description="The current call stack, innermost frame first, with the stop's confidence.")
    @_tool_errors
    def get_stack(session_id: Annotated[str, Field(max_length=64)]) -> StackResult:
        with registry.use(session_id) as opened:
            stop = show(opened, opened.session.state)
            return StackResult(frames=stop.frames, confidence=stop.confidence)

    @server.tool(description=(
        "The variables of a frame (0 = innermost) at the current stop, each with its calibrated confidence. Long values are cut: "
        "pass a variable's `path` (a name, then [index], ['key'] or .attr steps) to see that value whole and its parts."))  # fmt: skip
    @_tool_errors
    def get_variables(session_id: Annotated[str, Field(max_length=64)], frame: Annotated[int, Field(ge=0)] = 0,
                      path: Annotated[str | None, Field(max_length=MAX_TEXT)] = None) -> VariablesResult:  # fmt: skip
        with registry.use(session_id) as opened:
            state = opened.session.state
            _check_frame(state, frame)
            if path is None:
                confidences = _variable_confidence(opened.session, frame)
                return VariablesResult(frame=frame, variables=[
                    _variable(name, value, name, confidences.get(name, 1.0), limit) for name, value in state.frames[frame].locals.items()])
            value = evaluate_path(state, path, frame)
            confidence = _path_confidence(opened.session, state, path, frame)
            shown, was_cut = cut(value, limit * EXPAND_FACTOR)
            children = [_variable(c.name, c.value, path + c.accessor, confidence, limit) for c in parse_repr(value).children]
            return VariablesResult(frame=frame, path=path, value=shown, truncated=was_cut, variables=children)

    @server.tool(description=(
        "The predicted value of a variable or of a path into one (x, d['k'], items[0].name) in a frame of the current stop. "
        "Nothing is run: calls and operators are refused."))  # fmt: skip
    @_tool_errors
    def evaluate(session_id: Annotated[str, Field(max_length=64)], expression: Annotated[str, Field(max_length=MAX_TEXT)],
                 frame: Annotated[int, Field(ge=0)] = 0) -> EvaluateResult:  # fmt: skip
        with registry.use(session_id) as opened:
            state = opened.session.state
            _check_frame(state, frame)
            value = evaluate_path(state, expression, frame)
            shown, was_cut = cut(value, limit * EXPAND_FACTOR)
            return EvaluateResult(expression=expression, value=shown, truncated=was_cut,
                                  confidence=_path_confidence(opened.session, state, expression, frame))  # fmt: skip

    @server.tool(description=(
        "What if: set a variable of a frame at the current stop to a new value (a Python literal as repr writes it, e.g. 42, "
        "'text', [1, 2]); the following stops are predicted from the edited state. Returns the edited stop."))  # fmt: skip
    @_tool_errors
    def set_variable(session_id: Annotated[str, Field(max_length=64)], name: Annotated[str, Field(max_length=200)],
                     value: Annotated[str, Field(max_length=MAX_TEXT)], frame: Annotated[int, Field(ge=0)] = 0) -> StepResult:  # fmt: skip
        try:
            ast.parse(value.strip(), mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            raise ToolError(f"the value must be one Python value as repr writes it (e.g. 42, 'text', [1, 2]), not {value[:200]!r}") from None
        with registry.use(session_id) as opened:
            _check_frame(opened.session.state, frame)
            state = opened.session.set_variable(name, value.strip(), frame)
            opened.trail[-1] = (opened.trail[-1][0], state)
            opened.edited.add(len(opened.trail) - 1)
            return StepResult(stop=show(opened, state))

    @server.tool(description="End a debugging session and free what it holds.")
    @_tool_errors
    def end_session(session_id: Annotated[str, Field(max_length=64)]) -> SessionEnded:
        registry.end(session_id)
        return SessionEnded(session_id=session_id)

    @server.tool(description=(
        "Predict what one call returns WITHOUT running it (CruxEval-O posing): `source` defines the code, `call` is one call "
        "such as f([3, 1, 2]) or Stack().push(1). Returns the returned value's repr or the raised exception, what the call "
        "prints, and a calibrated confidence."))  # fmt: skip
    @_tool_errors
    def predict_call(source: Annotated[str, Field(max_length=MAX_SOURCE)], call: Annotated[str, Field(max_length=MAX_TEXT)]) -> CallResult:
        posed = pose_call(source, call)
        with oneshot.lock:
            began = time.perf_counter()
            answer = run_call(oneshot.session(posed.program), posed)
            seconds = time.perf_counter() - began
        return CallResult(returned=None if answer.returned is None else cut(answer.returned, limit * EXPAND_FACTOR)[0], raised=answer.raised,
                          output=cut(answer.output, limit * EXPAND_FACTOR)[0], confidence=round(answer.confidence, 4), note=answer.note,
                          seconds=round(seconds, 3))  # fmt: skip

    @server.tool(description=(
        "Predict which arguments make a function return a given output, WITHOUT running it (CruxEval-I posing): `function` "
        "is a top-level function of `source`, `output` the returned value as repr writes it. Returns up to `candidates` "
        "argument lists, most likely first, each with its share of the probability among the answers drawn."))  # fmt: skip
    @_tool_errors
    def predict_inputs(source: Annotated[str, Field(max_length=MAX_SOURCE)], function: Annotated[str, Field(max_length=200)],
                       output: Annotated[str, Field(max_length=MAX_TEXT)], candidates: Annotated[int, Field(ge=1, le=8)] = 3) -> InputsResult:  # fmt: skip
        posed = pose_inputs(source, function, output)
        with oneshot.lock:
            began = time.perf_counter()
            session = oneshot.session(posed.program, call_candidates=max(candidates, 1))
            ranked, note = run_inputs(session, posed, output, candidates)
            seconds = time.perf_counter() - began
        return InputsResult(candidates=[ArgumentsCandidate(arguments=a, confidence=c) for a, c in ranked], note=note, seconds=round(seconds, 3))

    @server.tool(description=(
        "Check a session against reality: RUNS the program (in tracegen's sandbox, under the recorder whose stops are "
        "debugpy's) with the same breakpoints and the same actions, and returns each stop where the prediction differs."))  # fmt: skip
    @_tool_errors
    def verify(session_id: Annotated[str, Field(max_length=64)]) -> VerifyResult:
        with registry.use(session_id) as opened:
            if not opened.replayable:
                raise ToolError("this session stepped back before its first stop: the real program cannot start there; start a new session to verify")
            began = time.perf_counter()
            compared, divergences, note = verify_trail(
                opened.program.source, str(opened.program.path), opened.trail, opened.breakpoints,
                opened.file_breakpoints, opened.edited, lambda state: stop_of(state, str(opened.program.path), 1.0, limit))  # fmt: skip
            return VerifyResult(stops=compared, matched=compared - len(divergences), divergences=divergences, note=note,
                                seconds=round(time.perf_counter() - began, 3))  # fmt: skip

    return server


def _parse_breakpoints(specs: list[str], program: Path) -> tuple[list[int], dict[str, list[int]]]:
    """Program lines and {other file: lines} from 'N' and 'file.py:N' specs; ToolError for anything else."""
    lines: list[int] = []
    files: dict[str, list[int]] = {}
    for spec in specs:
        file, _, number = spec.strip().rpartition(":")
        if not number.isdigit() or int(number) < 1:
            raise ToolError(f"breakpoint {spec!r}: give a line number ('12') or a file and line ('util.py:7')")
        if not file or Path(file).name == program.name and (program.parent / file).resolve() == program:
            lines.append(int(number))
        else:
            files.setdefault(file, []).append(int(number))
    return lines, files


def _check_frame(state: State, frame: int) -> None:
    if state.finished:
        raise ToolError("the program has exited: there are no frames (step back, or start a new session)")
    if frame >= len(state.frames):
        raise ToolError(f"no frame {frame}: the stack has {len(state.frames)} frame(s), 0 is the innermost")


def _stop_confidence(session: Any) -> float:
    measure = getattr(session, "stop_confidence", None)
    return float(measure()) if measure is not None else 1.0


def _variable_confidence(session: Any, frame: int) -> dict[str, float]:
    measure = getattr(session, "variable_confidence", None)
    return measure(frame) if measure is not None else {}


def _path_confidence(session: Any, state: State, path: str, frame: int) -> float:
    """The confidence of the variable a path starts from (in the frame, else in its module's globals)."""
    root, _ = parse_path(path)
    if root in state.frames[frame].locals:
        return round(_variable_confidence(session, frame).get(root, 1.0), 4)
    module = module_frame_index(state, frame)
    return round(_variable_confidence(session, module).get(root, 1.0), 4) if module is not None else 1.0


def _variable(name: str, value: str, path: str, confidence: float, limit: int) -> Variable:
    shown, was_cut = cut(value, limit)
    return Variable(name=name, value=shown, path=path, confidence=round(confidence, 4), truncated=was_cut,
                    expandable=parse_repr(value).expandable)  # fmt: skip
