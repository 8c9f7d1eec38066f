"""Stops recorded per second: the fast recorder vs real debugpy, same programs, same scripts, one run.

    nice -n 10 .venv/bin/python bench/bench_tracegen.py [--programs examples/*.py] [--steps 60] [--json out.json]

Each program is stepped with stepIn until it ends (at most --steps actions) by both recorders.
The fast recorder is timed twice: end to end (trace the program in its sandboxed child, then
replay) and replay only (answering a script from a trace already recorded, which is how `synth`
samples many trajectories per program). Not a test: numbers depend on the machine and its load.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.debugger import Action, ActionKind  # noqa: E402


@dataclass
class Result:
    """Totals over all programs: stops recorded and seconds spent, per recorder."""

    programs: int = 0
    stops: int = 0
    fast_s: float = 0.0
    fast_replay_s: float = 0.0
    debugpy_s: float = 0.0
    mismatched_programs: int = 0

    def rates(self) -> dict[str, float]:
        fast = self.stops / self.fast_s if self.fast_s else 0.0
        replay = self.stops / self.fast_replay_s if self.fast_replay_s else 0.0
        real = self.stops / self.debugpy_s if self.debugpy_s else 0.0
        return {"fast_stops_per_s": fast, "fast_replay_stops_per_s": replay, "debugpy_stops_per_s": real,
                "ratio_end_to_end": fast / real if real else 0.0, "ratio_replay": replay / real if real else 0.0}


def bench(programs: list[Path], steps: int, replay_repeats: int = 20) -> Result:
    from tracegen.debugpy_recorder import record_debugpy
    from tracegen.fast import record_program, replay

    actions = [Action(kind=ActionKind.STEP_INTO)] * steps
    result = Result()
    for path in programs:
        t0 = time.perf_counter()
        trace = record_program(path=path)
        fast_states = replay(trace, actions)
        t1 = time.perf_counter()
        for _ in range(replay_repeats):
            replay(trace, actions)
        t2 = time.perf_counter()
        real_states = record_debugpy(path, actions)
        t3 = time.perf_counter()
        result.programs += 1
        result.stops += len(real_states)
        result.fast_s += t1 - t0
        result.fast_replay_s += (t2 - t1) / replay_repeats
        result.debugpy_s += t3 - t2
        if [s.location for s in fast_states] != [s.location for s in real_states]:
            result.mismatched_programs += 1
        print(f"{path.name:28} {len(real_states):4d} stops  fast {t1 - t0:6.3f}s  replay {(t2 - t1) / replay_repeats * 1e3:7.2f}ms"
              f"  debugpy {t3 - t2:6.2f}s", flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", nargs="*", type=Path, default=sorted((ROOT / "examples").glob("*.py")))
    parser.add_argument("--steps", type=int, default=60, help="most stepIn actions per program")
    parser.add_argument("--json", type=Path, default=None, help="also write the totals and rates here")
    args = parser.parse_args()
    result = bench(args.programs, args.steps)
    rates = result.rates()
    print(f"\n{result.programs} programs, {result.stops} stops (same stops for both recorders"
          f"{'' if not result.mismatched_programs else f'; {result.mismatched_programs} programs differ'})")
    print(f"debugpy:               {rates['debugpy_stops_per_s']:10.1f} stops/s")
    print(f"fast (trace + replay): {rates['fast_stops_per_s']:10.1f} stops/s   {rates['ratio_end_to_end']:8.0f}x debugpy")
    print(f"fast (replay only):    {rates['fast_replay_stops_per_s']:10.1f} stops/s   {rates['ratio_replay']:8.0f}x debugpy")
    if args.json:
        args.json.write_text(json.dumps({**asdict(result), **rates}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
