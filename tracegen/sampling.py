"""Sample training trajectories from one recorded run with the paper's policy (Table A.1).

Forward trajectories: each one picks, with equal probability, one of two action policies:

- ``mixed``: step_into 0.35, step_over 0.1, step_return 0.2, breakpoint 0.1, continue 0.05
  (normalized to sum to 1); it also gets 0-2 session breakpoints on lines the program runs, which
  ``continue`` runs to;
- ``steps``: step_into 0.5, step_over 0.5 (no session breakpoints).

A ``breakpoint`` action targets a line the program still runs after the current stop (any line it
runs when none is left), with that line's text as the action's ``source``. A trajectory ends at
``exited`` or after ``max_steps`` actions.

Inverse trajectories (a ``inverse_fraction`` share of the ``n``): start at a random state of the
later half of the step-into chain and walk back with inverse actions chosen uniformly among the
available ones (`tracegen.trees.InverseChain`), until the entry or ``max_steps``. Half of them
(``RETURN_START_FRACTION``) start on a calling line just after a return, where ``inv_step_call``
predicts the arguments of the call that returned: CruxEval-I's posing. `sample_hidden_calls` samples
only those, with the arguments hidden and ``inv_step_call`` first (``tracegen synth --posing hidden-call``).

Every state is normalized (memory addresses as `` at 0x?``). `Trajectory.meta` records the policy,
the seed-independent trajectory number and the start index. Deterministic for a given ``rng`` state.
"""
from __future__ import annotations

import random
from collections.abc import Sequence

from protocol.debugger import Action, ActionKind, Step, Trajectory
from tracegen.fast import ReplaySession
from tracegen.posing import hide_call_arguments
from tracegen.trace import LINE, ProgramTrace
from tracegen.trees import InverseChain

MIXED_POLICY: dict[ActionKind, float] = {
    ActionKind.STEP_INTO: 0.35,
    ActionKind.STEP_OVER: 0.1,
    ActionKind.STEP_RETURN: 0.2,
    ActionKind.BREAKPOINT: 0.1,
    ActionKind.CONTINUE: 0.05,
}
STEPS_POLICY: dict[ActionKind, float] = {ActionKind.STEP_INTO: 0.5, ActionKind.STEP_OVER: 0.5}
POLICIES: dict[str, dict[ActionKind, float]] = {"mixed": MIXED_POLICY, "steps": STEPS_POLICY}
# Chance that a `mixed` trajectory of a multi-file program gets a session breakpoint in one of its modules.
MODULE_BREAKPOINT_CHANCE = 0.5
# Share of inverse trajectories that start on a calling line just after a return (CruxEval-I's posing).
RETURN_START_FRACTION = 0.5


def sample_trajectories(
    trace: ProgramTrace,
    rng: random.Random,
    n: int,
    max_steps: int,
    *,
    inverse_fraction: float = 0.25,
    max_session_breakpoints: int = 2,
) -> list[Trajectory]:
    """``n`` trajectories (forward and inverse mixed) of one trace; see the module docstring."""
    if n <= 0 or not trace.events:
        return []
    chain: InverseChain | None = None
    out: list[Trajectory] = []
    for number in range(n):
        if rng.random() < inverse_fraction:
            if chain is None:
                chain = InverseChain(trace)
            traj = sample_inverse(trace, chain, rng, max_steps)
            if traj is not None:
                traj.meta["number"] = str(number)
                out.append(traj)
                continue
        traj = sample_forward(trace, rng, max_steps, max_session_breakpoints=max_session_breakpoints)
        traj.meta["number"] = str(number)
        out.append(traj)
    return out


def sample_forward(trace: ProgramTrace, rng: random.Random, max_steps: int, *, max_session_breakpoints: int = 2,
                   policy: str | None = None) -> Trajectory:
    """One forward trajectory with the ``mixed`` or ``steps`` policy (chosen evenly unless given)."""
    name = policy or rng.choice(sorted(POLICIES))
    weights = POLICIES[name]
    kinds = list(weights)
    probs = [weights[k] for k in kinds]
    executed = trace.executed_lines
    breakpoints: list[int] = []
    if name == "mixed" and executed and max_session_breakpoints > 0:
        count = rng.randint(0, min(max_session_breakpoints, len(executed)))
        breakpoints = sorted(rng.sample(executed, count))
    file_breakpoints: list[tuple[str, int]] = []
    module_lines = _module_lines(trace) if name == "mixed" and max_session_breakpoints > 0 else []
    if module_lines and rng.random() < MODULE_BREAKPOINT_CHANCE:
        file_breakpoints = [rng.choice(module_lines)]
    session = ReplaySession(trace, [*breakpoints, *file_breakpoints])
    initial = session.start()
    steps: list[Step] = []
    state = initial
    while not state.finished and len(steps) < max_steps:
        kind = rng.choices(kinds, probs)[0]
        action = _make_action(trace, session, kind, rng, executed)
        state = session.step(action)
        steps.append(Step(action=action, state=state.normalized()))
    return Trajectory(
        program=trace.source, path=trace.path, breakpoints=breakpoints, file_breakpoints=file_breakpoints, direction="forward",
        modules=dict(trace.module_sources),
        initial=initial.normalized(), steps=steps, ending=trace.end.ending if state.finished else None,
        meta={"policy": name, "weights": _weights_text(weights)},
    )


