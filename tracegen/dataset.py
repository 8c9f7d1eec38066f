"""Sharded trajectory datasets: what ``neural-debugger tracegen synth`` writes.

Layout of ``OUT``::

    config.json          the settings (count, seed, sources, shard size, ...): a rerun must match
    shard-00000.jsonl    one `protocol.Trajectory` JSON per line, forward and inverse mixed
    shard-00000.stats.json   what making that shard took (programs kept, rejections by reason)
    manifest.json        counts, seed, sources, versions, per-shard stats (rewritten at the end)

Shard ``i`` holds ``min(shard_size, count - i * shard_size)`` trajectories and is made from a
generator seeded from ``(seed, i)`` alone, so the dataset is the same whatever the number of
workers and in whatever order shards finish. A shard file appears (atomic rename) only when
complete, so a rerun with the same settings skips finished shards and continues (resumable).

Making a shard: draw a program from the sources, skip it if its normalized source was seen in
this shard or if it touches an evaluation set (`tracegen.heldout.HeldOut`: CruxEval functions, the
realworld modules, the everyday set, examples/, the held-out synthetic seeds), record it with the fast recorder (CPU and
event limits), drop it if `tracegen.synth.filter.rejection` says so (files and doctests must
also record identically twice), then sample ``per_program`` trajectories with the paper's policy.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import queue
import random
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from multiprocessing import get_context
from pathlib import Path

from tracegen.dedupe import CruxEvalGuard, Deduper, default_cruxeval_path
from tracegen.heldout import HeldOut
from tracegen.posing import POSING
from tracegen.shards import read_shard, shard_name, shard_rng  # noqa: F401 - read_shard, shard_rng: readers still import them from here
from tracegen.sources import ProgramSpec, WeightedSources, parse_sources
from tracegen.synth.filter import FilterPolicy, rejection, same_run
from tracegen.synth.quote_style import double_quoted

FORMAT_VERSION = 1
MAX_DUPLICATES_IN_A_ROW = 1000  # draws that only repeat programs already used: the sources are exhausted
POSINGS = (None, POSING)  # SynthConfig.posing
GENERATOR_VERSION = "2"  # bump when generated programs change: an old dataset folder is then not resumed


@dataclass(frozen=True)
class SynthConfig:
    """Settings that define a dataset (everything but the number of workers)."""

    count: int
    seed: int = 0
    sources: str = "synthetic"
    shard_size: int = 1000
    per_program: int = 8
    max_steps: int = 64
    cruxeval: str | None = None  # path of cruxeval.jsonl; None: the default location
    policy: FilterPolicy = field(default_factory=FilterPolicy)
    posing: str | None = None  # None: the sampling policy (forward and inverse); "hidden-call": CruxEval-I's posing only
    double_quotes: float = 0.0  # share of generated programs whose string literals are written in double quotes

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError("count must be at least 1")
        if self.shard_size < 1 or self.per_program < 1 or self.max_steps < 1:
            raise ValueError("shard_size, per_program and max_steps must be at least 1")
        if self.posing not in POSINGS:
            raise ValueError(f"unknown posing {self.posing!r}: choose one of {', '.join(p for p in POSINGS if p)}")
        if not 0.0 <= self.double_quotes <= 1.0:
            raise ValueError(f"double_quotes is a share of the programs, between 0 and 1, not {self.double_quotes}")

    @property
    def shards(self) -> int:
        return math.ceil(self.count / self.shard_size)

    def shard_count(self, index: int) -> int:
        return min(self.shard_size, self.count - index * self.shard_size)

    def identity(self) -> dict[str, object]:
        """What must match for a rerun to continue an existing dataset."""
        data = asdict(self)
        if data["posing"] is None:
            del data["posing"]  # datasets written before the option existed resume unchanged
        if not data["double_quotes"]:
            del data["double_quotes"]  # likewise
        data["format"] = FORMAT_VERSION
        data["generator"] = GENERATOR_VERSION
        return data


@dataclass
class ShardStats:
    """What making one shard took."""

    index: int
    file: str
    trajectories: int = 0
    forward: int = 0
    inverse: int = 0
    programs: int = 0
    drawn: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)
    sha256: str = ""
    seconds: float = 0.0


def _record(spec: ProgramSpec, policy: FilterPolicy):  # noqa: ANN202 - ProgramTrace
    from tracegen.fast import record_program
    from tracegen.sandbox import Limits

    limits = Limits(cpu_seconds=policy.cpu_seconds, wall_seconds=policy.wall_seconds, max_events=policy.max_events, max_stdout=policy.max_stdout + 1)
    if spec.path is not None:
        return _relative_files(record_program(path=spec.path, limits=limits))
    return record_program(spec.source, limits=limits, modules=dict(spec.modules) or None)


def _relative_files(trace):  # noqa: ANN001, ANN202 - ProgramTrace
    """A trace of a file run in place, its other user files' frames made relative to the program's
    folder with their sources kept (as for generated projects), so trajectories carry no absolute paths."""
    from protocol.source_text import read_source

    folder = trace.folder
    files = {info.file for info in trace.frames.values() if info.file is not None and not info.lib}
    if folder is None or not files:
        return trace
    sources = {}
    for file in sorted(files):
        try:
            rel = os.path.relpath(file, folder).replace(os.sep, "/")
            sources[rel] = read_source(file, errors="replace")
        except (OSError, ValueError):
            return trace
    trace.relativize(folder, sources)
    return trace


def record_filtered(spec: ProgramSpec, policy: FilterPolicy):  # noqa: ANN202 - tuple[ProgramTrace | None, str | None]
    """Record a program and apply the filter: ``(trace, None)`` if kept, else ``(None, reason)``."""
    from tracegen.fast import RecordError

    try:
        trace = _record(spec, policy)
    except RecordError as exc:
        return None, f"recorder error: {str(exc)[:60]}"
    reason = rejection(trace, spec.kind, policy)
    if reason is None and not spec.synthetic and not same_run(trace, _record(spec, policy)):
        reason = "not deterministic"
    return (trace, None) if reason is None else (None, reason)


def restyled(spec: ProgramSpec, double_quotes: float, program_seed: int) -> ProgramSpec:
    """A generated program (and its modules) with double-quoted string literals for a `double_quotes` share of programs,
    chosen by the program's own seed: the draws of the dataset stay those of a dataset without the option."""
    if not spec.synthetic or double_quotes <= 0 or random.Random(program_seed ^ 0x5155_4F54).random() >= double_quotes:
        return spec
    return replace(spec, source=double_quoted(spec.source), modules=tuple((path, double_quoted(text)) for path, text in spec.modules),
                   tags=spec.tags | {"double-quotes"})


