"""The model alone next to the full decoding: one table from the runs of a results folder.

A figure run with ``--decoding plain`` (`model.decoding`: well-formed states and static control flow, one
greedy answer, no companions) lives beside its full-decoding run, in ``<figure>-plain/`` (`make results`
writes ``next-state-plain/``, ``fidelity-plain/``, ``fidelity-synth-plain/``, ``realworld-*-plain/`` and,
with ``PLAIN_CRUXEVAL=1``, ``cruxeval-*-plain/``). `alone_lines` renders the pairs found: what the weights
know on their own, and what the decode-time rules add. `train/eval/plots.py` (RESULTS.md) and `train/eval/model_card.py`
print it.
"""
from __future__ import annotations

from typing import Any

PLAIN_SUFFIX = "-plain"
FIGURES: tuple[tuple[str, str], ...] = (
    ("next-state", "next-state, held-out synthetic (teacher-forced)"),
    ("fidelity-synth", "fidelity, held-out synthetic programs"),
    ("fidelity", "fidelity, examples/ (hand-written)"),
    ("realworld-long", "real-world long files (free-running)"),
    ("realworld-projects", "real-world two-file projects (free-running)"),
    ("everyday", "everyday programs (free-running)"),
    ("realcode", "real code, dev slice (free-running)"),
    ("cruxeval-input", "CruxEval-I (inv_step_call)"),
    ("cruxeval-output", "CruxEval-O (step_return)"),
    ("cruxeval-output-breakpoint", "CruxEval-O (breakpoint)"),
)


def _cell(summary: dict[str, Any]) -> str:
    """A run's figure: pass@1 for CruxEval, else location / whole state (percent)."""
    if "pass@1" in summary:
        return f"pass@1 {summary['pass@1']:.1f}"
    overall = summary.get("overall") or {}
    return f"{100 * overall.get('location', 0):.1f} / {100 * overall.get('state', 0):.1f}"


def _size(summary: dict[str, Any]) -> str:
    return str(summary["n"]) if "n" in summary else str((summary.get("overall") or {}).get("stops", "?"))


def alone_lines(summaries: dict[str, dict[str, Any]]) -> list[str]:
    """A markdown section (title, note, table) of every figure run both ways; [] when none was."""
    rows = []
    for name, label in FIGURES:
        full, plain = summaries.get(name), summaries.get(name + PLAIN_SUFFIX)
        if full is None or plain is None:
            continue
        rows.append(f"| {label} | {_size(full)} | {_cell(full)} | {_cell(plain)} |")
    if not rows:
        return []
    return ["## The model alone next to the full decoding", "",
            "Full: every decode-time rule (`model/decoding.py`: frame names, value kinds, known arguments, line effects, "
            "ranked answers with argument evidence and the stale penalty, companion models). Model alone: `--decoding plain`, "
            "the grammar of well-formed states and static control flow, one greedy answer. Cells: location / whole state in "
            "percent (CruxEval: pass@1).", "",
            "| figure | stops (n) | full decoding | model alone |", "|---|---|---|---|", *rows, ""]  # fmt: skip
