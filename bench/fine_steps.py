"""How many fine steps a Continue / Step Out takes when it runs as fine steps, and whether they arrive, with a perfect model.

    .venv/bin/python bench/fine_steps.py [--actions 8] [--seed 0]

The model stands aside: the fast recorder (`tracegen.fast`, which reproduces debugpy's stops) answers every fine step, so
this measures the policy, not the weights. For the scripts of `bench/bench_session.py` (same programs, seed, breakpoints),
each Continue and Step Out is replayed as the session runs it with `NeuralDebugger(coarse_steps="fine")`: fine steps until
one arrives (a breakpoint line reached by a line event, an exception, the end, for Step Out a shorter stack), once as
plain Step Into steps, once as the steps `model.static.reach.fine_step` picks, and once as `coarse_steps="auto"` takes it
(one jump where `model.static.reach.no_target_ahead`, else those fine steps). It prints the model calls each took
(model calls: the time a user waits grows with them) and how many arrived where the real request stops.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_session import COARSE_REQUESTS, PROGRAMS, REQUESTS, random_script  # noqa: E402
from model.static.reach import FineStep, back_on_calling_line, fine_step, no_target_ahead  # noqa: E402
from protocol.debugger import Action, ActionKind, State  # noqa: E402
from tracegen.fast import ReplaySession, record_program  # noqa: E402

MAX_FINE = 400


def _where(state: State) -> tuple:
    return (state.reason, [(f.name, f.line) for f in state.frames], state.exit_code)


def _session(trace, breakpoints: list[int], prefix: list[ActionKind]) -> tuple[ReplaySession, State]:  # noqa: ANN001
    session = ReplaySession(trace, breakpoints)
    state = session.start()
    for kind in prefix:
        state = session.step(Action(kind=kind))
    return session, state


def run_by_steps(session: ReplaySession, state: State, kind: ActionKind, targets: set[int], policy: str) -> tuple[State, int]:
    """Fine steps from `state` until one arrives (the rule of `NeuralDebugger._run_by_steps`); the stop and the count."""
    start_depth = len(state.frames)
    for count in range(1, MAX_FINE + 1):
        fine = fine_step(session.trace.source, state, targets, step_out=kind is ActionKind.STEP_RETURN) if policy == "reach" else FineStep.plain()
        previous, state = state, session.step(Action(kind=fine.kind))
        top = state.top
        if state.finished or state.reason.value == "exception" or (top is not None and top.line in targets and not back_on_calling_line(previous, state)):
            return state, count
        if kind is ActionKind.STEP_RETURN and len(state.frames) < start_depth:
            return state, count
    return state, MAX_FINE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-v", action="store_true", help="print each request that did not arrive")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    totals = {policy: [0, 0, 0] for policy in ("into", "reach", "auto")}  # model calls, arrived, requests
    for program in sorted(PROGRAMS.glob("*.py")):
        script = random_script(program, rng, args.actions)  # the same draws as bench_session.py
        trace = record_program(path=program)
        prefix: list[ActionKind] = []
        for request in script.requests:
            kind = REQUESTS[request]
            session, state = _session(trace, script.breakpoints, prefix)
            if state.finished:
                break
            if request in COARSE_REQUESTS:
                real = session.step(Action(kind=kind))
                for policy in totals:
                    fine_session, start = _session(trace, script.breakpoints, prefix)
                    if policy == "auto" and no_target_ahead(trace.source, start, script.breakpoints, step_out=kind is ActionKind.STEP_RETURN):
                        stop, count = real, 1  # one jump, answered as the real request stops
                    else:
                        stop, count = run_by_steps(fine_session, start, kind, set(script.breakpoints), "into" if policy == "into" else "reach")
                    totals[policy][0] += count
                    totals[policy][1] += _where(stop) == _where(real)
                    if _where(stop) != _where(real) and "-v" in sys.argv:
                        print(program.name, script.breakpoints, request, "from", _where(start), "real", _where(real), policy, _where(stop))
                    totals[policy][2] += 1
            prefix.append(kind)
    for policy, (steps, arrived, requests) in totals.items():
        print(f"{policy:6s} {requests} Continue/Step Out requests: {steps} model calls ({steps / max(1, requests):.1f} each), "
              f"{arrived} arrived where the real request stops")
    return 0


if __name__ == "__main__":
    sys.exit(main())
