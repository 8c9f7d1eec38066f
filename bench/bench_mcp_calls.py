"""predict_call (the MCP tool) on held-out CruxEval-style calls: accuracy and latency, next to running
the same calls under the recorder.

    nice -n 10 .venv/bin/python bench/bench_mcp_calls.py [--count 20] [--seed 12345] [--model DIR]

The calls are synthetic crux-kind functions (`tracegen.synth.crux`) drawn with a fixed seed (12345,
the seed the Makefile's held-out synthetic sets use; not CruxEval itself). Each call is posed as the
`predict_call` tool poses it (`adapter.mcp_server.calls`) and answered twice with the same steps:
by the model (one loaded model shared by every call, as the server does) and by the recorder
(`model.oracle.OracleDebugger`: the program run in tracegen's sandbox, its stops replayed). A
prediction is right when it returns the same repr, or raises the same exception type, as the real run.
Prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HELDOUT_SEED = 12345


def held_out_calls(count: int, seed: int = HELDOUT_SEED) -> list[tuple[str, str]]:
    """(source, call) of `count` synthetic crux-kind functions drawn with `seed`."""
    from tracegen.synth.crux import generate_function

    rng = random.Random(seed)
    calls = []
    for _ in range(count):
        fn = generate_function(rng)
        calls.append((fn.function, fn.call.partition("=")[2].strip()))
    return calls


def same_answer(predicted: Any, real: Any) -> bool:
    if real.returned is not None:
        return predicted.returned == real.returned
    if real.raised is not None and predicted.raised is not None:
        return predicted.raised.partition(":")[0] == real.raised.partition(":")[0]
    return False


def measure(checkpoint: Path | None, count: int, seed: int = HELDOUT_SEED) -> dict[str, Any]:
    from adapter.mcp_server.calls import pose_call, run_call
    from adapter.mcp_server.server import OneShotModel
    from model.oracle import OracleDebugger

    model = OneShotModel(checkpoint)
    model.session("x = 1\n")  # load once, outside the timings (the server loads on its first question)
    rows = []
    for source, call in held_out_calls(count, seed):
        posed = pose_call(source, call)
        t0 = time.perf_counter()
        real = run_call(OracleDebugger(posed.program), posed)
        t1 = time.perf_counter()
        predicted = run_call(model.session(posed.program), posed)
        t2 = time.perf_counter()
        rows.append({"call": call, "real": real.returned or real.raised, "predicted": predicted.returned or predicted.raised,
                     "right": same_answer(predicted, real), "confidence": round(predicted.confidence, 3),
                     "model_s": round(t2 - t1, 3), "recorder_s": round(t1 - t0, 3)})  # fmt: skip
    right = sum(r["right"] for r in rows)
    model_s = [r["model_s"] for r in rows]
    recorder_s = [r["recorder_s"] for r in rows]
    confident = [r for r in rows if r["confidence"] >= 0.5]
    return {
        "n": len(rows), "seed": seed, "right": right, "accuracy": round(100.0 * right / len(rows), 1) if rows else 0.0,
        "model_p50_s": round(statistics.median(model_s), 3), "recorder_p50_s": round(statistics.median(recorder_s), 3),
        "model_max_s": round(max(model_s), 3), "recorder_max_s": round(max(recorder_s), 3),
        "confident": len(confident), "confident_right": sum(r["right"] for r in confident),
        "mean_confidence_right": round(statistics.mean([r["confidence"] for r in rows if r["right"]] or [0.0]), 3),
        "mean_confidence_wrong": round(statistics.mean([r["confidence"] for r in rows if not r["right"]] or [0.0]), 3),
        "calls": rows,
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=HELDOUT_SEED)
    parser.add_argument("--model", type=Path, default=None, help="checkpoint folder (default: the shipped model)")
    args = parser.parse_args()
    print(json.dumps(measure(args.model, args.count, args.seed), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
