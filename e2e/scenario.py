"""What the end-to-end test does in VS Code, and what real debugpy shows for the same actions.

A `Scenario` is a program, its breakpoints and a list of `UiStep`s (start, stepIn, next, stepOut,
stepBack, continue, edit), each optionally hovering words of the line where it stops and typing
expressions in the Debug Console. `expected_states` records real debugpy
(`tracegen.debugpy_recorder`) for the forward actions the UI steps amount to (a step back undoes
the action before it) and returns the state debugpy shows after each UI step. The beyond scenarios
(Break on Value Change, History, an edit saved while stopped) are checked against tracegen's
recorder instead (`recorder_run`), on `BeyondTarget`'s program.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from protocol.debugger import Action, State, StopReason

UiAction = Literal["start", "stepIn", "next", "stepOut", "stepBack", "continue", "edit"]
EDIT_TEXT = "edited = 10"  # the line the edit scenarios insert (a name the programs do not use)


class Hover(BaseModel):
    """Hover `word` on program line `line` (1-based)."""

    line: int
    word: str


class Edit(BaseModel):
    """Insert `text` as a new line after program line `after` (1-based; None: the line the session stands on,
    which for a model is its prediction), as a user types it: End, Enter (VS Code indents the new line: one
    level deeper after a line ending in ``:``), the text, then save."""

    after: int | None = None
    text: str = EDIT_TEXT

    def apply(self, source: str) -> str:
        """`source` with the line inserted, indented as VS Code's Enter indents it."""
        if self.after is None:
            raise ValueError("an edit below the current line is placed when the session stands there")
        lines = source.splitlines()
        above = lines[self.after - 1]
        indent = above[: len(above) - len(above.lstrip())] + ("    " if above.rstrip().endswith(":") else "")
        return "\n".join([*lines[: self.after], indent + self.text, *lines[self.after:]]) + "\n"

    def moved(self, line: int, after: int | None = None) -> int:
        """Where program line `line` is after the edit (below line `after` when the edit names none)."""
        below = self.after if self.after is not None else after
        return line + 1 if below is not None and line > below else line


class UiStep(BaseModel):
    """One action in VS Code, then what to look at where it stops. The action ``edit`` edits the program in
    the editor and saves it while stopped: VS Code sends the moved breakpoints, and the adapter, seeing the
    file changed, redraws the stop on its line in the edited source."""

    action: UiAction
    edit: Edit | None = None  # with action "edit"
    hover: list[Hover] = Field(default_factory=list)
    console: list[str] = Field(default_factory=list)  # expressions typed in the Debug Console
    # Locals of the top frame to right-click in the Variables view -> "Break on Value Change" at this stop
    watch: list[str] = Field(default_factory=list)
    history: bool = False  # expand the Variables view's History scope at this stop


class Scenario(BaseModel):
    """A program (a path relative to the repository), its breakpoints and the UI steps."""

    name: str
    program: str
    breakpoints: list[int] = Field(default_factory=list)
    steps: list[UiStep]
    compare_with: Literal["debugpy"] | None = None
    backend: Literal["oracle", "transformers"] = "oracle"
    # How the workspace names the adapter: "tap" (neuralDebugger.command = the DAP tap around the
    # project's adapter), "none" (no setting, no .venv, none on PATH), "exits" (a command that exits at once).
    adapter: Literal["tap", "none", "exits"] = "tap"
    notification: list[str] = Field(default_factory=list)  # texts VS Code's error notification must show
    console_open: bool = False  # open the Debug Console panel before starting (screenshots show it)
    # Hover up to this many locals the Variables view shows marked as low confidence (any stop, the
    # first such name visible in the editor): which ones exist depends on what the model predicts.
    hover_low: int = 0
    # Expand the first low-confidence local's row (the model's alternatives) and type ``?name`` in the Debug Console.
    expand_low: bool = False
    launch: dict[str, Any] = Field(default_factory=dict)  # more attributes of the launch configuration
    stop_timeout_s: int = 60  # how long the driver waits for the adapter's answer to one UI step


def effective_scripts(steps: list[UiStep]) -> list[list[str]]:
    """The forward DAP action list each UI step amounts to (stepBack drops the last action)."""
    if not steps or steps[0].action != "start":
        raise ValueError("a scenario starts with the 'start' step")
    history: list[str] = []
    scripts = [list(history)]
    for step in steps[1:]:
        if step.action == "start":
            raise ValueError("'start' may only be the first step")
        if step.action == "edit":
            raise ValueError("debugpy runs the program it started with: a scenario with an edit is checked against the recorder")
        if step.action == "stepBack":
            if not history:
                raise ValueError("stepBack at the first stop")
            history.pop()
        else:
            history.append(step.action)
        scripts.append(list(history))
    return scripts


def maximal_scripts(scripts: list[list[str]]) -> list[list[str]]:
    """The scripts that are not a prefix of another one (each recorded once)."""
    kept: list[list[str]] = []
    for script in sorted(scripts, key=len, reverse=True):
        if not any(other[: len(script)] == script for other in kept):
            kept.append(script)
    return kept


