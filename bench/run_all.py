"""`make bench`: every benchmark in one run, a table printed and written into README.md.

    nice -n 10 .venv/bin/python bench/run_all.py [--quick] [--out FILE]

Each measurement comes with its baseline, measured in the same process right beside it, and the
ratio between the two (timings on a shared machine swing; ratios measured together swing less):

* step + inspection as a DAP client feels it: short programs (bench/programs/) with seeded random scripts (Step
  In/Over/Out, Continue to breakpoints), the adapter with the shipped model against debugpy on the same scripts;
  p50, p90 and max (bench/bench_session.py).
* step latency: a neural step (a stop predicted with its stack and locals) against debugpy's step
  plus stackTrace/scopes/variables on the same program (bench/bench_step.py); p50 and p90.
* step latency by file length: p50 of a neural step on a ~400-line file (a standard-library module
  followed by examples/demo.py) next to the 28-line examples/demo.py alone (bench/bench_step.py,
  `file_length_run`): the same stops, and the long file from its entry. Target: within 1.5x.
* tracegen: stops/s of the fast recorder against the debugpy recorder (bench/bench_tracegen.py).
* training: tokens/s of the `tiny` preset over a short run on toy trajectories (train.loop).
* CruxEval: wall time per problem on the first --cruxeval-limit problems, the model against the
  oracle session (train.eval.cruxeval, output prediction).
* MCP predict_call: right answers and p50 latency on held-out synthetic crux-kind calls, the model
  against running them under the recorder (bench/bench_mcp_calls.py).

The model is checkpoints/default when it has been trained, else a tiny random checkpoint built on
the fly (its timings are then indicative only, and the table says so). The table goes between
``<!-- bench:start -->`` and ``<!-- bench:end -->`` in README.md; without those markers it goes
to bench/results.md (or --out) and a note says so.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

START, END = "<!-- bench:start -->", "<!-- bench:end -->"


@dataclass
class Row:
    """One line of the table: what was measured, its value, the baseline's, and value / baseline."""

    name: str
    value: str
    baseline: str = ""
    ratio: str = ""
    note: str = ""


# ------------------------------------------------------------------------------ measurements


def choose_checkpoint(tmp: Path) -> tuple[Path, str]:
    """checkpoints/default when trained, else a tiny random checkpoint (and a label saying which)."""
    from model.paths import DEFAULT_CHECKPOINT

    if (Path(DEFAULT_CHECKPOINT) / "config.json").is_file():
        return Path(DEFAULT_CHECKPOINT), f"shipped model ({Path(DEFAULT_CHECKPOINT).name})"
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import build_tiny_checkpoint

    return build_tiny_checkpoint(tmp / "tiny"), "tiny random model (checkpoints/default not trained yet)"


def step_latency(checkpoint: Path, program: Path, steps: int) -> list[Row]:
    import bench_step

    free = bench_step.neural_run(checkpoint, program, steps, max_state_tokens=96)
    forced = bench_step.teacher_forced_run(checkpoint, program, steps)
    real = bench_step.debugpy_run(program, steps)
    p = bench_step.percentile
    rows = []
    for label, run in (("neural step, free-running", free), ("neural step, true-length states", forced)):
        times, base = run["times"], real["times"]
        if not times or not base:
            rows.append(Row(label, "unavailable", note=str(real.get("error", ""))))
            continue
        for q in (0.5, 0.9):
            rows.append(Row(f"{label} p{int(q * 100)}", f"{p(times, q):.1f} ms", f"{p(base, q):.1f} ms (debugpy step+inspect)",
                            f"{p(times, q) / p(base, q):.2f}x", f"{len(times)} steps of {program.name}"))
    return rows


def session_latency(checkpoint: Path, limit: int, actions: int) -> list[Row]:
    """Step + inspection over DAP on bench/programs/ with seeded random scripts, neural vs debugpy (bench/bench_session.py)."""
    import bench_session

    programs = sorted(bench_session.PROGRAMS.glob("*.py"))[: limit or None]
    result = bench_session.measure(programs, actions, 0, checkpoint, 120.0)
    info = bench_session.summary(result)
    n, d = info["neural"], info["debugpy"]
    note = (f"{len(programs)} programs x {actions} random requests (seed 0); {n['steps']} steps; neural stops where debugpy's were "
            f"{info['same_stops']}/{info['compared']}; over 3 s: {info['over_3s']}; cut by the budget: {info['cut']}")
    return [Row(f"step + inspection over DAP, random scripts, p{q}", f"{n[f'p{q}']:.0f} ms", f"{d[f'p{q}']:.0f} ms (debugpy)",
                f"{n[f'p{q}'] / d[f'p{q}']:.2f}x", note) for q in (50, 90)] + [
        Row("step + inspection over DAP, random scripts, max", f"{n['max']:.0f} ms", f"{d['max']:.0f} ms (debugpy)",
            f"{n['max'] / d['max']:.2f}x", "target: no step over 3 s")]


