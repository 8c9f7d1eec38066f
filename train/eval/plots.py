"""Plots (PNG) and a markdown results table from the evaluation summaries under a results folder.

Reads (whatever exists of): ``cruxeval-output/``, ``cruxeval-output-breakpoint/``,
``cruxeval-input/`` (the shipped model), ``cruxeval-oracle-output/``, ``cruxeval-oracle-input/``
(the recorder: a check of posing and scoring) and ``fidelity/`` (each holding ``summary.json``).
Writes ``cruxeval.png``, ``fidelity_by_action.png``, ``fidelity_by_horizon.png`` and
``RESULTS.md``. The paper's numbers are constants below (Beck et al. 2026, as quoted in DESIGN.md);
every number of ours comes from a summary file.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from train.eval.alone import alone_lines
from train.eval.results_io import measured_here
from train.eval.spread import Spread, collect, spread_section

# CruxEval pass@1 (greedy), Beck, Gehring, Kossen, Synnaeve, "Towards a Neural Debugger for Python" (arXiv 2603.09951).
PAPER_CRUXEVAL: dict[str, dict[str, float]] = {
    "1.8B from scratch, 150B tokens": {"input": 53.6, "output": 48.0, "output-breakpoint": 57.7},
    "32B CWM fine-tuned, 50B tokens": {"input": 66.5, "output": 77.9, "output-breakpoint": 83.2},
}
PAPER_FIDELITY_NOTE = "the paper reports >90% next-state exact match for the 32B model on step_into, step_over, step_return and breakpoint"
TASKS: dict[str, str] = {"input": "input (inv_step_call)", "output": "output (step_return)", "output-breakpoint": "output (breakpoint)"}
ACTION_ORDER = ("step_into", "step_over", "step_return", "breakpoint", "continue")


def load_summaries(results: Path) -> dict[str, dict[str, Any]]:
    """Every ``<name>/summary.json`` under `results`, by folder name."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(results).glob("*/summary.json")):
        try:
            found[path.parent.name] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return found


def split_by_weights(summaries: dict[str, dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(the summaries of the weights their model folder holds now, those of earlier weights in that folder)."""
    current = {name: s for name, s in summaries.items() if measured_here(s)}
    return current, {name: s for name, s in summaries.items() if name not in current}


def earlier_lines(earlier: dict[str, dict[str, Any]]) -> list[str]:
    """A section listing the figures measured on weights that have since left their folder (not rerun yet)."""
    if not earlier:
        return []
    lines = ["## Not rerun yet: figures of an earlier model", "",
             "These runs measured weights that their model folder no longer holds (a newer model was shipped there since; "
             "`model_sha256` in each summary names the weights). They are kept for reference until `make results` reruns them.", "",
             "| run | model folder (earlier weights) | headline |", "|---|---|---|"]  # fmt: skip
    for name, summary in earlier.items():
        lines.append(f"| `{name}` | `{summary.get('model')}` ({summary.get('model_sha256')}) | {_headline(summary)} |")
    return lines + [""]


def _headline(summary: dict[str, Any]) -> str:
    if "pass@1" in summary:
        return f"pass@1 {_cell(summary)}"
    overall = summary.get("overall")
    if isinstance(overall, dict) and "state" in overall:
        return f"whole state {100 * overall['state']:.1f}%, location {100 * overall.get('location', 0):.1f}% ({overall.get('stops')} stops)"
    return "-"


def _ours(summaries: dict[str, dict[str, Any]], prefix: str) -> dict[str, dict[str, Any]]:
    return {task: summaries[f"{prefix}{task}"] for task in TASKS if f"{prefix}{task}" in summaries}


def plot_cruxeval(summaries: dict[str, dict[str, Any]], out: Path) -> Path | None:
    """Grouped bars: pass@1 per task for the paper's models and ours."""
    ours = _ours(summaries, "cruxeval-")
    if not ours:
        return None
    plt = _pyplot()
    rows = [(name, values) for name, values in PAPER_CRUXEVAL.items()]
    rows.append(("ours (" + _model_label(next(iter(ours.values()))) + ")", {t: s["pass@1"] for t, s in ours.items()}))
    fig, ax = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / len(rows)
    for i, (label, values) in enumerate(rows):
        xs = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(TASKS))]
        heights = [values.get(task, 0.0) for task in TASKS]
        bars = ax.bar(xs, heights, width, label=label)
        for x, h, task in zip(xs, heights, TASKS):
            ax.annotate(f"{h:.1f}" if task in values else "n/a", (x, h), ha="center", va="bottom", fontsize=7)
        _ = bars
    ax.set_xticks(range(len(TASKS)), list(TASKS.values()))
    ax.set_ylabel("CruxEval pass@1 (%)")
    ax.set_ylim(0, 100)
    ax.set_title("CruxEval pass@1: the paper's models and ours")
    ax.legend(fontsize=8, loc="upper left")
    return _save(fig, out / "cruxeval.png")