def expected_states(scenario: Scenario, repo_root: Path) -> list[State]:
    """The state real debugpy shows after each UI step of `scenario` (the oracle's ground truth)."""
    from tracegen.debugpy_recorder import record_debugpy

    program = repo_root / scenario.program
    scripts = effective_scripts(scenario.steps)
    recorded: list[tuple[list[str], list[State]]] = []
    for script in maximal_scripts(scripts):
        states = record_debugpy(str(program), [Action.parse(a) for a in script], scenario.breakpoints)
        recorded.append((script, states))
    expected = []
    for script in scripts:
        full, states = next((s, st) for s, st in recorded if s[: len(script)] == script)
        # states[k] follows the first k actions; a script that ran past the end stops at `exited`.
        expected.append(states[min(len(script), len(states) - 1)])
    return expected


class RecorderRun(BaseModel):
    """What tracegen's recorder shows for a scenario's UI steps: the state after each, and for each Continue
    with data breakpoints set, (the stop before, the stop where a watched value first changed)."""

    model_config = {"arbitrary_types_allowed": True}
    states: list[State]
    watched: dict[int, tuple[State, State]] = Field(default_factory=dict)


def recorder_run(scenario: Scenario, repo_root: Path) -> RecorderRun:
    """The recorder (tracegen's fast recorder, debugpy's stops) replays the UI steps of `scenario`.

    A continue after a step with `watch` takes stepIn steps until a watched value of the frame it was set in
    changes, as the adapter's oracle must. An ``edit`` records the edited program (in a temporary folder),
    with the breakpoints moved, and replays the actions taken so far on it: the stop after the edit is that
    run's (the edit lies below the stop, so the edited program reaches it with the same values). Only the
    forward actions start, continue, next, stepIn, stepOut and edit are replayed.
    """
    from adapter.watch import WatchTarget
    from tracegen.fast import ReplaySession, record_program

    path = repo_root / scenario.program
    source, breakpoints = path.read_text(encoding="utf-8"), list(scenario.breakpoints)
    replay = ReplaySession(record_program(path=str(path)), breakpoints, stop_on_entry=True)
    state = replay.start()
    done: list[Action] = []
    targets: list[WatchTarget] = []
    run = RecorderRun(states=[state])
    for index, step in enumerate(scenario.steps[1:], start=1):
        if step.action == "continue" and targets:
            before, last = state, [t.read(state) for t in targets]
            while not state.finished:
                state = replay.step(Action.parse("stepIn"))
                done.append(Action.parse("stepIn"))
                now = [t.read(state) for t in targets]
                if any(a is not None and b is not None and a != b for a, b in zip(last, now)):
                    break
                last = now
            run.watched[index] = (before, state)
        elif step.action == "edit":
            if step.edit is None:
                raise ValueError(f"step {index} edits without saying how")
            source, breakpoints = step.edit.apply(source), [step.edit.moved(line) for line in breakpoints]
            with tempfile.TemporaryDirectory() as folder:
                edited = Path(folder) / path.name
                edited.write_text(source, encoding="utf-8")
                replay = ReplaySession(record_program(path=str(edited)), breakpoints, stop_on_entry=True)
            state = replay.start()
            for action in done:
                state = replay.step(action)
            state = state.model_copy(update={"reason": StopReason.STEP})  # the adapter redraws the stop
        else:
            state = replay.step(Action.parse(step.action))
            done.append(Action.parse(step.action))
        run.states.append(state)
        targets += [WatchTarget.at(state, 0, name) for name in step.watch]
    return run


def watched_stops(scenario: Scenario, repo_root: Path) -> dict[int, tuple[State, State]]:
    """For each UI step that continues with data breakpoints set: (the stop before, the recorder's stop)."""
    return recorder_run(scenario, repo_root).watched


def demo_scenario() -> Scenario:
    """examples/demo.py: every kind of step, a breakpoint, a hover and the Debug Console."""
    steps = [UiStep(action="start")]
    steps += [UiStep(action="next") for _ in range(4)]  # module level: class, def, def, the call
    steps += [
        UiStep(action="stepIn"),  # into top_words
        UiStep(action="stepIn"),  # into Counter.__init__
        UiStep(action="stepOut"),  # back on the calling line, with the return value
        UiStep(action="next"),
        UiStep(action="stepBack"),
        UiStep(action="continue", hover=[Hover(line=23, word="counter")], console=["raw", "text"]),
    ]
    return Scenario(name="demo", program="examples/demo.py", breakpoints=[23], steps=steps)


def compare_scenario() -> Scenario:
    """examples/demo.py with ``compareWith: debugpy``, run to the end so the summary is reported."""
    steps = [UiStep(action="start"), UiStep(action="next"), UiStep(action="next"), UiStep(action="stepIn"),
             UiStep(action="continue")]
    return Scenario(name="compare", program="examples/demo.py", steps=steps, compare_with="debugpy")


