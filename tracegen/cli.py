"""``neural-debugger tracegen``: record debugger sessions (``record``) and make training data (``synth``).

``record`` prints one JSON object per stop (the contract in DESIGN.md, see `tracegen.record_json`).
If the action script runs out before the program ends, the session goes on with ``continue`` until
the program exits (those lines say ``"action": "continue"``), so the output always ends with the
``end`` line, for both recorders. Actions given after the program exited are ignored.
"""
from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer

from protocol.debugger import Action, ActionKind, State

app = typer.Typer(help="Record real debugger sessions (record) and make training data (synth).", no_args_is_help=True)


@app.callback()
def main() -> None:
    """Record real debugger sessions (record) and make training data (synth)."""


def parse_actions(text: str) -> list[Action]:
    """``stepIn,next,stepOut,continue,breakpoint:7`` (also the paper's names) -> actions."""
    return [Action.parse(part) for part in text.split(",") if part.strip()]


def parse_lines(text: str) -> list[int]:
    """``7,12`` -> [7, 12] (positive integers)."""
    lines = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise ValueError(f"not a line number: {part!r}")
        lines.append(int(part))
    return lines


def parse_breakpoints(text: str) -> list[int | tuple[str, int]]:
    """``7,12,pricing.py:3`` -> [7, 12, ("pricing.py", 3)]: program lines, or FILE:LINE in another
    user file (FILE relative to the program's folder, or absolute)."""
    out: list[int | tuple[str, int]] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        file, sep, line = part.rpartition(":")
        if not sep:
            out.extend(parse_lines(part))
            continue
        if not file or not line.isdigit() or int(line) < 1:
            raise ValueError(f"not a breakpoint: {part!r} (write LINE or FILE:LINE, e.g. 7 or pricing.py:3)")
        out.append((file, int(line)))
    return out


def _record_fast(path: Path, actions: list[Action], breakpoints: list, stop_on_entry: bool) -> list[State]:
    from tracegen.fast import record_program, replay_to_end

    return replay_to_end(record_program(path=path), actions, breakpoints, stop_on_entry)


def _record_debugpy(path: Path, actions: list[Action], breakpoints: list, stop_on_entry: bool) -> list[State]:
    try:
        from tracegen.debugpy_recorder import record_debugpy
    except ImportError as exc:
        raise RuntimeError(f"the debugpy recorder is not available: {exc}") from exc
    return record_debugpy(path, actions, breakpoints, stop_on_entry=stop_on_entry, to_end=True)


@app.command()
def record(
    program: Path = typer.Argument(..., help="The Python program to run."),
    actions: str = typer.Option("", "--actions", help="Comma-separated: stepIn, next, stepOut, continue, breakpoint:LINE."),
    bp: str = typer.Option("", "--bp", help="Comma-separated session breakpoints: LINE of PROGRAM, or FILE:LINE in another user file (relative to PROGRAM's folder)."),
    recorder: str = typer.Option("fast", "--recorder", help="fast | debugpy"),
    stop_on_entry: bool = typer.Option(True, "--stop-on-entry/--no-stop-on-entry", help="Stop on the first line."),
) -> None:
    """Print one JSON object per stop of a debugger session on PROGRAM."""
    from tracegen.record_json import session_lines

    try:
        action_list = parse_actions(actions)
        bps = parse_breakpoints(bp)
    except ValueError as exc:
        _fail(f"bad argument: {exc}")
    if not program.is_file():
        _fail(f"no such program file: {program}")
    for item in bps:
        if isinstance(item, tuple):
            target = Path(item[0]) if Path(item[0]).is_absolute() else program.parent / item[0]
            if not target.is_file():
                _fail(f"no such file for breakpoint {item[0]}:{item[1]}: {target}")
    if recorder not in ("fast", "debugpy"):
        _fail(f"--recorder must be fast or debugpy, not {recorder!r}")
    if any(a.kind.inverse for a in action_list):
        _fail("inverse actions cannot be recorded (the recorders only run forwards)")
    run = _record_fast if recorder == "fast" else _record_debugpy
    try:
        states = run(program, action_list, bps, stop_on_entry)
    except Exception as exc:  # noqa: BLE001 - a clear message instead of a traceback
        _fail(str(exc))
    used = action_list[: max(0, len(states) - 1)]
    used += [Action(kind=ActionKind.CONTINUE)] * (len(states) - 1 - len(used))
    for line in session_lines(states, used, str(program.resolve().parent)):
        typer.echo(line)


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise SystemExit(2)


# ------------------------------------------------------------------------------------------
# `synth` (tracegen/synth/, tracegen/dataset.py) is registered below this line by its owner.
# ------------------------------------------------------------------------------------------