def plot_fidelity_by_action(summary: dict[str, Any], out: Path) -> Path:
    """Bars: exact match of location, locals and the whole state, per action type."""
    plt = _pyplot()
    kinds = [k for k in ACTION_ORDER if k in summary["by_action"]] + [k for k in summary["by_action"] if k not in ACTION_ORDER]
    fig, ax = plt.subplots(figsize=(8, 4))
    metrics = ("location", "locals", "state")
    width = 0.8 / len(metrics)
    for i, metric in enumerate(metrics):
        xs = [j + (i - 1) * width for j in range(len(kinds))]
        ax.bar(xs, [100 * summary["by_action"][k][metric] for k in kinds], width, label=metric)
    ax.set_xticks(range(len(kinds)), [f"{k}\n(n={summary['by_action'][k]['stops']})" for k in kinds])
    ax.set_ylabel("next-state exact match (%)")
    ax.set_ylim(0, 105)
    ax.axhline(90, color="grey", linestyle=":", linewidth=1, label="paper, 32B: >90%")
    ax.set_title(f"Next-state fidelity per action ({_model_label(summary)}, teacher-forced)")
    ax.legend(fontsize=8)
    return _save(fig, out / "fidelity_by_action.png")


def plot_fidelity_by_horizon(summary: dict[str, Any], out: Path) -> Path:
    """Lines: exact match against how many line events the action skips (the paper's Figure 8)."""
    plt = _pyplot()
    labels = list(summary["by_horizon"])
    fig, ax = plt.subplots(figsize=(7, 4))
    for metric in ("location", "locals", "state"):
        ax.plot(labels, [100 * summary["by_horizon"][b][metric] for b in labels], marker="o", label=metric)
    ax.set_xticks(range(len(labels)), [f"{b}\n(n={summary['by_horizon'][b]['stops']})" for b in labels])
    ax.set_xlabel("horizon: line events skipped by the action")
    ax.set_ylabel("next-state exact match (%)")
    ax.set_ylim(0, 105)
    ax.set_title(f"Accuracy vs prediction horizon ({_model_label(summary)})")
    ax.legend(fontsize=8)
    return _save(fig, out / "fidelity_by_horizon.png")


def _decoding_note(ours: dict[str, dict[str, Any]]) -> str:
    """How our answers were decoded: greedy, except where the runs drew several answers and kept the most likely."""
    calls = int((ours.get("input") or {}).get("call_candidates") or 1)
    evidence = float((ours.get("input") or {}).get("evidence_weight") or 0)
    coarse = max((int(v.get("coarse_candidates") or 1) for k, v in ours.items() if k != "input"), default=1)
    less = f", less {evidence:g} per use of an argument in f's body that its value contradicts (`model/decode/arg_evidence.py`)" if evidence else ""
    companions = len((ours.get("input") or {}).get("companions") or [])
    drawn = (f"{calls} answers drawn by each of {companions + 1} models (the shipped one and its companion"
             f"{'s' if companions > 1 else ''}, `model/backends/ensemble.py`), ranked by the mean log-probability under all"
             if companions else f"{calls} drawn answers")  # fmt: skip
    ranked = ([f"the input answer (`inv_step_call`): the most likely of {drawn}{less}"] if calls > 1 else []) + \
             ([f"the stops after `step_return` and a breakpoint: the most likely of {coarse}"] if coarse > 1 else [])  # fmt: skip
    if not ranked:
        return "Ours decodes greedily. "
    return f"Ours decodes greedily, except {'; '.join(ranked)} (the greedy one and samples; `model/decode/rerank.py`). "