def sample_inverse(trace: ProgramTrace, chain: InverseChain, rng: random.Random, max_steps: int) -> Trajectory | None:
    """One inverse trajectory from a late chain state backwards (None when the chain is too short)."""
    last = _last_start(chain)
    if last < 1:
        return None
    returns = _return_starts(chain)
    if returns and rng.random() < RETURN_START_FRACTION:
        start = rng.choice(returns)  # on a calling line just after a return: inv_step_call predicts the arguments
    else:
        start = rng.randint(max(1, last // 2), last)
    return walk_back(trace, chain, start, rng, max_steps)


def sample_hidden_calls(trace: ProgramTrace, rng: random.Random, n: int, max_steps: int) -> list[Trajectory]:
    """Up to ``n`` inverse trajectories posed like CruxEval-I (`tracegen.posing`): each starts on a module-level
    calling line just after its call returned, with the call's arguments hidden, and its first action is
    ``inv_step_call`` (the question CruxEval-I asks); distinct starts, in random order."""
    if n <= 0 or not trace.events:
        return []
    chain = InverseChain(trace)
    starts = _return_starts(chain)
    rng.shuffle(starts)
    out: list[Trajectory] = []
    for number, start in enumerate(starts):
        traj = walk_back(trace, chain, start, rng, max_steps, first=ActionKind.INV_STEP_CALL)
        posed = hide_call_arguments(traj) if traj is not None else None
        if posed is None:
            continue
        posed.meta["number"] = str(number)
        out.append(posed)
        if len(out) == n:
            break
    return out


def _last_start(chain: InverseChain) -> int:
    """The last chain state an inverse trajectory may start from (not the exit)."""
    last = len(chain) - 1
    return last - 1 if chain.states[last].finished else last


def _return_starts(chain: InverseChain) -> list[int]:
    """Chain states on a calling line just after a return (where ``inv_step_call`` predicts the arguments)."""
    return [k for k in range(1, _last_start(chain) + 1) if chain.returned_frame(k) is not None]


def walk_back(trace: ProgramTrace, chain: InverseChain, start: int, rng: random.Random, max_steps: int, *,
              first: ActionKind | None = None) -> Trajectory | None:
    """The inverse trajectory from chain state ``start`` backwards, actions drawn uniformly (None if none applies);
    `first`: the first action must be this one (None when it does not apply at ``start``)."""
    k = start
    steps: list[Step] = []
    while k > 0 and len(steps) < max_steps:
        options = chain.available(k)
        if first is not None and not steps:
            options = [o for o in options if o is first]
        if not options:
            break
        kind = rng.choice(options)
        target = chain.inverse(k, kind)
        assert target is not None
        k = target
        steps.append(Step(action=Action(kind=kind), state=chain.states[k].normalized()))
    if not steps:
        return None
    return Trajectory(
        program=trace.source, path=trace.path, breakpoints=[], direction="inverse",
        modules=dict(trace.module_sources),
        initial=chain.states[start].normalized(), steps=steps, ending=trace.end.ending,
        meta={"policy": "inverse-uniform", "start": str(start)},
    )


def _make_action(trace: ProgramTrace, session: ReplaySession, kind: ActionKind, rng: random.Random,
                 executed: Sequence[int]) -> Action:
    if kind is not ActionKind.BREAKPOINT:
        return Action(kind=kind)
    later = _lines_after(trace, session.position)
    pool = later or list(executed) or [1]
    line = rng.choice(pool)
    return Action(kind=kind, line=line, source=trace.source_line(line))


def _module_lines(trace: ProgramTrace) -> list[tuple[str, int]]:
    """``(module path, line)`` with a line event in a user module whose source the trace keeps, sorted."""
    if not trace.module_sources:
        return []
    frames = trace.frames
    found = {(frames[ev.fid].file, ev.line) for ev in trace.events
             if ev.kind == LINE and frames[ev.fid].file in trace.module_sources and not frames[ev.fid].lib and ev.line > 0}
    return sorted(found)  # type: ignore[arg-type]


def _lines_after(trace: ProgramTrace, position: int) -> list[int]:
    """Program lines with a line event after event ``position``, sorted."""
    frames = trace.frames
    lines = {ev.line for ev in trace.events[position + 1:] if ev.kind == LINE and frames[ev.fid].file is None}
    return sorted(lines)


def _weights_text(weights: dict[ActionKind, float]) -> str:
    total = sum(weights.values())
    return ",".join(f"{k.value}={v / total:.4f}" for k, v in weights.items())
