"""Recorded runs for the static analyses' tests: examples/ and seeded synthetic programs, each run by the fast recorder."""
from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from tracegen.fast import RecordError, record_program
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
