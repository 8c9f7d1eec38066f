"""Continue with no breakpoint, from the entry: how long it takes and whether it ends where the program ends.

    .venv/bin/python bench/continue_to_end.py [--programs DIR] [--modes fine,auto] [--checkpoint DIR]

For each program under bench/programs/ a `NeuralDebugger` (the shipped model, the adapter's default budget) starts at
the entry and is asked one Continue, once per `coarseSteps` mode: `fine` takes predicted fine steps until one arrives
(the end, an exception) or the budget runs out; `auto` sees that no breakpoint can be reached
(`model.static.reach.no_target_ahead`) and predicts the end in one jump. The real end comes from the fast recorder
(which reproduces debugpy's stops). It prints, per mode, the p50 / p90 / max time of the Continue, how many ended the
program, and how many ended it with the real output (stdout and exit code). The modes take turns on each program, so
both see the same load.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_session import PROGRAMS, percentile  # noqa: E402
from protocol.debugger import Action, ActionKind, State  # noqa: E402

DEFAULT_CHECKPOINT = ROOT / "checkpoints" / "default"


@dataclass
class ModeResult:
    seconds: list[float] = field(default_factory=list)
    ended: int = 0
    same_output: int = 0


def real_end(program: Path) -> State:
    """The program's end as debugpy shows it after a Continue from the entry with no breakpoint."""
    from tracegen.fast import ReplaySession, record_program

    session = ReplaySession(record_program(path=program), [])
    session.start()
    return session.step(Action(kind=ActionKind.CONTINUE))


def output(states: list[State]) -> tuple[str, int | None]:
    """The stdout written over `states` and the exit code of the last."""
    return "".join(s.stdout for s in states), states[-1].exit_code


def neural_continue(program: Path, checkpoint: Path, mode: str) -> tuple[float, list[State]]:
    """One Continue from the entry; its time and every stop it made (fine steps included)."""
    from model.budget import StepBudget
    from model.session import NeuralDebugger

    session = NeuralDebugger.from_checkpoint(checkpoint, path=str(program), budget=StepBudget(), coarse_steps=mode)
    session.start()
    start = time.perf_counter()
    session.step(Action(kind=ActionKind.CONTINUE))
    return time.perf_counter() - start, [h.state for h in session.history]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=Path, default=PROGRAMS)
    parser.add_argument("--modes", default="fine,auto")
    parser.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    results = {mode: ModeResult() for mode in modes}
    programs = sorted(args.programs.glob("*.py"))
    for program in programs:
        real = real_end(program)
        for mode in modes:
            seconds, states = neural_continue(program, args.checkpoint, mode)
            result = results[mode]
            result.seconds.append(seconds)
            if states and states[-1].finished:
                result.ended += 1
                result.same_output += output(states) == (real.stdout, real.exit_code)
    print(f"{len(programs)} programs, Continue from the entry with no breakpoint ({args.checkpoint})")
    for mode, r in results.items():
        ms = [s * 1000 for s in r.seconds]
        print(f"{mode:5s} p50={percentile(ms, 0.5):7.0f} ms  p90={percentile(ms, 0.9):7.0f} ms  max={max(ms):7.0f} ms  "
              f"ended {r.ended}/{len(programs)}, with the real output {r.same_output}/{len(programs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
