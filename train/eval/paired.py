"""Two runs of one evaluation compared item by item (a paired test), not by their totals alone.

Two models asked the same questions mostly agree; what tells them apart are the items only one gets
right. With `only_a` and `only_b` such items, the exact two-sided sign test (McNemar's exact test) gives
the probability of a split at least this uneven if neither model were better. On a few hundred states,
two totals three points apart can be noise or not: this says which. Reads each run's
``predictions.jsonl``: next-state runs (an item per trajectory, step and action, right when ``matched``)
and CruxEval runs (an item per problem id, right when ``passed``).

    neural-debugger eval paired runs/shipped/next-state runs/candidate/next-state
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PREDICTIONS = "predictions.jsonl"


class PairedError(ValueError):
    """Runs that cannot be compared: no predictions, lines of no known kind, no item in common."""


@dataclass(frozen=True)
class Outcome:
    right: bool
    group: str  # the item's action for next-state runs, "" for CruxEval


@dataclass
class Split:
    """How the items in common split between the two runs."""

    items: int = 0
    both: int = 0
    only_a: int = 0
    only_b: int = 0

    def add(self, a: bool, b: bool) -> None:
        self.items += 1
        self.both += a and b
        self.only_a += a and not b
        self.only_b += b and not a

    @property
    def right_a(self) -> int:
        return self.both + self.only_a

    @property
    def right_b(self) -> int:
        return self.both + self.only_b

    @property
    def p_value(self) -> float:
        return sign_test(self.only_a, self.only_b)


@dataclass
class Comparison:
    a: str
    b: str
    total: Split
    by_group: dict[str, Split] = field(default_factory=dict)
    only_in_a: int = 0  # items of one run the other does not have (left out of the comparison)
    only_in_b: int = 0

    def as_dict(self) -> dict[str, Any]:
        def split(s: Split) -> dict[str, Any]:
            return {**asdict(s), "right_a": s.right_a, "right_b": s.right_b, "p_value": round(s.p_value, 4)}

        return {"a": self.a, "b": self.b, "total": split(self.total), "by_group": {k: split(v) for k, v in self.by_group.items()},
                "only_in_a": self.only_in_a, "only_in_b": self.only_in_b}  # fmt: skip


def sign_test(only_a: int, only_b: int) -> float:
    """Exact two-sided sign test: P(a split at least as uneven as `only_a` : `only_b` | each side 1/2)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _outcome(line: dict[str, Any]) -> tuple[tuple[Any, ...], Outcome]:
    if {"trajectory", "step", "action", "matched"} <= line.keys():
        return (line["trajectory"], line["step"], line["action"]), Outcome(bool(line["matched"]), str(line["action"]))
    if {"id", "passed"} <= line.keys():
        return (line["id"],), Outcome(bool(line["passed"]), "")
    raise PairedError(f"a line of neither a next-state run (trajectory, step, action, matched) nor a CruxEval run (id, passed): "
                      f"{sorted(line)[:8]}")


def read_outcomes(run: Path) -> dict[tuple[Any, ...], Outcome]:
    """Each item of a run's predictions.jsonl and whether it was right (PairedError naming what is wrong)."""
    path = run / PREDICTIONS if run.is_dir() else run
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PairedError(f"cannot read {path}: {exc.strerror or exc}") from None
    out: dict[tuple[Any, ...], Outcome] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            raise PairedError(f"{path}:{number}: not JSON") from None
        if not isinstance(line, dict):
            raise PairedError(f"{path}:{number}: not a JSON object")
        key, outcome = _outcome(line)
        out[key] = outcome
    if not out:
        raise PairedError(f"{path}: no predictions")
    return out


def compare(a: Path, b: Path) -> Comparison:
    """Run `a` against run `b` on the items both hold."""
    first, second = read_outcomes(a), read_outcomes(b)
    common = [key for key in first if key in second]
    if not common:
        raise PairedError(f"{a} and {b} share no item: were they run on the same questions (set, --limit, --seed)?")
    result = Comparison(str(a), str(b), Split(), only_in_a=len(first) - len(common), only_in_b=len(second) - len(common))
    for key in common:
        x, y = first[key], second[key]
        result.total.add(x.right, y.right)
        if x.group:
            result.by_group.setdefault(x.group, Split()).add(x.right, y.right)
    return result


def report(result: Comparison) -> list[str]:
    """The comparison as lines for a terminal."""
    t = result.total
    lines = [f"A {result.a}: {t.right_a}/{t.items} ({100 * t.right_a / t.items:.1f}%)",
             f"B {result.b}: {t.right_b}/{t.items} ({100 * t.right_b / t.items:.1f}%)",
             f"right in both {t.both}, only A {t.only_a}, only B {t.only_b}: exact sign test p = {t.p_value:.3f}"]
    for group, s in sorted(result.by_group.items()):
        lines.append(f"  {group}: A {s.right_a}/{s.items}, B {s.right_b}/{s.items}, only A {s.only_a}, only B {s.only_b}, p = {s.p_value:.3f}")
    if result.only_in_a or result.only_in_b:
        lines.append(f"left out: {result.only_in_a} item(s) only in A, {result.only_in_b} only in B")
    return lines
