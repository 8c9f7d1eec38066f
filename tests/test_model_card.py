"""The model card is written from the files commands wrote: config, training summary, eval summaries."""
import json
from pathlib import Path

from train.eval.model_card import render_card


def test_card_reports_the_measured_numbers(tmp_path: Path) -> None:
    ckpt, results = tmp_path / "ckpt", tmp_path / "results"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 4, "hidden_size": 256,
                                                  "num_attention_heads": 4, "intermediate_size": 768, "vocab_size": 2142,
                                                  "max_position_embeddings": 1024, "tie_word_embeddings": True}))  # fmt: skip
    split = {"trajectories": 10, "forward": 7, "inverse": 3, "programs": 2, "tokens": 1000, "target_tokens": 400}
    (ckpt / "training_summary.json").write_text(json.dumps({
        "params": 3958528, "steps": 809, "tokens_seen": 6627328, "elapsed_s": 4198.3, "tokens_per_s": 1578.6, "epochs": 0.317,
        "data": {"mask": "states", "splits": {"train": split, "heldout": split}}, "peak_lr": 0.002, "best_heldout_loss": 0.93,
        "final_eval": {"heldout_loss": 0.93, "next_state_exact": 0.1875, "next_state_parsed": 0.5625, "next_state_n": 16},
        "init_from": "runs/a", "init_from_summary": {"steps": 809, "tokens_seen": 6627328}}))
    (results / "cruxeval-output").mkdir(parents=True)
    (results / "cruxeval-output" / "summary.json").write_text(json.dumps({"pass@1": 12.5, "n": 800, "passed": 100, "seconds_per_problem": 0.9}))
    (results / "fidelity").mkdir()
    (results / "fidelity" / "summary.json").write_text(json.dumps({
        "overall": {"stops": 20, "location": 0.5, "locals": 0.25, "state": 0.2}, "by_action": {"step_into": {"stops": 20, "location": 0.5, "locals": 0.25, "state": 0.2}},
        "by_horizon": {"1": {"stops": 20, "state": 0.2}}, "programs": "examples", "programs_used": 16, "seed": 0}))
    card = render_card(ckpt, results, "## Notes\n\ntried things")
    assert "3,958,528 parameters" in card and "6,627,328 tokens seen" in card
    assert "| CruxEval-O (step_return) | 12.5 | 100 / 800 | 0.9 |" in card
    assert "| CruxEval-I (inv_step_call) | not run | | |" in card
    assert "| step_into | 20 | 50.0% | 25.0% | 20.0% |" in card
    assert "- initialized from `runs/a`: 809 steps, 6,627,328 tokens before this run" in card
    assert "18.8%" in card and card.rstrip().endswith("tried things")
    assert "Spread over sampling seeds" not in card  # no runs under other seeds
    (results / "seeds" / "cruxeval-output-s1").mkdir(parents=True)
    (results / "seeds" / "cruxeval-output-s1" / "summary.json").write_text(json.dumps({"pass@1": 11.5, "n": 800, "passed": 92, "sample_seed": 1}))
    card = render_card(ckpt, results, "")
    assert "## Spread over sampling seeds" in card
    assert "| CruxEval-O (step_return) | 1: 92/800, -: 100/800 | **12.00** (96.0/800) |" in card