def build_shard(config: SynthConfig, index: int, out: Path, progress: Callable[[int], None] | None = None) -> ShardStats:
    """Make shard `index` of the dataset in `out` (atomically) and write its stats beside it."""
    from tracegen.sampling import sample_hidden_calls, sample_trajectories

    start = time.monotonic()
    sources = parse_sources(config.sources)
    held = HeldOut.for_dataset(config.seed, config.cruxeval)
    rng = shard_rng(config.seed, index)
    target = config.shard_count(index)
    stats = ShardStats(index, shard_name(index))
    kinds: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    seen = Deduper()
    duplicates_in_a_row = 0
    tmp = out / (shard_name(index) + ".tmp")
    digest = hashlib.sha256()
    with tmp.open("w", encoding="utf-8") as fh:
        while stats.trajectories < target:
            spec = sources.draw(rng)
            program_seed = rng.getrandbits(64)
            stats.drawn += 1
            if not seen.add(spec.all_source):
                rejected["duplicate"] += 1
                duplicates_in_a_row += 1
                if duplicates_in_a_row >= MAX_DUPLICATES_IN_A_ROW:
                    raise ValueError(f"the sources gave no new program in {MAX_DUPLICATES_IN_A_ROW} draws (shard {index} has "
                                     f"{stats.trajectories} of {target} trajectories from {stats.programs} programs): a files: "
                                     "source holds too few distinct programs for --count; lower --count or raise --per-program")
                continue
            duplicates_in_a_row = 0
            held_out = held.rejection(spec)
            if held_out is not None:
                rejected[held_out] += 1
                continue
            spec = restyled(spec, config.double_quotes, program_seed)
            trace, reason = record_filtered(spec, config.policy)
            if trace is None:
                rejected[reason or "?"] += 1
                continue
            want = min(config.per_program, target - stats.trajectories)
            if config.posing == POSING:
                trajectories = sample_hidden_calls(trace, random.Random(program_seed), want, config.max_steps)
            else:
                trajectories = sample_trajectories(trace, random.Random(program_seed), want, config.max_steps)
            if not trajectories:
                rejected["no hidden call" if config.posing else "no trajectories"] += 1
                continue
            stats.programs += 1
            kinds[spec.kind] += 1
            for traj in trajectories[:want]:
                traj.meta.update({"kind": spec.kind, "origin": spec.origin, "shard": str(index), "program": str(stats.programs - 1)})
                line = traj.model_dump_json() + "\n"
                fh.write(line)
                digest.update(line.encode())
                stats.trajectories += 1
                if traj.direction == "inverse":
                    stats.inverse += 1
                else:
                    stats.forward += 1
            if progress is not None:
                progress(min(len(trajectories), want))
    stats.kinds = dict(sorted(kinds.items()))
    stats.rejected = dict(sorted(rejected.items()))
    stats.sha256 = digest.hexdigest()
    stats.seconds = round(time.monotonic() - start, 2)
    _write_json(out / shard_name(index).replace(".jsonl", ".stats.json"), asdict(stats))
    os.replace(tmp, out / shard_name(index))
    return stats


