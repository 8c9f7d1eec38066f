"""Recorded runs for the static analyses' tests: examples/ and seeded synthetic programs, each run by the fast recorder."""
from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from model.static.flow import FlowSet, next_locations
from protocol.debugger import Action, ActionKind, State
from tracegen.fast import RecordError, record_program, replay_to_end
from tracegen.trace import ProgramTrace
from tracegen.synth import generate_program

ROOT = Path(__file__).resolve().parent.parent


def recorded_programs(count: int, seed: int) -> Iterator[tuple[str, ProgramTrace]]:
    """(source, trace) of every examples/ program and `count` synthetic ones (seed `seed`) that record with events."""
    rng = random.Random(seed)
    sources = [p.read_text() for p in sorted((ROOT / "examples").glob("*.py"))]
    for source in sources + [generate_program(rng).source for _ in range(count)]:
        try:
            trace = record_program(source)
        except (RecordError, OSError, ValueError):
            continue
        if trace.events:
            yield source, trace


@dataclass(frozen=True)
class RecordedStep:
    """One recorded step of an all-`kind` walk: the stop before `previous` (None at the first), `previous`, the recorded
    `state` after it, and the control-flow grammar's `flow` from `previous`, which allows `state`."""

    source: str
    kind: ActionKind
    before: State | None
    previous: State
    state: State
    flow: FlowSet


def recorded_steps(sources: Iterable[str], kinds: Iterable[ActionKind], limit: int) -> Iterator[RecordedStep]:
    """Every step of each source's all-`kind` walk (at most `limit` actions, the fast recorder's stops) that the
    control-flow grammar allows (a walk's cut-off end is not; tests/test_flow.py checks the grammar itself)."""
    kinds = tuple(kinds)
    for source in sources:
        trace = record_program(source)
        for kind in kinds:
            states = replay_to_end(trace, [Action(kind=kind)] * limit)
            for before, previous, state in zip([None, *states], states, states[1:]):
                flow = next_locations(source, previous, Action(kind=kind))
                if not previous.finished and flow.allows(previous, state):
                    yield RecordedStep(source, kind, before, previous, state, flow)