def model_scenario() -> Scenario:
    """examples/demo.py with the shipped model (transformers) and ``compareWith: debugpy``.

    Each kind of step; VS Code is checked against what the adapter sent (predictions are not
    expected to equal debugpy), and the divergences and summary the adapter reported must be in the
    Debug Console, which stays open. No fixed hovers or typed expressions: which names exist depends on
    what the model predicts; instead the first local VS Code shows marked as low confidence (if
    any) is hovered, and its hover must show the model's alternatives the adapter sent; the first
    low-confidence local is expanded in the Variables view (the alternatives) and asked with
    ``?name`` in the Debug Console.
    """
    steps = [UiStep(action=a) for a in ("start", "next", "next", "stepIn", "next", "stepOut", "stepBack", "continue")]
    return Scenario(name="model", program="examples/demo.py", steps=steps, backend="transformers",
                    compare_with="debugpy", console_open=True, hover_low=1, expand_low=True)


def no_adapter_scenario() -> Scenario:
    """F5 in a workspace with no neuralDebugger.command, no .venv and no neural-debugger on PATH.

    The session must not start, and VS Code must show the extension's error notification listing
    what was tried and how to fix it.
    """
    return Scenario(name="no-adapter", program="examples/demo.py", steps=[UiStep(action="start")], adapter="none",
                    notification=["no adapter found to run `neural-debugger dap`", "setting neuralDebugger.command: not set",
                                  "Python extension (ms-python.python): not installed",
                                  "/workspace-no-adapter/.venv/bin/neural-debugger: does not exist",
                                  "neural-debugger on PATH: not found", "set neuralDebugger.command"])


def adapter_exits_scenario() -> Scenario:
    """F5 with neuralDebugger.command naming a program that exits at once: VS Code says so."""
    return Scenario(name="adapter-exits", program="examples/demo.py", steps=[UiStep(action="start")], adapter="exits",
                    notification=["exited before answering VS Code (exit code 3)", "Run that command in a terminal"])


class BeyondTarget(BaseModel):
    """Where the beyond scenarios look in a program: the module-level `line` where the program is edited (a
    line is inserted after it) and the local `watch` watched two steps later; `breakpoint`, a line below,
    must move with the edit. Written ``PATH:LINE:NAME:BREAKPOINT`` (PATH relative to the repository or absolute)."""

    program: str = "examples/loops.py"
    line: int = 13
    watch: str = "results"
    breakpoint: int = 15

    @classmethod
    def parse(cls, text: str) -> "BeyondTarget":
        parts = text.rsplit(":", 3)
        if len(parts) != 4 or not parts[1].isdigit() or not parts[3].isdigit() or not parts[2].isidentifier():
            raise ValueError(f"expected PATH:LINE:NAME:BREAKPOINT (e.g. examples/loops.py:13:results:15), not {text!r}")
        return cls(program=parts[0], line=int(parts[1]), watch=parts[2], breakpoint=int(parts[3]))

    def nexts(self, repo_root: Path) -> int:
        """How many Step Overs from the entry the recorder takes to first stop on `line` in the module."""
        from tracegen.fast import ReplaySession, record_program

        replay = ReplaySession(record_program(path=str(repo_root / self.program)), (), stop_on_entry=True)
        state, count = replay.start(), 0
        while not state.finished and state.location != [("<module>", self.line)]:
            state, count = replay.step(Action.parse("next")), count + 1
        if state.finished:
            raise ValueError(f"{self.program} never stops on module line {self.line} by Step Over")
        return count


def beyond_scenario(target: BeyondTarget | None = None, repo_root: Path | None = None, model: bool = False) -> Scenario:
    """What only a predicting debugger offers, in VS Code (issue #37), on `target` (default: examples/loops.py):
    Step Over to the target line; edit the program there (a line inserted below it) and save; Step Over twice
    (onto the inserted line, then past it); right-click the watched local -> Break on Value Change; Continue
    to where it changes and expand the History scope. The oracle is checked against the recorder (of the
    edited program after the edit); the model (`model`: the shipped one, with ``compareWith: debugpy``, whose
    comparison the edit ends) against what the adapter sent."""
    target = target or BeyondTarget()
    nexts = target.nexts(repo_root or Path(__file__).resolve().parent.parent)
    # the oracle stands on target.line after the Step Overs; the model where it predicts: the edit goes below that
    steps = [UiStep(action="start"), *[UiStep(action="next") for _ in range(nexts)],
             UiStep(action="edit", edit=Edit(after=None if model else target.line)), UiStep(action="next"),
             UiStep(action="next", watch=[target.watch], history=True), UiStep(action="continue", history=True)]
    if model:  # a step budget that a loaded machine does not cut (the default 2.5 s would, and "did not move")
        return Scenario(name="beyond-model", program=target.program, breakpoints=[target.breakpoint], steps=steps,
                        backend="transformers", compare_with="debugpy", console_open=True,
                        launch={"dataBreakpointSteps": 6, "stepSeconds": 30}, stop_timeout_s=240)
    return Scenario(name="beyond", program=target.program, breakpoints=[target.breakpoint], steps=steps, console_open=True)
