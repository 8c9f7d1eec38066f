"""Latency of drawing several answers per stop (`model.decode.rerank`), as ratios against one answer, in one run.

    .venv/bin/python bench/bench_candidates.py [--checkpoint DIR] [--problems N] [--counts 1,2,4,8] [--ensemble]

For each of the first N CruxEval problems (the copy in tracegen/cruxeval/), two stops are timed
for each candidate count K: ``inv_step_call`` from the stop just after ``f`` returned (CruxEval-I's
posing, the "which arguments?" step back) and ``step_return`` from ``f``'s first stop (the state
given, CruxEval-O's last step). Prints p50/p90 in ms per K and the ratio of p50s against K = 1.
--ensemble: each K again with the companion models the checkpoint's ensemble.json names
(`model.backends.ensemble`: they draw K answers more after inv_step_call and score every answer).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.debugger import Action, ActionKind  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_stops(checkpoint: Path, problems: list, count: int, companions: list[Path]) -> dict[str, list[float]]:
    from model.backends.hf import HFBackend
    from model.backends.ensemble import load_companions
    from model.oracle import OracleDebugger
    from model.session import NeuralDebugger
    from train.eval import cruxeval as cx

    backend = HFBackend(checkpoint, threads=1)
    others = load_companions(companions, backend.tokenizer, threads=1).backends
    times: dict[str, list[float]] = {"inv_step_call": [], "step_return": []}
    for problem in problems:
        posed = cx.pose(problem, "input")
        session = NeuralDebugger(backend, backend.tokenizer, posed.program, candidates=count, call_candidates=count, coarse_candidates=count, retry_temperature=None, max_state_tokens=192,
                                  companions=others)  # fmt: skip
        session.start_from(cx.return_state(posed, problem.output))
        start = time.perf_counter()
        session.step(Action(kind=ActionKind.INV_STEP_CALL))
        times["inv_step_call"].append(time.perf_counter() - start)
        posed = cx.pose(problem, "output")
        oracle = OracleDebugger(posed.program)
        state = oracle.start()
        while not (len(state.frames) == 2 and state.top is not None and state.top.name == cx.FUNCTION) and not state.finished:
            state = oracle.step(Action(kind=ActionKind.STEP_INTO))
        oracle.close()
        if state.finished:
            continue
        session = NeuralDebugger(backend, backend.tokenizer, posed.program, candidates=count, call_candidates=count, coarse_candidates=count, retry_temperature=None, max_state_tokens=192,
                                  companions=others)  # fmt: skip
        session.start_from(state)
        start = time.perf_counter()
        session.step(Action(kind=ActionKind.STEP_RETURN))
        times["step_return"].append(time.perf_counter() - start)
    backend.close()
    for other in others:
        other.close()
    return times


def main() -> None:
    from model.backends.ensemble import companion_folders
    from model.paths import resolve_checkpoint
    from train.eval import cruxeval as cx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=None)
    parser.add_argument("--problems", type=int, default=20)
    parser.add_argument("--counts", default="1,2,4,8")
    parser.add_argument("--ensemble", action="store_true", help="each count again with the checkpoint's companion models")
    args = parser.parse_args()
    checkpoint = resolve_checkpoint(args.checkpoint)
    problems = cx.load_problems(ROOT / "tracegen" / "cruxeval" / "cruxeval.jsonl", args.problems)
    counts = [int(c) for c in args.counts.split(",")]
    companions: list[Path] = []
    if args.ensemble:
        found = companion_folders(checkpoint)
        if found.problems or not found.folders:
            parser.error("; ".join(found.problems) or f"{checkpoint} names no companion models (no ensemble.json)")
        companions = found.folders
    runs = [(count, []) for count in counts] + [(count, companions) for count in counts if companions]
    results = {(str(count) + ("+" if others else "")): time_stops(checkpoint, problems, count, others) for count, others in runs}
    base = {stop: statistics.median(values) for stop, values in results[str(counts[0])].items()}
    print(f"checkpoint {checkpoint}, {len(problems)} problems, one thread" + (f"; K+: with {len(companions)} companion(s)" if companions else ""))
    print(f"{'stop':<14} {'K':>3} {'p50 ms':>8} {'p90 ms':>8} {'p50 / K=' + str(counts[0]):>10}")
    for count, times in results.items():
        for stop, values in times.items():
            p50 = statistics.median(values)
            print(f"{stop:<14} {count:>3} {1000 * p50:>8.0f} {1000 * percentile(values, 0.9):>8.0f} {p50 / base[stop]:>10.2f}")


if __name__ == "__main__":
    main()
