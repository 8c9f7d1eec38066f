"""Next-state fidelity: how often a session's next stop is exactly the real debugger's (the paper's Figure 8).

Held-out programs are recorded once with tracegen's fast recorder (which reproduces debugpy's
stops); random action scripts are drawn with tracegen's training policy (`sample_forward`,
seeded), and a session under test takes each action from the *true* previous state (teacher
forcing: after each prediction the real state replaces it, so every step measures one next-state
prediction; ``free_running``: the session goes on from its own predictions, as a user sees it, and a
wrong location derails the later stops). Each pair of stops is compared with `protocol.compare.compare_states` and counted in
a `protocol.compare.ComparisonSummary`, per action type and per horizon, so the adapter's
``compareWith`` summary and this evaluation count the same way.

Horizon: how many line events (the stops a chain of step_into would make) the action skips,
measured on the recording between the previous stop and this one (1 for a plain step).

`compare_sessions` runs the same count for any pair of `DebugSession`s (a neural session and a
debugpy or oracle session on the same program and actions).
"""
from __future__ import annotations

import random
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol.compare import ComparisonSummary, FieldDiff, compare_states
from protocol.debugger import Action, State
from train.eval.error_analysis import LineKindTable, line_kind
from train.eval.value_types import ValueTypeTable

HORIZON_BUCKETS: tuple[tuple[int, int], ...] = ((1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, 10**9))


class ProgramsError(ValueError):
    """The programs cannot be read; the message says why."""


@dataclass(frozen=True)
class Program:
    """One held-out program: its source, where it came from, and its user modules (relative path -> source)."""

    name: str
    source: str
    modules: dict[str, str] = field(default_factory=dict, hash=False, compare=False)


def load_programs(where: str | Path, limit: int | None = None) -> list[Program]:
    """Programs from a folder of .py files (sorted), one .py file, or a synth shard (.jsonl: one per distinct program)."""
    where = Path(where)
    if where.is_dir():
        projects = sorted(p.parent for p in where.rglob("main.py") if p.parent != where)
        files = sorted(p for p in where.rglob("*.py") if not any(folder in p.parents for folder in projects))
        programs = [_with_modules(str(p.relative_to(where)), p) for p in files]
        programs += [_with_modules(str(folder.relative_to(where)) + "/", folder / "main.py") for folder in projects]
        programs.sort(key=lambda p: p.name)
    elif where.suffix == ".py":
        programs = [_with_modules(where.name, where)]
    elif where.suffix in (".jsonl", ".json"):
        programs = _shard_programs(where)
    else:
        raise ProgramsError(f"no programs at {where}: give a folder of .py files, a .py file or a synth shard (.jsonl)")
    if not programs:
        raise ProgramsError(f"no programs found at {where}")
    return programs[:limit] if limit else programs


def _with_modules(name: str, path: Path) -> Program:
    """A program file and the user modules its imports reach under its folder (a subfolder holding a
    ``main.py`` is one multi-file program: main.py and its modules)."""
    from model.static.user_modules import collect_user_modules

    source = _read(path)
    return Program(name, source, collect_user_modules(source, path).sources)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProgramsError(f"cannot read {path}: {exc}") from None


def _shard_programs(path: Path) -> list[Program]:
    from pydantic import ValidationError

    from tracegen.shards import read_shard

    seen: dict[str, Program] = {}
    try:
        for traj in read_shard(path):
            if traj.program not in seen:
                seen[traj.program] = Program(traj.meta.get("program", f"{path.name}#{len(seen)}"), traj.program, dict(traj.modules))
    except (OSError, UnicodeDecodeError, ValidationError, ValueError) as exc:
        raise ProgramsError(f"cannot read the shard {path}: {exc}") from None
    return list(seen.values())


# ------------------------------------------------------------------------------- scripts


