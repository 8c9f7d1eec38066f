"""What the end-to-end test does in VS Code, and what real debugpy shows for the same actions.

A `Scenario` is a program, its breakpoints and a list of `UiStep`s (start, stepIn, next, stepOut,
stepBack, continue), each optionally hovering words of the line where it stops and typing
expressions in the Debug Console. `expected_states` records real debugpy
(`tracegen.debugpy_recorder`) for the forward actions the UI steps amount to (a step back undoes
the action before it) and returns the state debugpy shows after each UI step.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from protocol.debugger import Action, State

UiAction = Literal["start", "stepIn", "next", "stepOut", "stepBack", "continue"]


class Hover(BaseModel):
    """Hover `word` on program line `line` (1-based)."""

    line: int
    word: str


class UiStep(BaseModel):
    """One action in VS Code, then what to look at where it stops."""

    action: UiAction
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


def effective_scripts(steps: list[UiStep]) -> list[list[str]]:
    """The forward DAP action list each UI step amounts to (stepBack drops the last action)."""
    if not steps or steps[0].action != "start":
        raise ValueError("a scenario starts with the 'start' step")
    history: list[str] = []
    scripts = [list(history)]
    for step in steps[1:]:
        if step.action == "start":
            raise ValueError("'start' may only be the first step")
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


def watched_stops(scenario: Scenario, repo_root: Path) -> dict[int, tuple[State, State]]:
    """For each UI step that continues with data breakpoints set: (the stop before, the recorder's stop).

    The recorder (tracegen's fast recorder, debugpy's stops) replays the UI steps; a continue after a step
    with `watch` takes stepIn steps until a watched local of the frame it was set in changes, as the
    adapter's oracle must. Only the forward actions start, continue, next, stepIn, stepOut are replayed.
    """
    from adapter.watch import WatchTarget
    from tracegen.fast import ReplaySession, record_program

    replay = ReplaySession(record_program(path=str(repo_root / scenario.program)), scenario.breakpoints, stop_on_entry=True)
    state = replay.start()
    targets: list[WatchTarget] = []
    found: dict[int, tuple[State, State]] = {}
    for index, step in enumerate(scenario.steps):
        if index > 0 and step.action == "continue" and targets:
            before, last = state, [t.read(state) for t in targets]
            while not state.finished:
                state = replay.step(Action.parse("stepIn"))
                now = [t.read(state) for t in targets]
                if any(a is not None and b is not None and a != b for a, b in zip(last, now)):
                    break
                last = now
            found[index] = (before, state)
        elif index > 0:
            state = replay.step(Action.parse(step.action))
        targets += [WatchTarget.at(state, 0, name) for name in step.watch]
    return found


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


def beyond_scenario() -> Scenario:
    """examples/loops.py, oracle: Break on Value Change on a local from the Variables view, Continue to where
    the real program changes it (through a call), and the History scope there (opt-in: ``--beyond``)."""
    steps = [UiStep(action="start"), UiStep(action="continue", watch=["results"]),
             UiStep(action="continue", history=True)]
    return Scenario(name="beyond", program="examples/loops.py", breakpoints=[14], steps=steps)
