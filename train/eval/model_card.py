"""Write a checkpoint's model card (README.md) from what the repository measured.

Every number comes from a file a command wrote: the checkpoint's `config.json` and
`training_summary.json` (written by `neural-debugger train`), and the `summary.json` files of
`neural-debugger eval cruxeval` / `eval fidelity` / `eval next-state` under a results folder. Free text (the recipe
notes, what was tried) comes from a markdown file passed with `--notes`.

    python -m train.eval.model_card checkpoints/default --results results --notes docs/model-notes.md
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from model.backends.ensemble import companion_folders
from train.eval.alone import alone_lines
from train.eval.plots import _decoding_note, load_summaries, split_by_weights
from train.eval.results_io import measured_here
from train.eval.spread import collect, spread_section

app = typer.Typer(add_completion=False, help="Write a checkpoint's model card from its measured numbers.")

FIDELITY_RUNS = (("fidelity-synth", "Held-out synthetic programs (the training distribution, programs never trained on)"),
                 ("fidelity", "examples/ (hand-written multi-function programs)"))
CRUXEVAL_RUNS = (("cruxeval-input", "CruxEval-I (inv_step_call)"), ("cruxeval-output", "CruxEval-O (step_return)"),
                 ("cruxeval-output-breakpoint", "CruxEval-O (breakpoint)"))  # fmt: skip


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _measured(path: Path) -> dict[str, Any] | None:
    """A results summary, unless it measured weights that have since left its model folder (another model's figure)."""
    found = _load(path)
    return found if found is None or measured_here(found) else None


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def architecture_lines(config: dict[str, Any], summary: dict[str, Any] | None) -> list[str]:
    params = (summary or {}).get("params")
    return [
        f"- `{config.get('architectures', ['?'])[0]}`, {params:,} parameters" if params else f"- `{config.get('architectures', ['?'])[0]}`",
        f"- {config.get('num_hidden_layers')} layers, width {config.get('hidden_size')}, {config.get('num_attention_heads')} heads "
        f"of {config.get('hidden_size', 0) // max(1, config.get('num_attention_heads', 1))}, MLP {config.get('intermediate_size')}, "
        f"vocabulary {config.get('vocab_size')}, context {config.get('max_position_embeddings')} tokens, "
        f"tied embeddings: {config.get('tie_word_embeddings')}",
    ]


def training_lines(summary: dict[str, Any]) -> list[str]:
    splits = summary.get("data", {}).get("splits", {})
    train, held = splits.get("train", {}), splits.get("heldout", {})
    final = summary.get("final_eval") or {}
    lines = [
        f"- data: {train.get('trajectories', 0):,} training trajectories ({train.get('forward', 0):,} forward, "
        f"{train.get('inverse', 0):,} inverse) of {train.get('programs', 0):,} programs, {train.get('tokens', 0):,} tokens "
        f"({train.get('target_tokens', 0):,} predicted-state tokens, loss mask `{summary.get('data', {}).get('mask')}`); "
        f"held out by program: {held.get('trajectories', 0):,} trajectories of {held.get('programs', 0):,} programs",
        f"- optimization: {summary.get('steps'):,} steps, {summary.get('tokens_seen'):,} tokens seen "
        f"({summary.get('epochs')} epochs), peak LR {summary.get('peak_lr')}, "
        f"{summary.get('elapsed_s', 0) / 60:.0f} minutes at {summary.get('tokens_per_s'):,} tokens/s",
        f"- held-out loss (per predicted token): best {_num(summary.get('best_heldout_loss'))}, last {_num(final.get('heldout_loss'))}",
    ]
    prior = summary.get("init_from_summary") or {}
    if summary.get("init_from"):
        seen = f": {prior['steps']:,} steps, {prior['tokens_seen']:,} tokens before this run" if prior.get("tokens_seen") else ""
        before = prior.get("tokens_seen_total") or 0
        if before > (prior.get("tokens_seen") or 0):
            seen += f" ({before:,} over all its stages; {before + (summary.get('tokens_seen') or 0):,} tokens in all with this run)"
        lines.append(f"- initialized from `{summary['init_from']}`{seen}")
    if "next_state_exact" in final:
        lines.append(f"- next-state exact match at the end of training (greedy, unconstrained, {final.get('next_state_n', '?')} "
                     f"held-out states): {_pct(final.get('next_state_exact'))}, parsed {_pct(final.get('next_state_parsed'))}")  # fmt: skip
    return lines


def fidelity_lines(fidelity: dict[str, Any]) -> list[str]:
    lines = ["| action | steps | location | locals | whole state |", "|---|---|---|---|---|"]
    rows = [("all", fidelity["overall"])] + sorted(fidelity.get("by_action", {}).items())
    for name, r in rows:
        lines.append(f"| {name} | {r.get('stops', '?')} | {_pct(r.get('location'))} | {_pct(r.get('locals'))} | {_pct(r.get('state'))} |")
    if fidelity.get("by_horizon"):
        lines += ["", "By horizon (line events the action skips):", "", "| horizon | steps | whole state |", "|---|---|---|"]
        lines += [f"| {label} | {r.get('stops', '?')} | {_pct(r.get('state'))} |" for label, r in fidelity["by_horizon"].items()]
    return lines + error_analysis_lines(fidelity)


def error_analysis_lines(summary: dict[str, Any]) -> list[str]:
    """The misses by what the line does (`train.eval.error_analysis`) and the variables by value type (`train.eval.value_types`), when the summary has them."""
    from train.eval.error_analysis import kind_lines
    from train.eval.value_types import value_type_lines

    lines = []
    if summary.get("by_line_kind"):
        lines += ["", "Misses by what the line the action runs does (forward actions; `train/eval/error_analysis.py`):", "",
                  *kind_lines(summary["by_line_kind"])]  # fmt: skip
    if summary.get("by_value_type"):
        lines += ["", "Top-frame variables by the type of their real value (forward actions; `train/eval/value_types.py`):", "",
                  *value_type_lines(summary["by_value_type"])]  # fmt: skip
    return lines


NEXT_STATE_RUN = "next-state"
NEXT_STATE_TITLE = "Held-out next-state exact match per action (forward and inverse)"


def _ranked(summary: dict[str, Any]) -> str:
    """How a run's answers were chosen: greedy, or the most likely of several for some actions (`model.decode.rerank`)."""
    counts = {"inv_step_call": summary.get("call_candidates"), "step_return, continue and breakpoint": summary.get("coarse_candidates"),
              "the other actions": summary.get("candidates")}  # fmt: skip
    ranked = [f"{n} for {what}" for what, n in counts.items() if isinstance(n, int) and n > 1]
    companions = len(summary.get("companions") or [])
    if ranked and companions:
        ranked[0] += f" from each of {companions + 1} models (`model/backends/ensemble.py`)" if ranked[0].endswith("inv_step_call") else ""
    return f"the most likely of several answers ({', '.join(ranked)}; greedy otherwise) under " if ranked else "greedy "


def next_state_lines(summary: dict[str, Any]) -> list[str]:
    """The `eval next-state` summary: how the states were drawn, then one row per action, per direction and overall."""
    overall = summary["overall"]
    lines = [f"`{summary.get('trajectories', '?')}`: {overall.get('stops', '?')} states drawn (seed {summary.get('seed')}, "
             f"round-robin over actions) from {summary.get('trajectories_read', '?')} trajectories "
             f"({summary.get('forward_trajectories', '?')} forward, {summary.get('inverse_trajectories', '?')} inverse) of "
             f"held-out programs, each prompted with the window training uses ({summary.get('seq_len')} tokens), "
             f"{_ranked(summary)}{'constrained ' if summary.get('constrained', True) else ''}decoding"
             f"{' narrowed by static control flow' if summary.get('flow_constraint') else ''}; {summary.get('unparsed', 0)} predictions "
             f"were not a state (counted wrong) and {summary.get('closed', 0)} were cut off at the token budget and closed, "
             f"{summary.get('seconds_per_state', '?')} s per state.",
             "", "| action | direction | states | location | locals | whole state |", "|---|---|---|---|---|---|"]  # fmt: skip
    rows = [(name, "inverse" if name.startswith("inv_") else "forward", r) for name, r in summary.get("by_action", {}).items()]
    rows += [(f"all {d}", d, r) for d, r in summary.get("by_direction", {}).items()]
    rows.append(("all", "both", overall))
    for name, direction, r in rows:
        lines.append(f"| {name} | {direction} | {r.get('stops', '?')} | {_pct(r.get('location'))} | {_pct(r.get('locals'))} | {_pct(r.get('state'))} |")
    return lines + error_analysis_lines(summary)


def cruxeval_lines(results: Path) -> list[str]:
    lines = ["| task | pass@1 | passed / n | seconds per problem |", "|---|---|---|---|"]
    decoded: dict[str, dict[str, Any]] = {}
    for folder, label in CRUXEVAL_RUNS:
        s = _measured(results / folder / "summary.json")
        if s is None:
            lines.append(f"| {label} | not run | | |")
        else:
            lines.append(f"| {label} | {s['pass@1']:.1f} | {s.get('passed')} / {s['n']} | {s.get('seconds_per_problem')} |")
            decoded[folder.removeprefix("cruxeval-")] = s
    return [*lines, "", _decoding_note(decoded).strip()] if decoded else lines


def companion_lines(ckpt: Path) -> list[str]:
    """The companion models the checkpoint's ensemble.json names (`model.backends.ensemble`), if any."""
    found = companion_folders(ckpt)
    folders = found.folders
    if found.problems:
        return [f"- companion models: {problem}" for problem in found.problems]
    if not folders:
        return []
    names = ", ".join(f"`{f.name}`" for f in folders)
    return [f"- companion model{'s' if len(folders) > 1 else ''} (`ensemble.json`, `model/backends/ensemble.py`): {names}, same tokenizer; "
            "after `inv_step_call` each draws as many answers as this model, and every answer is ranked by the mean "
            "log-probability under all of them. Every other action is this model's alone."]


def render_card(ckpt: Path, results: Path, notes: str) -> str:
    config = _load(ckpt / "config.json") or {}
    summary = _load(ckpt / "training_summary.json")
    fidelities = [(label, _measured(results / folder / "summary.json")) for folder, label in FIDELITY_RUNS]
    parts = [f"# Model card: `{ckpt.name}`", "",
             "The neural debugger's default model: it predicts the next debugger state (stack, locals, return value, "
             "exception, stdout) in the neural-debugger language (`docs/language.md`). Generated by "
             "`python -m train.eval.model_card`; every number below was measured by a command in this repository.", "",
             "## Architecture", "", *architecture_lines(config, summary), *companion_lines(ckpt), ""]  # fmt: skip
    if summary:
        parts += ["## Training", "", *training_lines(summary), ""]
    parts += ["## Held-out next-state exact match (`neural-debugger eval fidelity`)", ""]
    for label, fidelity in fidelities:
        if fidelity:
            programs = fidelity.get("programs", "?")
            how = ("free-running (the session goes on from its own predictions, as a user sees it)" if fidelity.get("free_running")
                   else "teacher-forced (each action from the real previous state)")
            flow = ", stops narrowed by static control flow" if fidelity.get("flow_constraint") else ""
            parts += [f"**{label}**: `{programs}` ({fidelity.get('programs_used')} programs), {how}{flow}, seed {fidelity.get('seed')}.",
                      "", *fidelity_lines(fidelity), ""]  # fmt: skip
    if not any(f for _, f in fidelities):
        parts += ["Not run yet (`make results`).", ""]
    next_state = _measured(results / NEXT_STATE_RUN / "summary.json")
    parts += [f"## {NEXT_STATE_TITLE} (`neural-debugger eval next-state`)", ""]
    parts += [*next_state_lines(next_state), ""] if next_state else ["Not run yet (`make results`).", ""]
    parts += ["## CruxEval (`neural-debugger eval cruxeval`, one answer per problem)", "", *cruxeval_lines(results), "",
              "Paper (Beck et al., 2026), for scale: a 1.8B model trained from scratch on 150B tokens reaches 53.6 (input), "
              "48.0 (output, step_return), 57.7 (output, breakpoint).", ""]  # fmt: skip
    parts += alone_lines(split_by_weights(load_summaries(results))[0])
    parts += spread_section(collect(results))
    if notes.strip():
        parts += [notes.strip(), ""]
    return "\n".join(parts)


@app.command()
def main(
    ckpt: Path = typer.Argument(..., help="the checkpoint folder"),
    results: Path = typer.Option(Path("results"), help="folder of eval summaries (cruxeval-*, fidelity*, next-state)"),
    notes: Path | None = typer.Option(None, help="markdown appended to the card: recipe, what was tried"),
) -> None:
    if not (ckpt / "config.json").is_file():
        raise typer.BadParameter(f"{ckpt} is not a checkpoint folder (no config.json)")
    text = render_card(ckpt, results, notes.read_text() if notes else "")
    (ckpt / "README.md").write_text(text)
    typer.echo(f"wrote {ckpt / 'README.md'}")


if __name__ == "__main__":
    app()