@dataclass(frozen=True)
class Script:
    """One random action script on a program: session breakpoints, actions, the real states and horizons."""

    program: Program
    breakpoints: tuple[int, ...]
    actions: tuple[Action, ...]
    states: tuple[State, ...]  # initial, then one per action (from the fast recorder)
    horizons: tuple[int, ...]  # per action: line events from the previous stop to this one
    file_breakpoints: tuple[tuple[str, int], ...] = ()  # session breakpoints in the program's modules


def make_scripts(program: Program, rng: random.Random, count: int, max_steps: int) -> list[Script]:
    """`count` seeded random scripts (tracegen's sampling policy) with their real states; [] if the program cannot be recorded."""
    from tracegen.fast import RecordError, ReplaySession, record_program
    from tracegen.sampling import sample_forward

    try:
        trace = record_program(program.source, modules=program.modules or None)
    except (RecordError, OSError, ValueError):
        return []
    if not trace.events:
        return []
    scripts = []
    for _ in range(count):
        traj = sample_forward(trace, rng, max_steps)
        replay = ReplaySession(trace, [*traj.breakpoints, *traj.file_breakpoints])
        replay.start()
        horizons, last = [], replay.position
        for step in traj.steps:
            replay.step(step.action)
            now = len(trace.events) if step.state.finished else replay.position
            horizons.append(max(1, _line_events(trace, last, now)))
            last = now
        scripts.append(Script(program, tuple(traj.breakpoints), tuple(s.action for s in traj.steps),
                              tuple(traj.states), tuple(horizons), tuple(traj.file_breakpoints)))  # fmt: skip
    return scripts


def _line_events(trace: Any, start: int, stop: int) -> int:
    """User-code line events after event `start` up to and including event `stop`."""
    from tracegen.trace import LINE

    frames = trace.frames
    return sum(1 for ev in trace.events[start + 1 : stop + 1] if ev.kind == LINE and not frames[ev.fid].lib)


def horizon_bucket(horizon: int) -> str:
    """The label of the bucket holding `horizon` (``1``, ``3-4``, ``17+``)."""
    for low, high in HORIZON_BUCKETS:
        if low <= horizon <= high:
            return str(low) if low == high else (f"{low}+" if high >= 10**9 else f"{low}-{high}")
    return str(horizon)


# ------------------------------------------------------------------------------ counting


@dataclass
class FidelityReport:
    """Counts of compared stops: overall, per action kind, per horizon bucket; one record per step."""

    overall: ComparisonSummary = field(default_factory=ComparisonSummary)
    by_action: dict[str, ComparisonSummary] = field(default_factory=dict)
    by_horizon: dict[str, ComparisonSummary] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    programs_used: int = 0
    programs_skipped: int = 0
    by_line_kind: LineKindTable = field(default_factory=LineKindTable)  # misses by what the line does (train.eval.error_analysis)
    by_value_type: ValueTypeTable = field(default_factory=ValueTypeTable)  # variables right per value type (train.eval.value_types)

    def add(self, action: Action, horizon: int, diff: FieldDiff, program: str, kind: str | None = None) -> None:
        self.overall.add(diff)
        self.by_action.setdefault(action.kind.value, ComparisonSummary()).add(diff)
        self.by_horizon.setdefault(horizon_bucket(horizon), ComparisonSummary()).add(diff)
        if kind is not None:
            self.by_line_kind.add(kind, matched=diff.matched, location_ok="location" not in diff.mismatched_fields())
        self.steps.append({"program": program, "action": str(action), "horizon": horizon, "matched": diff.matched,
                           "fields": diff.mismatched_fields(), **({"line_kind": kind} if kind else {})})  # fmt: skip

    def summary(self, **settings: Any) -> dict[str, Any]:
        """summary.json: exact-match rates (0..1) overall, per action and per horizon, plus the raw summaries."""
        order = [label for label in (horizon_bucket(low) for low, _ in HORIZON_BUCKETS) if label in self.by_horizon]
        return {
            "overall": rates(self.overall),
            "by_action": {kind: rates(s) for kind, s in sorted(self.by_action.items())},
            "by_horizon": {label: rates(self.by_horizon[label]) for label in order},
            "by_line_kind": self.by_line_kind.to_json(),
            "by_value_type": self.by_value_type.to_json(),
            "programs_used": self.programs_used, "programs_skipped": self.programs_skipped,
            "comparison": self.overall.to_json(), **settings,
        }  # fmt: skip


