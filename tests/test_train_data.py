"""Packing trajectories into token sequences: splits by program, loss masks, manifest, schedule."""
from __future__ import annotations

import json

import numpy as np
import pytest

from model.prompt import language
from train import data
from train.manifest import Manifest, read_examples
from train.packing import PackedSplit, SequenceWriter
from train.schedule import SequenceOrder, lr_at, warmup_steps
from train.toydata import toy_trajectories, write_shards


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("traj")
    write_shards(folder, toy_trajectories(240, seed=3), per_shard=100)
    return folder


@pytest.fixture(scope="module")
def packed(shards, tmp_path_factory):
    out = tmp_path_factory.mktemp("packed") / "d"
    manifest = data.pack(shards, out, seq_len=192, heldout_fraction=0.2, vocab_size=400, progress=False)
    return out, manifest


def _open(out, manifest, split):
    return PackedSplit.open(out, split, manifest.splits[split].sequences, manifest.seq_len, manifest.dtype)


def test_manifest_counts_and_files(packed):
    out, manifest = packed
    assert Manifest.load(out) == manifest
    train, held = manifest.splits["train"], manifest.splits["heldout"]
    assert train.trajectories + held.trajectories == 240
    assert train.forward + train.inverse == train.trajectories and train.inverse > 0
    assert held.trajectories > 0 and held.sequences > 0
    for split in ("train", "heldout"):
        arr = _open(out, manifest, split)
        assert arr.tokens.shape == (manifest.splits[split].sequences, 192)
        assert int((arr.tokens != manifest.pad_id).sum()) >= manifest.splits[split].tokens - 0  # padding only adds
        assert int(arr.mask.sum()) == manifest.splits[split].target_tokens
    assert manifest.dtype == "uint16"
    assert len(manifest.tokenizer_sha256) == 64
    assert (out / "tokenizer" / "tokenizer.json").is_file()


def test_heldout_split_is_by_program(shards, packed):
    out, manifest = packed
    trajs = list(data.read_trajectories(data.shard_paths(shards)))
    held = {data.program_hash(t.program) for t in trajs if data.is_heldout(t.program, 0.2)}
    train = {data.program_hash(t.program) for t in trajs if not data.is_heldout(t.program, 0.2)}
    assert held and train and not (held & train)
    # trailing spaces and blank lines do not move a program to the other split
    src = trajs[0].program
    assert data.is_heldout(src, 0.2) == data.is_heldout(src.replace("\n", "  \n\n"), 0.2)
    assert manifest.splits["heldout"].programs == len(held)


def test_state_mask_covers_exactly_the_predicted_states(packed):
    out, manifest = packed
    from train.modeling import load_hf_tokenizer

    tok = load_hf_tokenizer(out / "tokenizer")
    arr = _open(out, manifest, "train")
    ids, mask = arr.batch(np.arange(len(arr)))
    for row_ids, row_mask in zip(ids[:10], mask[:10]):
        targets = tok.decode(row_ids[row_mask].tolist(), skip_special_tokens=False)
        # every masked run is a state text ending with <|state_end|>; no source or action tokens
        assert targets.endswith(language.STATE_END)
        assert language.SRC_SEP not in targets and language.STEP_OVER not in targets and language.BOS not in targets
        # and every state after an action is masked: as many state ends masked as actions present
        text = tok.decode(row_ids.tolist(), skip_special_tokens=False)
        actions = text.count(language.STEP_OVER) + text.count(language.INV_STEP_OVER)
        assert targets.count(language.STATE_END) == actions


def test_mask_all_and_too_long_windows(shards, tmp_path):
    manifest = data.pack(shards, tmp_path / "all", seq_len=192, mask="all", heldout_fraction=0.2, vocab_size=400, progress=False)
    for st in manifest.splits.values():
        assert st.target_tokens == st.tokens
    short = data.pack(shards, tmp_path / "short", seq_len=40, heldout_fraction=0.2, vocab_size=400, progress=False)
    full, cut = manifest.splits["train"], short.splits["train"]
    assert full.states_dropped == 0 and full.states > 0
    assert cut.states_dropped > 0 and cut.states + cut.states_dropped == full.states + full.states_dropped


def test_reuses_a_given_tokenizer(shards, packed, tmp_path):
    out, manifest = packed
    again = data.pack(shards, tmp_path / "again", tokenizer_dir=out / "tokenizer", seq_len=192, heldout_fraction=0.2, progress=False)
    assert again.tokenizer_sha256 == manifest.tokenizer_sha256
    assert again.splits == manifest.splits