def test_card_shows_next_state_per_action_from_the_command_summary(tmp_path: Path) -> None:
    """The summary is built by the code `eval next-state` writes it with (NextStateReport.summary), not by hand."""
    from protocol.compare import FieldDiff
    from train.manifest import NextStateExample
    from train.eval.next_state import NextStateReport, Question, Selection

    def question(action: str, direction: str) -> Question:
        return Question(NextStateExample(prompt="", program="", target="{}", action=action, direction=direction), 0, 0)

    report = NextStateReport()
    for action, direction, outcomes in (("step_into", "forward", [True, True, False, False]), ("inv_step_call", "inverse", [True, False]),
                                        ("inv_step_over", "inverse", [False])):  # fmt: skip
        for matched in outcomes:
            report.add(question(action, direction), FieldDiff() if matched else FieldDiff(locals=True))
    report.unparsed = 1
    selection = Selection([], trajectories=9, forward=6, inverse=3, states=120)
    summary = report.summary(selection, backend="transformers", model="checkpoints/default", trajectories="data/heldout-next-state",
                             limit=7, seed=0, seq_len=1024, max_state_tokens=256, constrained=True, seconds=14.0)  # fmt: skip
    ckpt, results = tmp_path / "ckpt", tmp_path / "results"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    assert "## Held-out next-state exact match per action (forward and inverse)" in render_card(ckpt, results, "")
    assert "Not run yet" in render_card(ckpt, results, "").split("per action (forward and inverse)")[1].split("##")[0]
    (results / "next-state").mkdir(parents=True)
    (results / "next-state" / "summary.json").write_text(json.dumps(summary))
    card = render_card(ckpt, results, "")
    section = card.split("## Held-out next-state exact match per action (forward and inverse)")[1].split("\n## ")[0]
    assert "`data/heldout-next-state`: 7 states drawn (seed 0" in section and "9 trajectories (6 forward, 3 inverse)" in section
    assert "1 predictions were not a state" in section and "2.0 s per state" in section
    assert "| step_into | forward | 4 | 100.0% | 50.0% | 50.0% |" in section
    assert "| inv_step_call | inverse | 2 | 100.0% | 50.0% | 50.0% |" in section
    assert "| inv_step_over | inverse | 1 | 100.0% | 0.0% | 0.0% |" in section
    assert "| all forward | forward | 4 | 100.0% | 50.0% | 50.0% |" in section
    assert "| all inverse | inverse | 3 | 100.0% | 33.3% | 33.3% |" in section
    assert "| all | both | 7 | 100.0% | 42.9% | 42.9% |" in section
    assert section.index("| step_into |") < section.index("| inv_step_over |") < section.index("| inv_step_call |")  # ActionKind order


def test_tokens_add_up_over_every_fine_tuning_stage(tmp_path: Path) -> None:
    """Stage 3 started from stage 2, which started from stage 1: the card counts all three."""
    from train.loop import _prior_summary
    from train.eval.model_card import training_lines

    stage1, stage2 = tmp_path / "a", tmp_path / "b"
    for folder in (stage1, stage2):
        folder.mkdir()
    (stage1 / "training_summary.json").write_text(json.dumps({"steps": 800, "tokens_seen": 6_000_000}))
    (stage2 / "training_summary.json").write_text(json.dumps({
        "steps": 4800, "tokens_seen": 19_000_000, "init_from": str(stage1), "init_from_summary": _prior_summary(stage1)}))
    prior = _prior_summary(stage2)
    assert prior is not None and prior["tokens_seen"] == 19_000_000 and prior["tokens_seen_total"] == 25_000_000
    split = {"trajectories": 1, "forward": 1, "inverse": 0, "programs": 1, "tokens": 10, "target_tokens": 5}
    summary = {"steps": 3000, "tokens_seen": 12_000_000, "epochs": 0.2, "peak_lr": 5e-4, "elapsed_s": 60, "tokens_per_s": 3000,
               "data": {"mask": "states", "splits": {"train": split, "heldout": split}}, "init_from": str(stage2), "init_from_summary": prior}
    text = "\n".join(training_lines(summary))
    assert "4,800 steps, 19,000,000 tokens before this run (25,000,000 over all its stages; 37,000,000 tokens in all with this run)" in text


def test_card_names_the_companion_models_and_how_they_rank(tmp_path: Path) -> None:
    from train.eval.model_card import _ranked, companion_lines
    from train.eval.plots import _decoding_note

    ckpt, other = tmp_path / "ckpt", tmp_path / "other"
    for folder in (ckpt, other):
        folder.mkdir()
        (folder / "config.json").write_text("{}")
    assert companion_lines(ckpt) == []
    (ckpt / "ensemble.json").write_text(json.dumps({"companions": ["../other"]}))
    [line] = companion_lines(ckpt)
    assert "`other`" in line and "inv_step_call" in line
    (ckpt / "ensemble.json").write_text(json.dumps({"companions": ["../gone"]}))
    assert "gone" in companion_lines(ckpt)[0]
    ranked = _ranked({"call_candidates": 8, "coarse_candidates": 4, "candidates": 1, "companions": ["x"]})
    assert "8 for inv_step_call from each of 2 models" in ranked and "4 for step_return" in ranked
    assert "from each" not in _ranked({"call_candidates": 8, "coarse_candidates": 4, "candidates": 1})
    assert "8 answers drawn by each of 2 models" in _decoding_note({"input": {"call_candidates": 8, "companions": ["x"]}})