def rates(summary: ComparisonSummary) -> dict[str, float | int]:
    """Exact match of the location, the locals and the whole state, from a `ComparisonSummary`'s counts."""
    n = summary.stops
    if not n:
        return {"stops": 0, "location": 0.0, "locals": 0.0, "state": 0.0}
    miss = summary.field_mismatches
    return {"stops": n, "location": round(1 - miss["location"] / n, 4), "locals": round(1 - miss["locals"] / n, 4),
            "state": round(summary.matched / n, 4)}  # fmt: skip


def run_script(session: Any, script: Script, report: FidelityReport, *, free_running: bool = False) -> None:
    """Take the script's actions in `session`, teacher-forced when the session allows it (unless
    `free_running`: then the session goes on from its own predictions, as a user sees it), counting each stop."""
    session.start()
    for previous, action, real, horizon in zip(script.states, script.actions, script.states[1:], script.horizons):
        predicted = session.step(action)
        kind = line_kind(script.program.source, previous, real)
        diff = compare_states(predicted, real)
        report.add(action, horizon, diff, script.program.name, kind)
        report.by_value_type.add_stop(previous, real, diff, kind)
        if free_running and predicted.finished and not real.finished:
            break  # the session ended the program: no further stops to compare
        if hasattr(session, "append") and not free_running:  # a model session: continue from the real state (teacher forcing)
            session.step_back()
            session.append(action, real)
        if real.finished:
            break


def evaluate(programs: Sequence[Program], make_session: Callable[..., Any], *, seed: int = 0, scripts: int = 2,
             max_steps: int = 12, progress: bool = True, free_running: bool = False) -> FidelityReport:  # fmt: skip
    """Record each program, draw `scripts` seeded scripts, run a session per script, count every stop."""
    from tqdm import tqdm

    rng = random.Random(seed)
    report = FidelityReport()
    for program in tqdm(programs, desc="fidelity", unit="program", disable=not progress, dynamic_ncols=True):
        drawn = make_scripts(program, rng, scripts, max_steps)
        if not drawn:
            report.programs_skipped += 1
            continue
        report.programs_used += 1
        with _project_folder(program) as path:
            for script in drawn:
                extra = {"path": path} if path else {}
                session = make_session(program.source, list(script.breakpoints), **extra)
                try:
                    for file in sorted({f for f, _ in script.file_breakpoints}):
                        session.set_file_breakpoints(file, [n for f, n in script.file_breakpoints if f == file])
                    run_script(session, script, report, free_running=free_running)
                except Exception as exc:  # noqa: BLE001 - a session that fails mid-script counts no further stops
                    report.steps.append({"program": program.name, "error": f"{type(exc).__name__}: {exc}"})
                finally:
                    session.close()
    return report


@contextmanager
def _project_folder(program: Program) -> Iterator[str | None]:
    """For a program with modules: its main file written with its modules in a temporary folder (the
    sessions under test find the modules beside it); else None."""
    if not program.modules:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="fidelity-") as folder:
        main = Path(folder) / "main.py"
        main.write_text(program.source, encoding="utf-8")
        for rel, text in program.modules.items():
            target = Path(folder) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        yield str(main)


def compare_sessions(predicted: Any, real: Any, actions: Sequence[Action]) -> ComparisonSummary:
    """Drive two started-from-entry `DebugSession`s with the same actions (free-running), counting each stop."""
    summary = ComparisonSummary()
    summary.add(compare_states(predicted.start(), real.start()))
    for action in actions:
        real_state = real.step(action)
        summary.add(compare_states(predicted.step(action), real_state))
        if real_state.finished:
            break
    return summary