@app.command()
def synth(
    count: int = typer.Option(..., "--count", min=1, help="Number of trajectories to write."),
    out: Path = typer.Option(..., "--out", help="Output folder (sharded JSONL + manifest.json); rerun to resume."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker processes (the data does not depend on it)."),
    seed: int = typer.Option(0, "--seed", help="Seed: the same seed gives the same dataset."),
    sources: str = typer.Option("synthetic", "--sources", help="Comma-separated kind[:arg][@weight]: synthetic, files:PATH, doctest[:mod+mod]."),
    max_steps: int = typer.Option(64, "--max-steps", min=1, help="Most actions per trajectory."),
    per_program: int = typer.Option(8, "--per-program", min=1, help="Trajectories sampled from each recorded program."),
    shard_size: int = typer.Option(1000, "--shard-size", min=1, help="Trajectories per shard file."),
    cruxeval: Path | None = typer.Option(None, "--cruxeval", help="cruxeval.jsonl to keep out of the data (default: $CRUXEVAL_PATH, else the copy shipped in tracegen/cruxeval/)."),
    posing: str | None = typer.Option(None, "--posing", help="hidden-call: only inverse trajectories posed like CruxEval-I "
                                      "(a module-level call just returned, its arguments hidden), up to --per-program per program."),
    double_quotes: float = typer.Option(0.0, "--double-quotes", min=0.0, max=1.0,
                                        help="Share of the generated programs whose string literals are written in double quotes (real code keeps its own)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Write a sharded dataset of forward and inverse trajectories of recorded programs."""
    import json

    from tracegen.dataset import SynthConfig, make_dataset

    try:
        config = SynthConfig(count=count, seed=seed, sources=sources, shard_size=shard_size, per_program=per_program,
                             max_steps=max_steps, cruxeval=str(cruxeval) if cruxeval else None, posing=posing, double_quotes=double_quotes)
        manifest = make_dataset(config, out, workers=workers, show_progress=progress)
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    run = manifest["last_run"]
    summary = {k: manifest[k] for k in ("trajectories", "forward", "inverse", "programs", "kinds", "rejected", "complete")}
    summary.update(run)  # type: ignore[arg-type]
    typer.echo(json.dumps(summary))


@app.command("eval-trajectories")
def eval_trajectories(
    programs: Path = typer.Option(..., "--programs", help="A folder of an evaluation set's .py programs (e.g. tracegen/everyday)."),
    out: Path = typer.Option(..., "--out", help="Output folder: shard-00000.jsonl and a manifest marked evaluation-only."),
    per_program: int = typer.Option(4, "--per-program", min=1, help="Trajectories sampled from each program."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampling (per program)."),
    max_steps: int = typer.Option(64, "--max-steps", min=1, help="Most actions per trajectory."),
) -> None:
    """Trajectories of an evaluation set's programs, for evaluations that read trajectories (never training data)."""
    from tracegen.eval_trajectories import write_eval_trajectories

    try:
        result = write_eval_trajectories(programs, out, per_program=per_program, seed=seed, max_steps=max_steps)
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {result.trajectories} trajectories of {result.programs} programs to {out} "
               f"(skipped {len(result.skipped)}: {', '.join(f'{k}: {v}' for k, v in sorted(result.skipped.items())) or 'none'})")


@app.command()
def packages(
    out: Path = typer.Option(Path("data/pkgs"), "--out", help="Folder to install into (site/ and manifest.json); never committed."),
) -> None:
    """Install the pinned pure-Python PyPI packages whose doctests become programs (--sources packages:DIR)."""
    from tracegen.packages import install_packages, package_programs

    try:
        entries = install_packages(out)
    except (RuntimeError, OSError) as exc:
        _fail(str(exc))
    for entry in entries:
        made = package_programs(out / "site", entry)
        typer.echo(f"{entry.name}=={entry.version} ({entry.licence}, {entry.split}): {len(entry.files)} files, {len(made.programs)} doctest programs")
    typer.echo(f"manifest: {out / 'manifest.json'}")


@app.command()
def realworld(
    out: Path = typer.Option(..., "--out", help="Folder for long/ (single files) and projects/ (main.py + module)."),
    modules: str = typer.Option("", "--modules", help="Comma-separated standard-library modules (default: all with a driver)."),
    split: str = typer.Option("test", "--split", help="test: the realworld evaluation's modules; dev: the dev slice of the same kind "
                              "(other modules, for choices; tracegen/module_drivers.py)."),
) -> None:
    """Write programs made of real standard-library modules with a short driver (never training data)."""
    from tracegen.module_drivers import DEV_DRIVERS
    from tracegen.realworld import DRIVERS, write_corpus

    if split not in ("test", "dev"):
        _fail(f"unknown split {split!r}: choose test or dev")
    try:
        programs = write_corpus(out, [m.strip() for m in modules.split(",") if m.strip()] or None, DRIVERS if split == "test" else DEV_DRIVERS)
    except (ValueError, OSError, SyntaxError) as exc:
        _fail(str(exc))
    lines = sorted(p.lines for p in programs)
    typer.echo(f"wrote {len(programs)} long files and {len(programs)} projects under {out} ({lines[0]}-{lines[-1]} lines each)")