def results_markdown(summaries: dict[str, dict[str, Any]], images: tuple[str, ...] = ("cruxeval.png", "fidelity_by_action.png", "fidelity_by_horizon.png"),
                     spreads: list[Spread] | None = None, earlier: dict[str, dict[str, Any]] | None = None) -> str:  # fmt: skip
    """RESULTS.md: the CruxEval table (paper beside ours), the oracle check, the spread over sampling seeds, the fidelity
    tables; `earlier`: runs of weights no longer in their folder, listed apart."""
    lines = ["# Results", "", "Generated by `make results` (`train/eval/plots.py`) from the `summary.json` files in this folder; do not edit by hand.", ""]
    ours = _ours(summaries, "cruxeval-")
    lines += ["## CruxEval pass@1 (one answer per problem)", "", "| model | " + " | ".join(TASKS.values()) + " |", "|---|" + "---|" * len(TASKS)]
    for name, values in PAPER_CRUXEVAL.items():
        lines.append(f"| paper: {name} | " + " | ".join(f"{values[t]:.1f}" for t in TASKS) + " |")
    if ours:
        label = _model_label(next(iter(ours.values())))
        lines.append(f"| **ours: {label}** | " + " | ".join(_cell(ours.get(t)) for t in TASKS) + " |")
    else:
        lines.append("| ours (not run yet: `make results`) | " + " | ".join("-" for _ in TASKS) + " |")
    oracle = _ours(summaries, "cruxeval-oracle-")
    if oracle:
        lines.append("| oracle (tracegen's recorder; checks posing and scoring) | " + " | ".join(_cell(oracle.get(t)) for t in TASKS) + " |")
    lines += ["", "A cell shows pass@1 in percent and (passed/n); `-` means not run. Input mode hides the input on the calling line "
              "(`result = f(...)`). " + _decoding_note(ours) + "The oracle's input column reads the arguments from a recording of the real call: it checks "
              "argument joining and scoring, not prediction; its misses are arguments that locals never show (functions) and "
              "return values whose repr is not valid Python (recursive containers).", ""]  # fmt: skip
    lines += spread_section(spreads or [])
    fidelity = summaries.get("fidelity")
    if fidelity:
        lines += [f"## Next-state fidelity ({_model_label(fidelity)}, teacher-forced, vs tracegen's fast recorder)", "",
                  f"{fidelity['programs_used']} programs from `{fidelity.get('programs')}`, {fidelity.get('scripts')} seeded random "
                  f"scripts each (seed {fidelity.get('seed')}, at most {fidelity.get('max_steps')} actions). For reference, {PAPER_FIDELITY_NOTE}.", "",
                  "| action | steps | location | locals | whole state |", "|---|---|---|---|---|"]  # fmt: skip
        for kind in [k for k in ACTION_ORDER if k in fidelity["by_action"]]:
            lines.append(_rate_row(kind, fidelity["by_action"][kind]))
        lines.append(_rate_row("**all**", fidelity["overall"]))
        lines += ["", "| horizon (line events skipped) | steps | location | locals | whole state |", "|---|---|---|---|---|"]
        lines += [_rate_row(label, rates) for label, rates in fidelity["by_horizon"].items()]
        lines.append("")
    lines += _realworld_lines(summaries)
    lines += _everyday_lines(summaries.get("everyday"))
    lines += alone_lines(summaries)
    lines += earlier_lines(earlier or {})
    for image in images:
        lines += [f"![{image[:-4].replace('_', ' ')}]({image})", ""]
    return "\n".join(lines)


REALWORLD_SETS = (("realworld-long", "long single files"), ("realworld-projects", "two-file projects (main.py + the module)"))


