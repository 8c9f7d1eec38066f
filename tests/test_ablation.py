"""The ablation protocol end to end at a micro scale: real `tracegen synth`, packing with a fixed tokenizer,
two levers trained for a few seconds, real `eval next-state` and `eval cruxeval` subprocesses, the JSONs and
the table in a notes file; then the cached data reused, the table regenerated, and bad input refused."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from train.eval import ablation as ab

REPO = Path(__file__).resolve().parents[1]
MICRO = {"layers": 2, "width": 128, "heads": 2, "intermediate": 256}


def _ablate(*args: str, timeout: int = 400) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "neural_debugger_cli", "ablate", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def _micro_args(tmp_path: Path, tokenizer: Path) -> list[str]:
    shape = tmp_path / "micro.json"
    shape.write_text(json.dumps(MICRO))
    return ["--budget", "0.04", "--threads", "1", "--data-root", str(tmp_path / "data"), "--tokenizer", str(tokenizer),
            "--synth-count", "12", "--synth-per-program", "4", "--next-state-count", "8", "--next-state-limit", "3",
            "--cruxeval-limit", "1", "--seq-len", "256", "--heldout-fraction", "0.3", "--heldout-sequences", "4",
            "--shape-override", str(shape), "--results", str(tmp_path / "results"), "--notes", str(tmp_path / "notes.md"),
            "--no-progress"]  # fmt: skip


@pytest.mark.slow  # 37 s in CI; the other tests here (a lever trained, bad input, the table) stay quick
def test_ablate_two_levers_end_to_end(tmp_path, tiny_checkpoint):
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nkept text\n")
    args = _micro_args(tmp_path, tiny_checkpoint)
    done = _ablate("baseline", "muon", *args)
    assert done.returncode == 0, done.stderr[-3000:]
    records = {name: json.loads((tmp_path / "results" / f"{name}.json").read_text()) for name in ("baseline", "muon")}
    for name, r in records.items():
        assert r["lever"] == name and r["tokens_seen"] > 0 and r["tokens_per_s"] > 0 and r["steps"] >= 1
        assert r["params"] > 0 and r["settings"]["budget_min"] == pytest.approx(0.04)
        assert 0 < r["next_state"]["overall"]["stops"] <= 3 and 0.0 <= r["next_state"]["overall"]["state"] <= 1.0
        assert r["cruxeval_output"]["n"] == 1
        assert "--optimizer muon" in r["commands"]["train"] if name == "muon" else "--optimizer" not in r["commands"]["train"]
        assert (tmp_path / "data" / "runs" / name / "model.safetensors").is_file()
    assert records["baseline"]["data"]["fingerprint"] == records["muon"]["data"]["fingerprint"]
    # the next-state programs were removed from the training data, and the packer used the fixed tokenizer
    data_info = records["baseline"]["data"]
    from train.manifest import Manifest
    from train.modeling import load_hf_tokenizer, tokenizer_hash

    assert Manifest.load(Path(data_info["packed"])).tokenizer_sha256 == tokenizer_hash(load_hf_tokenizer(tiny_checkpoint))
    assert data_info["filter"]["kept"] + data_info["filter"]["dropped"] == 12
    text = notes.read_text()
    assert text.startswith("# Notes\n\nkept text\n") and text.count(ab.START) == 1
    assert "| `baseline` |" in text and "| `muon` |" in text and "neural-debugger ablate baseline muon" in text
    # the data is cached: a second preparation reuses it (the packed manifest is not rewritten)
    packed_manifest = Path(data_info["packed"]) / "pack.json"
    before = packed_manifest.stat().st_mtime_ns
    again = _ablate("--prepare-only", *args)
    assert again.returncode == 0, again.stderr[-2000:]
    assert data_info["fingerprint"] in again.stdout and packed_manifest.stat().st_mtime_ns == before
    # the table regenerates from the JSONs alone, replacing (not duplicating) the block
    (tmp_path / "results" / "muon.json").unlink()
    table = _ablate("--table-only", "--results", str(tmp_path / "results"), "--notes", str(notes))
    assert table.returncode == 0, table.stderr
    text = notes.read_text()
    assert text.count(ab.START) == 1 and "| `muon` |" not in text and "| `baseline` |" in text


def test_bad_input_is_refused_with_a_message(tmp_path):
    unknown = _ablate("nonesuch", "--data-root", str(tmp_path / "d"), timeout=60)
    assert unknown.returncode == 2 and "unknown lever 'nonesuch'" in unknown.stderr
    nothing = _ablate(timeout=60)
    assert nothing.returncode == 2 and "name at least one lever" in nothing.stderr
    no_tok = _ablate("baseline", "--tokenizer", str(tmp_path / "none"), "--data-root", str(tmp_path / "d"), timeout=60)
    assert no_tok.returncode == 2 and "no tokenizer" in no_tok.stderr
    assert not (tmp_path / "d").exists()  # nothing was synthesized before the check


def test_levers_are_valid_recipes_and_deep_thin_matches_tiny_in_size():
    from train.presets import PRESETS

    for name in ab.LEVERS:
        ab.lever_options(name)  # every option is a TrainConfig field
    vocab = 2142  # the shipped tokenizer's vocabulary
    tiny, deep = PRESETS["tiny"].approx_params(vocab), ab.DEEP_THIN.approx_params(vocab)
    assert abs(deep - tiny) / tiny < 0.01 and ab.DEEP_THIN.layers == 2 * PRESETS["tiny"].layers and ab.DEEP_THIN.head_dim == 64


def test_table_and_notes_markers(tmp_path):
    def record(name: str, state: float, fingerprint: str = "abc") -> dict:
        return {"lever": name, "params": 1000, "steps": 10, "tokens_seen": 4096, "tokens_per_s": 100.0, "heldout_loss": 1.5,
                "next_state": {"overall": {"state": state, "stops": 4}, "by_action": {"step_over": {"state": state}, "inv_step_into": {"state": 0.0}}},
                "cruxeval_output": {"passed": 1, "n": 100}, "load_average": {"before": [1.0], "after": [2.0]}, "date": "2026-12-01 12:00 UTC",
                "settings": {"budget_min": 20, "threads": 1, "tokenizer": "checkpoints/default", "heldout_sequences": 128,
                             "next_state_limit": 200, "next_state_seed": 0, "cruxeval_limit": 100},
                "data": {"fingerprint": fingerprint, "train_tokens": 5, "train_programs": 2, "commands": ["synth"]},
                "commands": {"train": "neural-debugger train", "next_state": "ns", "cruxeval": "cx"}}  # fmt: skip

    table = ab.render_table([record("baseline", 0.25), record("muon", 0.5)])
    head = table.splitlines()[0]
    assert head.index("step_over") < head.index("inv_step_into")  # forward actions first
    assert "| `muon` | 1,000 | 10 | 4,096 | 100 | 1.5000 | 50.0 | 50.0 | 0.0 | 1/100 |" in table
    assert "Warning" not in table
    assert "Warning" in ab.render_table([record("baseline", 0.25), record("muon", 0.5, fingerprint="other")])
    notes = tmp_path / "n.md"
    ab.update_notes(notes, "first\n")
    ab.update_notes(notes, "second\n")
    text = notes.read_text()
    assert text.count(ab.START) == 1 and "second" in text and "first" not in text


def test_value_chars_lever_packs_the_same_trajectories_its_own_way_and_trains(tmp_path):
    """A packing lever: the fixed trajectories packed with --value-chars into a folder of their own (cached), and
    the lever's model carries the flag (model.prompt.value_chars)."""
    from model.prompt.value_chars import folder_value_chars
    from train.loop import train
    from train.manifest import Manifest

    shape = tmp_path / "micro.json"
    shape.write_text(json.dumps(MICRO))
    shipped = REPO / "checkpoints" / "default"  # read only: its vocabulary merges the letters of synthetic strings
    s = ab.Settings(budget_min=0.02, data_root=tmp_path / "data", tokenizer=shipped, synth_count=6, synth_per_program=2, synth_seed=4,
                    next_state_count=4, next_state_per_program=2, seq_len=256, heldout_fraction=0.3, shape_override=shape,
                    progress=False)  # fmt: skip
    said: list[str] = []
    base = ab.prepare_data(s, said.append)
    assert ab.lever_data("muon", s, base, said.append) is base
    ds = ab.lever_data("value-chars", s, base, said.append)
    assert ds.packed.name == base.packed.name + "-vchars" and ds.next_state == base.next_state
    assert ds.info["base_fingerprint"] == base.fingerprint != ds.fingerprint
    assert ds.info["commands"][-1].endswith("--value-chars") and not base.info["commands"][-1].endswith("--value-chars")
    plain, chars = Manifest.load(base.packed), Manifest.load(ds.packed)
    assert chars.value_chars and not plain.value_chars and chars.tokenizer_sha256 == plain.tokenizer_sha256
    for split in ("train", "heldout"):
        p, c = plain.splits[split], chars.splits[split]
        assert (p.trajectories, p.programs, p.states) == (c.trajectories, c.programs, c.states) and c.tokens >= p.tokens
    assert sum(x.tokens for x in chars.splits.values()) > sum(x.tokens for x in plain.splits.values())  # string contents cost tokens
    before = (ds.packed / "pack.json").stat().st_mtime_ns
    assert ab.lever_data("value-chars", s, base, said.append).fingerprint == ds.fingerprint
    assert (ds.packed / "pack.json").stat().st_mtime_ns == before  # cached, not repacked
    cfg = ab._train_config("value-chars", ab.lever_options("value-chars"), s, ds, tmp_path / "run")
    assert train(cfg)["steps"] >= 1
    assert folder_value_chars(tmp_path / "run") and f"--data {ds.packed}" in ab.train_command(cfg)
