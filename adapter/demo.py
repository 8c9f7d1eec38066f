"""`neural-debugger demo`: step through an example program, predicted and real side by side.

The predicted side is a neural session with the shipped model (or ``--model``); when no trained
model exists yet it falls back to the oracle backend, and says so. The real side is the same
program under debugpy (`tracegen.debugpy_recorder.DebugpySession`), driven with the same actions.
Each stop is printed as a row (action, predicted stop and locals, real stop and locals), with the
fields that differ marked, then a match summary (`protocol.compare.ComparisonSummary`).
"""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from adapter.launch_config import REPO_ROOT, LaunchConfig, LaunchError, Program, default_checkpoint, load_program, open_session
from model.paths import missing_shipped_model
from protocol.compare import ComparisonSummary, FieldDiff, compare_states
from protocol.debugger import Action, ActionKind, State

app = typer.Typer(add_completion=False, help="Step through an example program with the shipped model, predicted vs real.")

# examples/ of a checkout, else the copy an installed package carries as adapter/examples/ (setup.py puts it there)
EXAMPLE_FOLDERS = (REPO_ROOT / "examples", Path(__file__).resolve().parent / "examples")


def default_program() -> Path:
    """examples/demo.py: the checkout's, else the installed package's (the first that exists)."""
    return next((f / "demo.py" for f in EXAMPLE_FOLDERS if (f / "demo.py").is_file()), EXAMPLE_FOLDERS[0] / "demo.py")


DEFAULT_PROGRAM = default_program()
DEFAULT_ACTIONS = "next,next,next,next,stepIn,stepIn,next,stepIn,stepIn,stepOut,next,next,stepOut,next,continue"


def _stop_text(state: State, previous: State | None, diff: FieldDiff | None, other: State | None) -> Text:
    """One side of a row: location, changed locals, return value, stdout; mismatching parts in red."""
    text = Text()
    if state.finished:
        text.append(f"exited (code {state.exit_code})", style="red" if diff and diff.reason else "bold")
        return text
    location = " < ".join(f"{name}:{line}" for name, line in state.location)
    text.append(f"{state.reason.value} ", style="red" if diff and diff.reason else "dim")
    text.append(location, style="red" if diff and diff.location else "bold")
    top = state.normalized().frames[0].locals if state.frames else {}
    before = previous.normalized().frames[0].locals if previous is not None and previous.frames and previous.location[1:] == state.location[1:] and previous.frames[0].name == state.frames[0].name else {}
    wrong = set(diff.wrong_variables) if diff else set()
    shown = [(k, v) for k, v in top.items() if before.get(k) != v or k in wrong]
    for name, value in shown[:8]:
        text.append(f"\n  {name} = {value[:60]}", style="red" if name in wrong else "")
    if state.return_value is not None:
        text.append(f"\n  (return) {state.return_value.name} = {state.return_value.value[:40]}", style="red" if diff and diff.return_value else "cyan")
    if state.exception is not None:
        text.append(f"\n  {state.exception.type}: {state.exception.message[:40]}", style="red" if diff and diff.exception else "magenta")
    if state.stdout:
        text.append(f"\n  stdout {state.stdout[:50]!r}", style="red" if diff and diff.stdout else "green")
    return text


def _open_predicted(program: Program, model: Optional[Path], console: Console) -> tuple[Any, str]:
    """The neural session, or the oracle with a notice when no trained model exists."""
    checkpoint = model or default_checkpoint()
    if (checkpoint / "config.json").is_file():
        config = LaunchConfig(program=str(program.path), backend="transformers", model=str(checkpoint))
        console.print(f"[bold]predicted[/]: the model in {checkpoint} (transformers, CPU)")
        session = open_session(config, program)
        for notice in getattr(session, "notices", ()):  # e.g. a companion model left out
            console.print(f"[yellow]{escape(notice)}[/]")
        return session, "neural"
    if model is not None:
        raise LaunchError(f"model folder not found or not a checkpoint: {model}")
    console.print(f"[yellow]No model: {missing_shipped_model()}. The predicted column comes from the oracle backend "
                  "(the fast recorder), so it shows what the model is trained to reproduce.[/]")
    return open_session(LaunchConfig(program=str(program.path), backend="oracle"), program), "oracle"


@app.command()
def demo(
    program: Path = typer.Option(DEFAULT_PROGRAM, "--program", help="The Python file to step through."),
    model: Optional[Path] = typer.Option(None, "--model", help="Checkpoint folder (default: the shipped model)."),
    actions: str = typer.Option(DEFAULT_ACTIONS, "--actions", help="Comma-separated actions: stepIn, next, stepOut, continue, breakpoint:LINE."),
    breakpoints: str = typer.Option("", "--bp", help="Comma-separated breakpoint lines."),
) -> None:
    """Step through PROGRAM with the neural debugger and with debugpy, side by side."""
    console = Console()
    with _outside_the_package(program) as path:
        _run(console, path, model, actions, breakpoints)


@contextmanager
def _outside_the_package(program: Path) -> Iterator[Path]:
    """The program, or a temporary copy of an example shipped inside the installed package: debugpy
    treats files under site-packages as library code and never stops in them (justMyCode)."""
    if not program.resolve().is_relative_to(EXAMPLE_FOLDERS[1].resolve()):
        yield program
        return
    with tempfile.TemporaryDirectory(prefix="neural-debugger-demo-") as folder:
        copy = Path(folder) / program.name
        shutil.copyfile(program, copy)
        yield copy


def _run(console: Console, program: Path, model: Optional[Path], actions: str, breakpoints: str) -> None:
    try:
        script = [Action.parse(a) for a in actions.split(",") if a.strip()]
        lines = [int(b) for b in breakpoints.split(",") if b.strip()]
        loaded = load_program(LaunchConfig(program=str(program)))
        session, kind = _open_predicted(loaded, model, console)
    except (ValueError, LaunchError) as exc:
        console.print(f"[red]demo: {exc}[/]")
        raise SystemExit(2) from None
    from tracegen.debugpy_recorder import DebugpySession

    summary = ComparisonSummary()
    table = Table(title=f"{loaded.path.name}: {kind} prediction vs debugpy", show_lines=True)
    for column in ("#", "action", f"predicted ({kind})", "real (debugpy)", "match"):
        table.add_column(column)
    try:
        with DebugpySession() as real_session:
            session.set_breakpoints(lines)
            predicted, real = session.start(), real_session.start(loaded.path, lines, stop_on_entry=True)
            rows = [(None, predicted, real)]
            for action in script:
                if predicted.finished or real.finished:
                    break
                rows.append((action, session.step(action), real_session.step(action)))
                predicted, real = rows[-1][1], rows[-1][2]
            previous: tuple[State, State] | None = None
            for index, (action, p, r) in enumerate(rows):
                diff = compare_states(p, r)
                summary.add(diff)
                mark = Text("yes", style="green") if diff.matched else Text(", ".join(diff.mismatched_fields()), style="red")
                table.add_row(str(index), str(action or "start"),
                              _stop_text(p, previous[0] if previous else None, diff, r),
                              _stop_text(r, previous[1] if previous else None, None, p), mark)
                previous = (p, r)
    finally:
        session.close()
    console.print(table)
    style = "green" if summary.matched == summary.stops else "yellow"
    console.print(f"[{style}]{summary.describe()}[/]")