def step_latency_by_length(checkpoint: Path, program: Path, steps: int, rounds: int) -> list[Row]:
    """Step p50 on a ~400-line file next to the short one it ends with, in the same process (bench_step.file_length_run)."""
    import bench_step

    result = bench_step.file_length_run(checkpoint, program, steps, rounds=rounds)
    p = bench_step.percentile
    short = result["short"]["times"]
    rows = []
    for key, label in (("long_same_stops", "the same stops"), ("long_from_entry", "from its entry")):
        times = result[key]["times"]
        if not times or not short:
            rows.append(Row(f"neural step p50, {result['long_lines']}-line file ({label})", "unavailable"))
            continue
        prompts = result[key]["prompt"]
        rows.append(Row(f"neural step p50, {result['long_lines']}-line file ({label})", f"{p(times, .5):.1f} ms",
                        f"{p(short, .5):.1f} ms ({result['short_lines']}-line {program.name})", f"{p(times, .5) / p(short, .5):.2f}x",
                        f"true-length states, {len(times)} steps in {rounds} rounds; target <= 1.5x; "
                        f"prompt tokens mean {sum(prompts) / len(prompts):.0f} / max {max(prompts)} "
                        f"(short: {sum(result['short']['prompt']) / len(result['short']['prompt']):.0f} / {max(result['short']['prompt'])}); "
                        f"long file: {bench_step.LONG_FILE_MODULE}.py + {program.name}"))
    return rows


def tracegen_throughput(programs: list[Path], steps: int) -> list[Row]:
    import bench_tracegen

    result = bench_tracegen.bench(programs, steps, replay_repeats=10)
    rates = result.rates()
    base = f"{rates['debugpy_stops_per_s']:.1f} stops/s (debugpy recorder)"
    note = f"{result.stops} stops, {result.programs} programs" + (f", {result.mismatched_programs} differ" if result.mismatched_programs else "")
    return [
        Row("tracegen fast recorder (trace + replay)", f"{rates['fast_stops_per_s']:.0f} stops/s", base, f"{rates['ratio_end_to_end']:.0f}x", note),
        Row("tracegen fast replay only", f"{rates['fast_replay_stops_per_s']:.0f} stops/s", base, f"{rates['ratio_replay']:.0f}x", note),
    ]


def training_throughput(tmp: Path, steps: int) -> list[Row]:
    from train import data
    from train.loop import TrainConfig, train
    from train.toydata import toy_trajectories, write_shards

    write_shards(tmp / "traj", toy_trajectories(200, seed=3))
    data.pack(tmp / "traj", tmp / "packed", seq_len=256, heldout_fraction=0.1, vocab_size=400, progress=False)
    cfg = TrainConfig(data=tmp / "packed", out=tmp / "trained", preset="tiny", steps=steps, micro_batch=8, eval_every=10**6,
                      save_every=10**6, eval_sequences=0, eval_states=0, log_every=max(1, steps), progress=False, device="cpu")
    summary = train(cfg)
    return [Row("training tokens/s (tiny preset, CPU)", f"{summary['tokens_per_s']:,.0f} tokens/s", "", "",
                f"{summary['steps']} steps x 8 x 256 tokens, toy data")]


class SharedBackend:
    """A backend shared by many sessions: `close` only resets its cache (the model stays loaded)."""

    def __init__(self, backend: Any) -> None:
        self.inner = backend
        self.max_model_len = getattr(backend, "max_model_len", None)

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.generate(*args, **kwargs)

    def close(self) -> None:
        reset = getattr(self.inner, "reset_cache", None)
        if reset is not None:
            reset()


def cruxeval_wall_time(checkpoint: Path, limit: int, problems_path: Path) -> list[Row]:
    if not problems_path.is_file():
        return [Row("CruxEval-O wall time per problem", "unavailable", note=f"no problems file at {problems_path}")]
    from model.backends.hf import HFBackend
    from model.oracle import OracleDebugger
    from model.session import NeuralDebugger
    from train.eval.cruxeval import evaluate_problem, load_problems

    problems = load_problems(problems_path, limit=limit)
    backend = SharedBackend(HFBackend(checkpoint))

    def neural(program: str) -> Any:
        return NeuralDebugger(backend, backend.inner.tokenizer, program, max_state_tokens=96)

    def timed(make_session: Any, oracle: bool) -> tuple[float, int]:
        start = time.perf_counter()
        passed = sum(evaluate_problem(p, "output", "step_return", make_session, oracle=oracle)["passed"] for p in problems)
        return (time.perf_counter() - start) / len(problems), passed

    model_s, model_pass = timed(neural, False)
    oracle_s, oracle_pass = timed(lambda program: OracleDebugger(program), True)
    return [Row("CruxEval-O wall time per problem", f"{model_s:.2f} s", f"{oracle_s:.2f} s (oracle session)", f"{model_s / oracle_s:.1f}x",
                f"{len(problems)} problems; passed {model_pass} (model) / {oracle_pass} (oracle); scoring included")]


