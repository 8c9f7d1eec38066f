"""The model card is written from the files commands wrote: config, training summary, eval summaries."""
import json
from pathlib import Path

from train.model_card import render_card


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
        "final_eval": {"heldout_loss": 0.93, "next_state_exact": 0.1875, "next_state_parsed": 0.5625, "next_state_n": 16}}))
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
    assert "18.8%" in card and card.rstrip().endswith("tried things")