def test_heldout_examples_parse_to_their_targets(packed):
    out, manifest = packed
    examples = read_examples(out)
    assert len(examples) == manifest.examples > 0
    assert {e.action for e in examples[:2]} == {"inv_step_over", "step_over"}  # interleaved by action
    from train.evaluation import judge, target_text

    for ex in examples[:20]:
        assert ex.prompt.endswith(language.ACTION_TOKENS[__import__("protocol.debugger").debugger.ActionKind(ex.action)])
        assert judge(ex, target_text(ex)) == (True, True)
        assert judge(ex, "<|reason_step|>garbage") == (False, False)


def test_inverse_fraction_resamples(shards, tmp_path):
    manifest = data.pack(shards, tmp_path / "inv", seq_len=192, heldout_fraction=0.0, inverse_fraction=0.5, vocab_size=400, progress=False)
    st = manifest.splits["train"]
    assert abs(st.inverse - st.forward) <= 12  # 60 inverse of 240 kept, about 60 forward kept


def test_bad_sources_fail_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="no trajectories"):
        data.shard_paths(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="no \\*.jsonl"):
        data.shard_paths(tmp_path)
    bad = tmp_path / "bad.jsonl"
    good = toy_trajectories(1)[0].model_dump_json()
    bad.write_text("not json\n" + json.dumps({"x": 1}) + "\n" + good + "\n")
    assert len(list(data.read_trajectories([bad]))) == 1


def test_a_trajectory_the_language_cannot_write_is_skipped_and_counted(tmp_path, capsys):
    """One state the model's language cannot render (a return value named like a subscripted class's method,
    as a package's typing helpers produce) skips its trajectory; the pack goes on, counts and names it."""
    from protocol.debugger import ReturnValue

    trajectories = toy_trajectories(6, seed=5)
    odd = trajectories[2]
    step = odd.steps[1]
    state = step.state.model_copy(update={"return_value": ReturnValue(name="Variadic[(int, str)].f", value="1")})
    odd.steps[1] = step.model_copy(update={"state": state})
    write_shards(tmp_path / "traj", trajectories, per_shard=3)
    manifest = data.pack(tmp_path / "traj", tmp_path / "out", seq_len=192, heldout_fraction=0.0, vocab_size=400, progress=False)
    train = manifest.splits["train"]
    assert train.trajectories_unrenderable == 1 and train.trajectories == 5
    assert "cannot render" in capsys.readouterr().err


def test_sequence_writer_never_cuts_a_document(tmp_path):
    writer = SequenceWriter(tmp_path, "train", seq_len=10, vocab_size=100, pad_id=0)
    docs = [[i + 1] * n for i, n in enumerate([3, 7, 4, 10, 11, 2, 6])]
    placed = [writer.add(d, [1] * len(d)) for d in docs]
    writer.close()
    assert placed == [True, True, True, True, False, True, True]
    arr = PackedSplit.open(tmp_path, "train", writer.sequences, 10, "uint16")
    for doc in docs[:4] + docs[5:]:
        rows = [r for r in arr.tokens if doc[0] in r]
        assert len(rows) == 1 and int((rows[0] == doc[0]).sum()) == len(doc)
    assert writer.tokens == sum(len(d) for d in docs) - 11


def test_schedule_and_order():
    assert lr_at(0, 100, 1.0, 10, 0.1) == pytest.approx(0.1)
    assert lr_at(9, 100, 1.0, 10, 0.1) == pytest.approx(1.0)
    assert lr_at(100, 100, 1.0, 10, 0.1) == pytest.approx(0.1)
    assert 0.1 < lr_at(55, 100, 1.0, 10, 0.1) < 1.0
    assert warmup_steps(10_000, None) == 200 and warmup_steps(100, None) == 5 and warmup_steps(100, 7) == 7
    a = SequenceOrder(7, seed=1)
    first = a.take(10)
    assert sorted(first[:7].tolist()) == list(range(7))
    b = SequenceOrder(7, seed=1, cursor=4)
    assert b.take(6).tolist() == first[4:].tolist()


def test_parallel_packing_gives_the_same_data(shards, packed, tmp_path):
    out, manifest = packed
    again = data.pack(shards, tmp_path / "par", tokenizer_dir=out / "tokenizer", seq_len=192, heldout_fraction=0.2, workers=2, progress=False)
    assert again.splits == manifest.splits
    for name in ("train.tokens.bin", "train.mask.bin", "heldout.tokens.bin", "heldout.examples.jsonl"):
        assert (tmp_path / "par" / name).read_bytes() == (out / name).read_bytes(), name
