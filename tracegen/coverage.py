"""Type coverage: how much of what debugpy shows on real code the training generator ever produces.

Every local a stepIn session shows (the top frame's plain locals at each line stop in user code, as the
fast recorder reproduces debugpy) is classified by the type its repr tells (`protocol.repr_types.repr_kind`: int, float,
str, bool, None, list, tuple, dict, set, nested containers, user objects ``<__main__.X object at 0x?>``,
records ``Name(field=...)`` such as dataclasses and namedtuples, Counter, defaultdict, deque, ...).
Real code is the realworld set (`tracegen.realworld`: standard-library modules with their drivers), the
everyday set (``tracegen/everyday/``) and standard-library doctests (`DoctestSource`). A generator is a
``--sources`` spec recorded through the same filter as `tracegen synth`. The *coverage* of a generator
is the share of real code's locals whose type appears among the generator's.

    python -m tracegen.coverage --generator synthetic --generator synthetic,everyday --programs 200

prints a table per type and the coverage of each generator; ``--out FILE`` writes it all as JSON.
Nothing here judges values: it reads their reprs.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from protocol.repr_types import repr_kind as repr_type
from tracegen.trace import LINE, ProgramTrace

EVERYDAY_SET = Path(__file__).resolve().parent / "everyday"


def stop_locals(trace: ProgramTrace) -> Iterator[str]:
    """The reprs of the top frame's locals at every line stop in user code (what stepIn shows)."""
    for event in trace.events:
        if event.kind != LINE or not event.stack:
            continue
        fid, _line, lid = event.stack[0]
        info = trace.frames[fid]
        if getattr(info, "lib", False):
            continue
        yield from trace.locals_table[lid].values()


@dataclass
class Tally:
    """Locals by type for one body of programs."""

    name: str
    programs: int = 0
    failed: int = 0
    types: Counter[str] | None = None

    def add(self, reprs: Iterable[str]) -> None:
        self.types = self.types or Counter()
        self.types.update(repr_type(r) for r in reprs)

    @property
    def total(self) -> int:
        return sum((self.types or Counter()).values())


def real_programs(doctests: int, rng: random.Random) -> Iterator[tuple[str, str, str]]:
    """(body name, origin, source) of the real code: realworld long files, the everyday set, a sample of doctests."""
    from tracegen.realworld import DRIVERS, build_program
    from tracegen.sources import DoctestSource

    for module in sorted(DRIVERS):
        yield "realworld", module, build_program(module, DRIVERS[module]).single
    for path in sorted(EVERYDAY_SET.glob("*.py")):
        yield "everyday set", path.name, path.read_text(encoding="utf-8")
    pool = DoctestSource().programs
    for spec in rng.sample(pool, min(doctests, len(pool))):
        yield "stdlib doctests", spec.origin, spec.source


def measure_real(doctests: int, seed: int) -> dict[str, Tally]:
    from tracegen.fast import RecordError, record_program

    tallies: dict[str, Tally] = {}
    for body, _origin, source in real_programs(doctests, random.Random(seed)):
        tally = tallies.setdefault(body, Tally(body))
        try:
            trace = record_program(source)
        except RecordError:
            tally.failed += 1
            continue
        tally.programs += 1
        tally.add(stop_locals(trace))
    return tallies


def measure_generator(spec: str, programs: int, seed: int) -> Tally:
    """Locals by type of `programs` kept programs drawn from the sources `spec` (the `tracegen synth` filter)."""
    from tracegen.dataset import record_filtered
    from tracegen.sources import parse_sources
    from tracegen.synth.filter import FilterPolicy

    sources = parse_sources(spec)
    rng = random.Random(seed)
    tally = Tally(spec)
    while tally.programs < programs:
        trace, _reason = record_filtered(sources.draw(rng), FilterPolicy())
        if trace is None:
            tally.failed += 1
            continue
        tally.programs += 1
        tally.add(stop_locals(trace))
    return tally


def coverage(real: Counter[str], produced: Iterable[str]) -> float:
    """The share of real locals whose type is among `produced` (0-1)."""
    kinds = set(produced)
    total = sum(real.values())
    return sum(n for t, n in real.items() if t in kinds) / total if total else 0.0


def report(real: dict[str, Tally], generators: list[Tally]) -> dict[str, object]:
    everything: Counter[str] = Counter()
    for tally in real.values():
        everything.update(tally.types or Counter())
    result: dict[str, object] = {
        "real": {name: {"programs": t.programs, "failed": t.failed, "locals": t.total, "types": dict((t.types or Counter()).most_common())}
                 for name, t in real.items()},
        "generators": {},
    }
    for gen in generators:
        produced = set(gen.types or Counter())
        result["generators"][gen.name] = {  # type: ignore[index]
            "programs": gen.programs, "rejected": gen.failed, "locals": gen.total, "types": dict((gen.types or Counter()).most_common()),
            "coverage": {name: round(coverage(t.types or Counter(), produced), 4) for name, t in real.items()}
            | {"all real code": round(coverage(everything, produced), 4)},
        }
    return result


def markdown(result: dict[str, object]) -> str:
    real: dict[str, dict] = result["real"]  # type: ignore[assignment]
    gens: dict[str, dict] = result["generators"]  # type: ignore[assignment]
    totals: Counter[str] = Counter()
    for body in real.values():
        totals.update(body["types"])
    all_locals = sum(totals.values())
    head = "| type | real code locals | share | " + " | ".join(f"`{g}`" for g in gens) + " |"
    lines = [head, "|---|---|---|" + "---|" * len(gens)]
    for kind, n in totals.most_common():
        cells = [("yes" if kind in g["types"] else "**no**") + f" ({g['types'].get(kind, 0)})" for g in gens.values()]
        lines.append(f"| {kind} | {n} | {100 * n / all_locals:.1f}% | " + " | ".join(cells) + " |")
    lines += ["", "| coverage of | locals | " + " | ".join(f"`{g}`" for g in gens) + " |", "|---|---|" + "---|" * len(gens)]
    for name in [*real, "all real code"]:
        n = real[name]["locals"] if name in real else all_locals
        lines.append(f"| {name} | {n} | " + " | ".join(f"{100 * g['coverage'][name]:.1f}%" for g in gens.values()) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracegen.coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--generator", action="append", default=[], help="a --sources spec (repeatable); default: synthetic and synthetic,everyday")
    parser.add_argument("--programs", type=int, default=200, help="kept programs per generator (default 200)")
    parser.add_argument("--doctests", type=int, default=150, help="stdlib doctest programs sampled (default 150)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    specs = args.generator or ["synthetic", "synthetic,everyday"]
    try:
        generators = [measure_generator(spec, args.programs, args.seed) for spec in specs]
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    real = measure_real(args.doctests, args.seed)
    result = report(real, generators)
    result["settings"] = {"generators": specs, "programs": args.programs, "doctests": args.doctests, "seed": args.seed}
    print(markdown(result))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


__all__ = ["repr_type", "stop_locals", "coverage", "measure_real", "measure_generator", "report", "markdown", "Tally"]

if __name__ == "__main__":
    raise SystemExit(main())
