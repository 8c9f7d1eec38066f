"""Synthetic programs: CruxEval-style single functions (`crux`) and multi-function programs (`multi`).

`generate_program(rng)` draws one program from a seeded `random.Random`; the same generator
state always gives the same program (no global state). `filter.py` runs programs through the
fast recorder's sandbox and keeps those that are quick, deterministic and of bounded size.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from tracegen.synth.crux import CruxFunction, generate_function
from tracegen.synth.multi import MultiProgram, generate_multi

SynthKind = Literal["crux", "multi"]


@dataclass(frozen=True)
class SynthProgram:
    """A generated program: its full source (ending with a newline), its kind, and facts about it
    (for `crux`: the (type, method) pairs it uses; for `multi`: the features it exercises)."""

    source: str
    kind: SynthKind
    tags: frozenset[str] = field(default_factory=frozenset)


def generate_program(rng: random.Random, crux_fraction: float = 0.6) -> SynthProgram:
    """One synthetic program: a CruxEval-style function with probability `crux_fraction`, else a multi-function one."""
    if rng.random() < crux_fraction:
        fn: CruxFunction = generate_function(rng)
        return SynthProgram(fn.program, "crux", frozenset(f"{owner}.{m}" for owner, m in fn.methods))
    multi: MultiProgram = generate_multi(rng)
    return SynthProgram(multi.source, "multi", multi.features)


__all__ = ["SynthProgram", "SynthKind", "generate_program", "generate_function", "generate_multi"]
