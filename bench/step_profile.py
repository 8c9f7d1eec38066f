"""Where a plain step's time goes: cProfile over the Step Into / Step Over requests of bench_session's scripts.

    .venv/bin/python bench/step_profile.py [--actions 8] [--seed 0] [--engines auto,regex]

The scripts are bench_session.py's (the same programs, seed and draws). Each script is played in-process
(`NeuralDebugger`, the shipped model, the adapter's default budget) from its entry up to its first Continue or
Step Out (a plain step is the request a user makes most; coarse requests are bench_session's), and every Step
Into / Step Over is profiled. Each engine of the state grammar's matcher (`model/decode/regex_matcher.py`, chosen
by NEURAL_DEBUGGER_MATCHER) plays the same steps in turn, so the table compares them in one run: total time,
and the shares of building the grammar's matcher, matching prefixes, and the model's forward passes. Read the
ratios; the milliseconds depend on what else the machine runs.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_session import PROGRAMS, REQUESTS, Script, random_script  # noqa: E402
from protocol.debugger import Action  # noqa: E402

PLAIN = ("stepIn", "next")
# (share, cProfile function keys (file suffix, function name)): where the time of a plain step goes
PARTS = {
    "build the matcher": (("regex_matcher.py", "__init__"), ("regex_matcher.py", "_compile")),
    "match prefixes": (("regex_matcher.py", "allows"), ("regex_matcher.py", "complete")),
    "forward passes": (("hf.py", "_run"),),
}


@dataclass
class EngineProfile:
    engine: str
    steps: int
    seconds: float
    parts: dict[str, float]
    stops: list[str]  # each step's predicted state (JSON): the engines must predict the same


def plain_prefix(script: Script) -> list[str]:
    """The script's requests up to its first coarse one."""
    prefix = []
    for request in script.requests:
        if request not in PLAIN:
            break
        prefix.append(request)
    return prefix


def play(scripts: list[Script], checkpoint: Path, engine: str) -> EngineProfile:
    """Every plain step of `scripts` under one profiler, with `engine` matching the grammar."""
    from model.budget import StepBudget
    from model.session import NeuralDebugger

    os.environ["NEURAL_DEBUGGER_MATCHER"] = engine
    profiler = cProfile.Profile()
    steps, seconds, stops = 0, 0.0, []
    for script in scripts:
        session = NeuralDebugger.from_checkpoint(checkpoint, path=script.program, budget=StepBudget())
        try:
            session.start()
            session.set_breakpoints(script.breakpoints)
            for request in plain_prefix(script):
                if session.state.finished:
                    break
                start = time.perf_counter()
                profiler.enable()
                state = session.step(Action(kind=REQUESTS[request]))
                profiler.disable()
                seconds += time.perf_counter() - start
                steps += 1
                stops.append(state.model_dump_json())
        finally:
            session.close()
    return EngineProfile(engine, steps, seconds, shares(pstats.Stats(profiler)), stops)


def shares(stats: pstats.Stats) -> dict[str, float]:
    """Seconds spent in each of `PARTS` (cumulative time of the functions named there, outermost calls only)."""
    table = stats.stats  # type: ignore[attr-defined]  # {(file, line, name): (calls, primitive, total, cumulative, callers)}
    found = {}
    for part, keys in PARTS.items():
        found[part] = sum(row[3] for (file, _line, name), row in table.items()
                          if any(file.endswith(suffix) and name == function for suffix, function in keys)
                          and not _called_from_itself(row[4], keys))  # fmt: skip
    return found


def _called_from_itself(callers: dict, keys: tuple) -> bool:
    """Whether every call came from another function of the same part (its time is already counted there)."""
    return bool(callers) and all(any(file.endswith(suffix) and name == function for suffix, function in keys)
                                 for file, _line, name in callers)  # fmt: skip


def main() -> int:
    from model.paths import DEFAULT_CHECKPOINT

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=Path, default=PROGRAMS)
    parser.add_argument("--actions", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    parser.add_argument("--engines", default="auto,regex", help="matcher engines to compare, in order (auto, regex)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    scripts = [random_script(p, rng, args.actions) for p in sorted(args.programs.glob("*.py"))]
    profiles = [play(scripts, args.checkpoint, engine) for engine in args.engines.split(",")]
    print(f"{len(scripts)} scripts (bench_session's, seed {args.seed}), plain steps up to each one's first Continue / Step Out")
    print("| engine | steps | total | per step | " + " | ".join(PARTS) + " |")
    print("|---|---|---|---|" + "---|" * len(PARTS))
    for p in profiles:
        cells = " | ".join(f"{p.parts[part]:.2f} s ({p.parts[part] / p.seconds:.0%})" for part in PARTS)
        print(f"| {p.engine} | {p.steps} | {p.seconds:.2f} s | {p.seconds / max(1, p.steps) * 1000:.0f} ms | {cells} |")
    base = profiles[-1]
    for p in profiles[:-1]:
        same = sum(a == b for a, b in zip(p.stops, base.stops))
        print(f"{p.engine} vs {base.engine}: {base.seconds / p.seconds:.2f}x faster; the same predicted state {same}/{len(base.stops)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
