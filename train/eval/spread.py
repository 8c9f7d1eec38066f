"""The spread of a ranked figure over sampling seeds.

A figure whose answers are ranked samples (`model.decode.rerank`: CruxEval-I's eight drawn arguments, the
four answers after a coarse step) is one draw of a random variable: the same decoding with other
samples (`eval ... --sample-seed N`, a seed per sampled answer) scores a few problems more or less.
This module reads the runs of one figure under several seeds and reports each, their mean and range,
so a headline figure is a mean with its spread rather than one lucky or unlucky draw.

Layout under a results folder: the headline run of a figure in ``<figure>/summary.json`` (e.g.
``cruxeval-input``), the same figure with other seeds in ``seeds/<figure>-s<seed>/summary.json``.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from train.eval.results_io import measured_here

FIGURES: dict[str, str] = {  # results folder -> what the figure is
    "cruxeval-input": "CruxEval-I (inv_step_call)",
    "cruxeval-output": "CruxEval-O (step_return)",
    "cruxeval-output-breakpoint": "CruxEval-O (breakpoint)",
    "next-state": "next-state exact match",
}
_SEED_FOLDER = re.compile(r"^(?P<figure>.+)-s(?P<seed>\d+)$")


class SpreadError(ValueError):
    """Runs that cannot be compared (another figure, model or size) or a summary that cannot be read."""


@dataclass(frozen=True)
class SeedRun:
    """One run of a figure: its sampling seed and how many of its questions it got right."""

    seed: int | None  # None: a run from before seeds were recorded (one generator per process)
    right: int
    total: int
    per_draw: bool

    @property
    def percent(self) -> float:
        return 100.0 * self.right / self.total if self.total else 0.0


@dataclass(frozen=True)
class Spread:
    """The runs of one figure under different seeds."""

    figure: str
    runs: tuple[SeedRun, ...]

    @property
    def mean(self) -> float:
        return sum(r.percent for r in self.runs) / len(self.runs)

    @property
    def sd(self) -> float:
        """Sample standard deviation of the percentages (0 for a single run)."""
        if len(self.runs) < 2:
            return 0.0
        m = self.mean
        return math.sqrt(sum((r.percent - m) ** 2 for r in self.runs) / (len(self.runs) - 1))

    @property
    def mean_right(self) -> float:
        return sum(r.right for r in self.runs) / len(self.runs)

    @property
    def low(self) -> float:
        return min(r.percent for r in self.runs)

    @property
    def high(self) -> float:
        return max(r.percent for r in self.runs)

    def as_dict(self) -> dict[str, Any]:
        return {"figure": self.figure, "mean": round(self.mean, 2), "sd": round(self.sd, 2), "mean_right": round(self.mean_right, 2),
                "min": round(self.low, 2), "max": round(self.high, 2),
                "runs": [{"seed": r.seed, "right": r.right, "total": r.total, "percent": round(r.percent, 2), "seed_per_draw": r.per_draw}
                         for r in self.runs]}  # fmt: skip


def seed_run(summary: dict[str, Any]) -> SeedRun:
    """A run's seed and score from its summary.json (CruxEval: passed of n; next-state: exact states of all)."""
    seed = summary.get("sample_seed")
    per_draw = bool(summary.get("seed_per_draw", False))
    if "passed" in summary and "n" in summary:
        return SeedRun(seed, int(summary["passed"]), int(summary["n"]), per_draw)
    overall = summary.get("overall")
    if isinstance(overall, dict) and "state" in overall and "stops" in overall:
        stops = int(overall["stops"])
        return SeedRun(seed, round(float(overall["state"]) * stops), stops, per_draw)
    raise SpreadError("not a CruxEval or next-state summary (no passed/n, no overall state/stops)")


def spread_of(figure: str, summaries: list[dict[str, Any]]) -> Spread:
    """The spread of runs of one figure; refuses runs of different models, question sets or seeds repeated."""
    if not summaries:
        raise SpreadError(f"no runs of {figure}")
    runs = [seed_run(s) for s in summaries]
    if len({r.total for r in runs}) > 1:
        raise SpreadError(f"the runs of {figure} answer different numbers of questions: {sorted({r.total for r in runs})}")
    models = {s.get("model") for s in summaries}
    if len(models) > 1:
        raise SpreadError(f"the runs of {figure} are of different models: {sorted(map(str, models))}")
    seeds = [r.seed for r in runs if r.seed is not None]
    if len(seeds) != len(set(seeds)):
        raise SpreadError(f"the runs of {figure} repeat a seed: {seeds}")
    return Spread(figure, tuple(sorted(runs, key=lambda r: (r.seed is None, r.seed or 0))))


def _read(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SpreadError(f"cannot read {path}: {exc}") from None


def collect(results: Path) -> list[Spread]:
    """The spread of each figure that has runs under other seeds in `results`/seeds (headline run included); runs of
    weights that have left their model folder (`results_io.measured_here`) are left out."""
    results = Path(results)
    extra: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((results / "seeds").glob("*/summary.json")):
        match = _SEED_FOLDER.match(path.parent.name)
        if match and match["figure"] in FIGURES and measured_here(run := _read(path)):
            extra.setdefault(match["figure"], []).append(run)
    spreads = []
    for figure in FIGURES:
        if figure not in extra:
            continue
        headline = results / figure / "summary.json"
        runs = [run for run in ([_read(headline)] if headline.is_file() else []) if measured_here(run)] + extra[figure]
        spreads.append(spread_of(figure, runs))
    return spreads


def spread_lines(spreads: list[Spread]) -> list[str]:
    """A markdown table: each figure's runs by seed, their mean, standard deviation and range."""
    if not spreads:
        return []
    lines = ["| figure | runs (seed: right/total) | mean | sd | range |", "|---|---|---|---|---|"]
    for s in spreads:
        runs = ", ".join(f"{'-' if r.seed is None else r.seed}: {r.right}/{r.total}" for r in s.runs)
        lines.append(f"| {FIGURES.get(s.figure, s.figure)} | {runs} | **{s.mean:.2f}** ({s.mean_right:.1f}/{s.runs[0].total}) | {s.sd:.2f} | {s.low:.2f}-{s.high:.2f} |")
    return lines


def spread_section(spreads: list[Spread], heading: str = "##") -> list[str]:
    """The markdown section of RESULTS.md and the model card: what the spread is, then the table (nothing without spreads)."""
    if not spreads:
        return []
    return [f"{heading} Spread over sampling seeds", "",
            "A ranked answer is one draw: the same decoding with other samples (`--sample-seed`, a seed per sampled answer) scores "
            "a few questions more or less. Each row holds the headline run and the same figure under other seeds "
            "(`train/eval/spread.py`; their summaries are in `seeds/` of the results folder).", "", *spread_lines(spreads), ""]  # fmt: skip
