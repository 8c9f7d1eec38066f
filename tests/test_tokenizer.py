"""The tokenizer: every special token is one token, text round-trips exactly through the saved
folder loaded by transformers' AutoTokenizer, segment-wise encoding equals whole-text encoding,
and prompts stay append-only at the token level."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from model.prompt import language as L
from model.prompt import tokenizer as T
from protocol.debugger import Action, ActionKind, State, Step, Trajectory
from tests.test_language import EXAMPLE, _handmade, trajectories

CORPUS = [
    L.render_text(L.render_trajectory(_handmade())),
    EXAMPLE,
    Path(json.__file__).read_text(),
    Path(json.__file__).with_name("decoder.py").read_text(),
    Path(json.__file__).with_name("encoder.py").read_text(),
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, object, Path]:
    from transformers import AutoTokenizer

    tok = T.train_tokenizer(CORPUS, vocab_size=700)
    folder = T.save_tokenizer(tok, tmp_path_factory.mktemp("tok"))
    return tok, AutoTokenizer.from_pretrained(str(folder)), folder


def test_every_special_token_is_one_token(trained: tuple) -> None:
    tok, hf, _ = trained
    ids = T.special_token_ids(tok)
    assert len(set(ids.values())) == len(L.SPECIAL_TOKENS)
    for token in L.SPECIAL_TOKENS:
        assert T.encode(tok, token) == [ids[token]]
        assert T.encode(hf, "x" + token + "y") == T.encode(hf, "x") + [ids[token]] + T.encode(hf, "y")
        assert hf.convert_tokens_to_ids(token) == ids[token]
    assert T.stop_token_id(tok) == ids[L.STATE_END]
    assert hf.bos_token == L.BOS and hf.eos_token == L.EOS and hf.pad_token == L.PAD


def test_saved_folder_is_a_fast_tokenizer_for_transformers(trained: tuple) -> None:
    tok, hf, folder = trained
    assert (folder / "tokenizer.json").is_file() and (folder / "tokenizer_config.json").is_file()
    config = json.loads((folder / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert set(config["additional_special_tokens"]) | {L.BOS, L.EOS, L.PAD} == set(L.SPECIAL_TOKENS)
    text = L.render_text(L.render_trajectory(_handmade()))
    assert T.encode(hf, text) == T.encode(tok, text) == T.encode(T.load_tokenizer(folder), text)
    assert hf("abc")["input_ids"] == T.encode(tok, "abc")  # no BOS/EOS added behind our back


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(traj=trajectories())
def test_round_trip_and_segments(trained: tuple, traj: Trajectory) -> None:
    tok, hf, _ = trained
    segments = L.render_trajectory(traj)
    text = L.render_text(segments)
    ids, mask = T.encode_segments(tok, segments)
    assert ids == T.encode(tok, text)  # segment boundaries never split a merge
    assert hf.decode(ids, skip_special_tokens=False) == text
    assert len(mask) == len(ids)
    predicted = [i for i, m in zip(ids, mask) if m]
    assert predicted.count(T.stop_token_id(tok)) == len(traj.steps)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(traj=trajectories())
def test_prompts_are_append_only_in_tokens(trained: tuple, traj: Trajectory) -> None:
    tok, _, _ = trained
    history: list[State | Step] = [traj.initial, *traj.steps]
    last = Action(kind=ActionKind.CONTINUE)
    previous: list[int] = []
    for k in range(1, len(history) + 1):
        action = history[k].action if k < len(history) else last  # type: ignore[union-attr]
        ids = T.encode(tok, L.render_prompt(traj.program, traj.breakpoints, history[:k], action))
        assert ids[: len(previous)] == previous
        previous = ids


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="too small"):
        T.train_tokenizer(["abc"], vocab_size=100)
    with pytest.raises(FileNotFoundError, match="tokenizer.json"):
        T.load_tokenizer(tmp_path)