def _realworld_lines(summaries: dict[str, dict[str, Any]]) -> list[str]:
    """The free-running table on real standard-library code (`make results-realworld`), when it was run."""
    present = [(name, label) for name, label in REALWORLD_SETS if name in summaries]
    if not present:
        return []
    first = summaries[present[0][0]]
    mode = "free-running" if first.get("free_running") else "teacher-forced"
    lines = [f"## Real-world code ({_model_label(first)}, {mode}, vs tracegen's fast recorder)", "",
             "Standard-library modules nobody here wrote (`neural-debugger tracegen realworld`: the module's source with a short "
             f"driver appended, or imported from main.py), {first.get('scripts')} seeded random script(s) each (seed {first.get('seed')}, "
             f"at most {first.get('max_steps')} actions)" + ("; free-running: the session goes on from its own predictions, as a user sees it." if first.get("free_running") else "."), "",
             "| programs | steps | location | locals | whole state |", "|---|---|---|---|---|"]  # fmt: skip
    for name, label in present:
        summary = summaries[name]
        lines.append(_rate_row(f"{label} ({summary.get('programs_used')})", summary["overall"]))
    return lines + [""]


def _everyday_lines(summary: dict[str, Any] | None) -> list[str]:
    """The free-running row on the everyday set (`make results-everyday`), when it was run."""
    if not summary:
        return []
    mode = "free-running" if summary.get("free_running") else "teacher-forced"
    return [f"## Everyday programs ({_model_label(summary)}, {mode}, vs tracegen's fast recorder)", "",
            "Short programs written like users' code (`tracegen/everyday/`, evaluation only: floats, None, tuples, user "
            f"classes, dataclasses, collections), {summary.get('scripts')} seeded random script(s) each (seed "
            f"{summary.get('seed')}, at most {summary.get('max_steps')} actions).", "",
            "| programs | steps | location | locals | whole state |", "|---|---|---|---|---|",
            _rate_row(f"everyday ({summary.get('programs_used')})", summary["overall"]), ""]  # fmt: skip


README_START, README_END = "<!-- results:start -->", "<!-- results:end -->"


def update_readme(readme: Path, results_md: str, results_dir: str) -> bool:
    """Copy RESULTS.md (title dropped, image links made relative to the README) between the README's
    results markers; False (nothing written) when the README or its markers are missing."""
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError:
        return False
    if README_START not in text or README_END not in text:
        return False
    body = results_md.split("\n", 1)[1].strip().replace("](", f"]({results_dir}/")
    body = body.replace("## ", "### ")
    head, rest = text.split(README_START, 1)
    tail = rest.split(README_END, 1)[1]
    readme.write_text(f"{head}{README_START}\n{body}\n{README_END}{tail}", encoding="utf-8")
    return True


def make_all(results: Path, readme: Path | None = None) -> list[Path]:
    """Write every plot whose summaries exist, and RESULTS.md (and its copy in `readme`, between the
    results markers); returns the files written."""
    results = Path(results)
    summaries, earlier = split_by_weights(load_summaries(results))
    if not summaries and not earlier:
        return []
    written = [p for p in [plot_cruxeval(summaries, results)] if p is not None]
    if "fidelity" in summaries:
        written += [plot_fidelity_by_action(summaries["fidelity"], results), plot_fidelity_by_horizon(summaries["fidelity"], results)]
    target = results / "RESULTS.md"
    markdown = results_markdown(summaries, tuple(p.name for p in written), collect(results), earlier)
    target.write_text(markdown, encoding="utf-8")
    written.append(target)
    if readme is not None and update_readme(readme, markdown, os.path.relpath(results.resolve(), readme.resolve().parent)):
        written.append(readme)
    return written


def _cell(summary: dict[str, Any] | None) -> str:
    return "-" if summary is None else f"{summary['pass@1']:.1f} ({summary['passed']}/{summary['n']})"


def _rate_row(label: str, rates: dict[str, Any]) -> str:
    return f"| {label} | {rates['stops']} | {100 * rates['location']:.1f} | {100 * rates['locals']:.1f} | {100 * rates['state']:.1f} |"


def _model_label(summary: dict[str, Any]) -> str:
    if summary.get("backend") == "oracle":
        return "oracle"
    model = summary.get("model") or "model"
    return Path(model).name if Path(model).name != "default" else "shipped model"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