def _write_json(path: Path, data: object) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _load_stats(out: Path, index: int) -> ShardStats | None:
    """Stats of a finished shard, or None if the shard is not complete."""
    stats_path = out / shard_name(index).replace(".jsonl", ".stats.json")
    if not (out / shard_name(index)).is_file() or not stats_path.is_file():
        return None
    try:
        return ShardStats(**json.loads(stats_path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, TypeError):
        return None


def _check_config(config: SynthConfig, out: Path) -> None:
    path = out / "config.json"
    identity = json.loads(json.dumps(config.identity()))
    if path.is_file():
        existing = json.loads(path.read_text(encoding="utf-8"))
        if existing != identity:
            diff = sorted(k for k in set(existing) | set(identity) if existing.get(k) != identity.get(k))
            raise ValueError(f"{out} holds a dataset made with other settings ({', '.join(diff)} differ); use another --out or the same settings")
    else:
        _write_json(path, identity)


# ------------------------------------------------------------------ worker processes
def _worker_build(config: SynthConfig, index: int, out: str, progress_queue) -> ShardStats:  # noqa: ANN001
    """Build one shard in a pool process, reporting progress through a manager queue."""
    return build_shard(config, index, Path(out), progress_queue.put)


def versions() -> dict[str, str]:
    """Versions that shape the data: ours, Python's, the generator's."""
    try:
        ours = metadata.version("neural-debugger")
    except metadata.PackageNotFoundError:
        ours = "unknown"
    return {"neural_debugger": ours, "python": platform.python_version(), "generator": GENERATOR_VERSION, "format": str(FORMAT_VERSION)}


def make_dataset(config: SynthConfig, out: Path | str, workers: int = 1, show_progress: bool = True) -> dict[str, object]:
    """Write (or finish) the dataset in `out` with `workers` processes; returns the manifest."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    parse_sources(config.sources)  # fail fast on a bad --sources
    CruxEvalGuard(config.cruxeval)  # and on a missing CruxEval file
    _check_config(config, out)
    done: dict[int, ShardStats] = {}
    for i in range(config.shards):
        stats = _load_stats(out, i)
        if stats is not None:
            done[i] = stats
    todo = [i for i in range(config.shards) if i not in done]
    already = sum(s.trajectories for s in done.values())
    start = time.monotonic()
    bar = _progress_bar(config.count, already, show_progress)
    try:
        if workers <= 1 or len(todo) <= 1:
            for i in todo:
                done[i] = build_shard(config, i, out, bar.update)
        else:
            _run_pool(config, out, todo, workers, done, bar)
    finally:
        bar.close()
    elapsed = time.monotonic() - start
    made = sum(done[i].trajectories for i in todo)
    manifest = _manifest(config, done, workers, elapsed, made)
    _write_json(out / "manifest.json", manifest)
    return manifest


def _run_pool(config: SynthConfig, out: Path, todo: list[int], workers: int, done: dict[int, ShardStats], bar) -> None:  # noqa: ANN001
    ctx = get_context("spawn")
    with ctx.Manager() as manager, ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        progress_queue = manager.Queue()
        pending: dict[Future[ShardStats], int] = {pool.submit(_worker_build, config, i, str(out), progress_queue): i for i in todo}
        while pending:
            finished, _ = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            _drain(progress_queue, bar)
            for fut in finished:
                index = pending.pop(fut)
                done[index] = fut.result()
        _drain(progress_queue, bar)


def _drain(progress_queue, bar) -> None:  # noqa: ANN001
    while True:
        try:
            bar.update(progress_queue.get_nowait())
        except queue.Empty:
            return


def _progress_bar(total: int, initial: int, show: bool):  # noqa: ANN202
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="traj", desc="synth", disable=not show, dynamic_ncols=True, smoothing=0.1)


def _manifest(config: SynthConfig, done: dict[int, ShardStats], workers: int, elapsed: float, made: int) -> dict[str, object]:
    shards = [asdict(done[i]) for i in sorted(done)]
    rejected: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for s in done.values():
        rejected.update(s.rejected)
        kinds.update(s.kinds)
    sources = parse_sources(config.sources)
    return {
        "format": FORMAT_VERSION,
        "count": config.count,
        "seed": config.seed,
        "sources": config.sources,
        "source_details": sources.describe(),
        "shard_size": config.shard_size,
        "per_program": config.per_program,
        "max_steps": config.max_steps,
        "cruxeval": str(config.cruxeval or default_cruxeval_path()),
        "policy": asdict(config.policy),
        "versions": versions(),
        "complete": len(done) == config.shards,
        "trajectories": sum(s.trajectories for s in done.values()),
        "forward": sum(s.forward for s in done.values()),
        "inverse": sum(s.inverse for s in done.values()),
        "programs": sum(s.programs for s in done.values()),
        "kinds": dict(sorted(kinds.items())),
        "rejected": dict(sorted(rejected.items())),
        "last_run": {"workers": workers, "seconds": round(elapsed, 2), "trajectories": made,
                     "trajectories_per_second": round(made / elapsed, 2) if elapsed > 0 else None},
        "shards": shards,
    }