def mcp_predict_call(checkpoint: Path, count: int) -> list[Row]:
    import bench_mcp_calls

    m = bench_mcp_calls.measure(checkpoint, count)
    note = f"{m['n']} synthetic crux-kind calls, seed {m['seed']} (bench/bench_mcp_calls.py)"
    return [Row("MCP predict_call: right answers", f"{m['accuracy']}% ({m['right']}/{m['n']})", "100% (the recorder runs the call)", "",
                note + f"; mean confidence {m['mean_confidence_right']} when right, {m['mean_confidence_wrong']} when wrong"),
            Row("MCP predict_call: p50 latency", f"{m['model_p50_s']:.2f} s", f"{m['recorder_p50_s']:.2f} s (recorder)",
                f"{m['model_p50_s'] / m['recorder_p50_s']:.1f}x", note + "; the model loaded once, as the server does")]


# ------------------------------------------------------------------------------ the table


def render(rows: list[Row], header: str) -> str:
    lines = [header, "", "| measurement | value | baseline (same run) | ratio | notes |", "|---|---|---|---|---|"]
    lines += [f"| {r.name} | {r.value} | {r.baseline} | {r.ratio} | {r.note} |" for r in rows]
    return "\n".join(lines) + "\n"


def write_table(table: str, readme: Path, fallback: Path) -> str:
    """Put the table between the markers in `readme`; else into `fallback`. Returns where it went."""
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    if START in text and END in text and text.index(START) < text.index(END):
        pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
        readme.write_text(pattern.sub(lambda _: f"{START}\n{table}{END}", text, count=1), encoding="utf-8")
        return str(readme)
    fallback.write_text(table, encoding="utf-8")
    return f"{fallback} (README.md has no {START} / {END} markers)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps everywhere (a smoke run)")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results.md", help="where the table goes without README markers")
    parser.add_argument("--cruxeval", type=Path, default=None, help="CruxEval JSON lines (default: $CRUXEVAL_PATH, else tracegen/cruxeval/)")
    parser.add_argument("--cruxeval-limit", type=int, default=5)
    args = parser.parse_args()
    if args.cruxeval is None:
        from tracegen.dedupe import default_cruxeval_path

        args.cruxeval = default_cruxeval_path()
    quick = args.quick
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-all-") as name:
        tmp = Path(name)
        checkpoint, label = choose_checkpoint(tmp)
        sections = [
            ("step + inspection, random scripts", lambda: session_latency(checkpoint, 4 if quick else 0, 4 if quick else 8)),
            ("step latency", lambda: step_latency(checkpoint, ROOT / "examples" / "functions.py", 8 if quick else 20)),
            ("step latency by file length", lambda: step_latency_by_length(checkpoint, ROOT / "examples" / "demo.py",
                                                                          10 if quick else 25, 1 if quick else 3)),
            ("tracegen", lambda: tracegen_throughput(sorted((ROOT / "examples").glob("*.py"))[: 2 if quick else 5], 20 if quick else 40)),
            ("training", lambda: training_throughput(tmp / "train", 4 if quick else 10)),
            ("cruxeval", lambda: cruxeval_wall_time(checkpoint, 2 if quick else args.cruxeval_limit, args.cruxeval)),
            ("mcp predict_call", lambda: mcp_predict_call(checkpoint, 3 if quick else 10)),
        ]
        for title, measure in sections:
            print(f"== {title}", flush=True)
            t0 = time.perf_counter()
            try:
                rows += measure()
            except Exception as exc:  # noqa: BLE001 - one broken benchmark must not hide the others
                rows.append(Row(title, "failed", note=f"{type(exc).__name__}: {str(exc)[:150]}"))
            print(f"   {time.perf_counter() - t0:.0f} s", flush=True)
    stamp = datetime.date.today().isoformat()
    header = (f"Measured {stamp} by `make bench` ({time.perf_counter() - started:.0f} s) on {platform.machine()}, "
              f"{os.cpu_count()} CPU cores (shared), Python {platform.python_version()}; model: {label}.")
    table = render(rows, header)
    print("\n" + table)
    print("table written to", write_table(table, args.readme, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
