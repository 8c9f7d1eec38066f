"""Value chars (model/prompt/value_chars.py): string contents inside state values one token per character.

Real tokenizers only: the shipped checkpoint's (read only) and the tiny checkpoint of conftest. The encoding
round-trips on generated states and on garbage; each content character is its own token(s) and everything
else is tokenized piece by piece as before; the shipped model's prompts are unchanged; the flag travels from
packing to the trained model; a flagged model generates string contents one character per token.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.prompt import language as L
from model.prompt import value_chars as V
from protocol.debugger import Action, ActionKind, ExceptionInfo, Frame, ReturnValue, State, Step, StopReason, Trajectory

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "checkpoints" / "default"
STRING_PROGRAM = (
    "names = ['ann', 'bob']\ngreet = {}\nfor n in names:\n    greet[n] = 'hi ' + n.upper()\n"
    "msg = \"it's \" + str(b'\\x00ab') + 'é😀|'\ndef shout(s):\n    return s.upper() + '!'\nout = shout(msg)\nprint(out)\n"
)


@pytest.fixture(scope="module")
def shipped():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(SHIPPED))


def _trajectory(program: str, steps: int = 20) -> Trajectory:
    from tracegen.fast import record_program, replay

    actions = [Action(kind=ActionKind.STEP_INTO)] * steps
    states = replay(record_program(program), actions, [])
    return Trajectory(program=program, initial=states[0], steps=[Step(action=a, state=s) for a, s in zip(actions, states[1:])])


def _byte_offsets(tok, ids: list[int]) -> set[int]:
    """Byte offsets in the decoded text where a token starts or ends."""
    from model.backends.hf import token_bytes_table

    table = token_bytes_table(tok, len(tok))
    out, at = {0}, 0
    for i in ids:
        at += len(table[i])
        out.add(at)
    return out


def _assert_value_chars(tok, text: str) -> list[int]:
    """Round trip; each content character its own token(s); every other piece tokenized alone, as before."""
    ids = V.encode_value_chars(tok, text)
    assert tok.decode(ids, skip_special_tokens=False) == text
    bounds = _byte_offsets(tok, ids)
    for a, b in V.content_spans(text):
        for k in range(a, b + 1):
            assert len(text[:k].encode()) in bounds, (text[a:b], k - a)
    expected = [i for piece, _ in V.split_pieces(text) if piece for i in tok.encode(piece, add_special_tokens=False)]
    assert ids == expected
    return ids


# ---- finding string contents ---------------------------------------------------------------------------------


def _contents(text: str) -> list[str]:
    return [text[a:b] for a, b in V.content_spans(text)]


def test_contents_of_locals_and_return_values_only():
    state = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=3, source="", locals={
        "s": "'hello world'", "d": "{'k': ['a b', b'\\x00z'], 2: \"it's\"}", "n": "42", "e": "''",
        "p": "Point(name='O\\'Brien', tag=\"x\")", "o": "<Foo don't at 0x?>", "t": "'cut",
    })], return_value=ReturnValue(name="f", value="'ok'"), stdout="'not a value'\n")  # fmt: skip
    text = L.render_state(state)
    assert _contents(text) == ["hello world", "k", "a b", "\\\\x00z", "it's", "O\\\\'Brien", "x", "ok"]
    # the listing, breakpoints, names, exception messages and stdout are left alone
    header = L.render_header("s = 'abc'\nt = \"q\"\n", [1])
    assert _contents(header) == []
    exc = L.render_state(State(reason=StopReason.EXCEPTION, frames=[Frame(name="<module>", line=1, source="")],
                               exception=ExceptionInfo(type="KeyError", message="'k'")))  # fmt: skip
    assert _contents(exc) == []


def test_partial_text_reports_an_open_literal_and_token_rule():
    part = '<|reason_step|><|frame_sep|><module><|line_sep|>12{"s":"\'hel'
    assert _contents_partial(part) == ["hel"]
    assert V.keeps_value_chars(part, "l") and V.keeps_value_chars(part, "\ufffd")
    assert not V.keeps_value_chars(part, "lo") and not V.keeps_value_chars(part, "o'")
    assert V.keeps_value_chars(part, "'\"") and V.keeps_value_chars(part, "'\",..}")  # the closing quote starts a piece
    opening = '<|reason_step|><|frame_sep|><module><|line_sep|>12{"s":"'
    assert V.keeps_value_chars(opening, "'") and not V.keeps_value_chars(opening, "'h")
    assert V.keeps_value_chars(opening, "12") and V.keeps_value_chars(opening, "[")
    double = '<|reason_step|><|call_sep|>f<|line_sep|>2{"s":"\\"it'  # a double-quoted repr: the quote is \" in JSON
    assert _contents_partial(double) == ["it"] and not V.keeps_value_chars(double, "'s")


def _contents_partial(text: str) -> list[str]:
    return [text[a:b] for a, b in V.content_spans(text, partial=True)]


# ---- encoding ----------------------------------------------------------------------------------------------------

_atoms = st.one_of(st.text(max_size=12), st.binary(max_size=6), st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False))
_values = st.recursive(_atoms, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=3),
), max_leaves=8)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_values, min_size=1, max_size=3), ret=_values, extra=st.text(max_size=6))
def test_round_trip_and_one_token_per_character_on_states(shipped, values, ret, extra):
    local = {f"v{i}": repr(v) for i, v in enumerate(values)} | {"w": repr(extra) + extra}
    state = State(reason=StopReason.STEP, frames=[Frame(name="f", line=2, source="", locals=local)],
                  return_value=ReturnValue(name="g", value=repr(ret)))  # fmt: skip
    text = L.render_state(state)
    _assert_value_chars(shipped, text)


_GARBAGE = ['"', "'", "\\", "{", "}", ":", ",", "..", "b", "x", " ", "é", "😀", "1", "\\u00", "\\\"", "<|", "|>", *L.SPECIAL_TOKENS[:16]]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(_GARBAGE) | st.text(max_size=4), max_size=40))
def test_garbage_never_crashes_and_round_trips(shipped, parts):
    text = "".join(parts)
    _assert_value_chars(shipped, text)
    for cut in range(0, len(text) + 1, 7):
        V.content_spans(text[:cut], partial=True)
        assert isinstance(V.keeps_value_chars(text[:cut], text[cut : cut + 2]), bool)


def test_segments_encode_as_the_whole_text(shipped):
    """Segment boundaries sit next to special tokens, so segment by segment equals the whole text (as today)."""
    segments = L.render_trajectory(_trajectory(STRING_PROGRAM))
    text = L.render_text(segments)
    whole = _assert_value_chars(shipped, text)
    assert [i for seg in segments for i in V.encode_text(shipped, seg.text, True)] == whole
    plain = shipped.encode(text, add_special_tokens=False)
    assert len(whole) > len(plain)  # the string contents of this program cost tokens
    assert _contents(text)[:3] == ["ann", "bob", "ann"]


def test_shipped_model_prompts_are_unchanged(shipped):
    """checkpoints/default has no flag: its prompts are exactly tokenizer.encode of the text, session and packer alike."""
    from train.data import SegmentEncoder

    assert not V.value_chars_enabled(shipped) and not V.folder_value_chars(SHIPPED)
    encoder = SegmentEncoder(shipped)
    changed = 0
    for name in ("string_methods.py", "dict_methods.py", "prints.py", "classes.py"):
        program = (ROOT / "examples" / name).read_text()
        for segments in L.render_windows(_trajectory(program, 30), 1024, encoder.count):
            text = L.render_text(segments)
            ids = shipped.encode(text, add_special_tokens=False)
            assert V.encode_text(shipped, text) == ids
            assert [i for s in segments for i in encoder.ids(s.text)] == ids
            changed += V.encode_text(shipped, text, True) != ids
    assert changed  # the same texts do change with the flag: the test would see a leak of it


# ---- the flag travels: packing, training, serving --------------------------------------------------------------


def _shards(folder: Path) -> Path:
    folder.mkdir(parents=True)
    programs = [STRING_PROGRAM, "w = 'abc'\nx = w * 2\ny = [w, x]\n", "d = {'key': 'value'}\nd['k2'] = 'v2'\ns = str(d)\n"]
    with (folder / "a.jsonl").open("w") as fh:
        for i in range(6):
            fh.write(_trajectory(programs[i % 3] + f"z = {i}\n").model_dump_json() + "\n")
    return folder


def test_packing_with_value_chars_marks_the_data_and_the_trained_model(tmp_path, tiny_checkpoint, micro_config):
    from train import data
    from train.loop import TrainConfig, train
    from train.manifest import Manifest
    from train.modeling import load_hf_tokenizer

    shards = _shards(tmp_path / "traj")
    plain = data.pack(shards, tmp_path / "plain", tokenizer_dir=tiny_checkpoint, seq_len=512, heldout_fraction=0.0, progress=False)
    chars = data.pack(shards, tmp_path / "chars", tokenizer_dir=tiny_checkpoint, seq_len=512, heldout_fraction=0.0, progress=False,
                      value_chars=True)  # fmt: skip
    assert not plain.value_chars and "value_chars" not in json.loads((tmp_path / "plain" / "pack.json").read_text())
    assert chars.value_chars and Manifest.load(tmp_path / "chars").value_chars
    assert V.folder_value_chars(tmp_path / "chars" / "tokenizer") and not V.folder_value_chars(tmp_path / "plain" / "tokenizer")
    assert plain.tokenizer_sha256 == chars.tokenizer_sha256  # same vocabulary, another way of cutting values
    p, c = plain.splits["train"], chars.splits["train"]
    assert (p.trajectories, p.states) == (c.trajectories, c.states) and c.tokens > p.tokens
    # a given tokenizer is marked with the data's choice (fine-tuning), without repacking
    tok = load_hf_tokenizer(tiny_checkpoint)
    assert data.ensure_packed(tmp_path / "chars", tmp_path / "run0", tok, 512, "states", 0.0, 0, True) == tmp_path / "chars"
    assert V.value_chars_enabled(tok)
    # training copies the flag into the model folder; a model without it is served as before
    train(TrainConfig(data=tmp_path / "chars", out=tmp_path / "run", config_file=micro_config, steps=1, eval_states=1,
                      eval_sequences=1, progress=False, threads=1))  # fmt: skip
    assert V.folder_value_chars(tmp_path / "run")
    assert V.value_chars_enabled(load_hf_tokenizer(tmp_path / "run"))


def _flagged(tiny_checkpoint: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "flagged"
    shutil.copytree(tiny_checkpoint, folder)
    V.write_value_chars(folder, True)
    return folder


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_flagged_model_generates_string_contents_one_character_per_token(tiny_checkpoint, tmp_path, temperature):
    from model.backends.hf import HFBackend, token_bytes_table
    from model.decode.constraints import RegexConstraint

    backend = HFBackend(_flagged(tiny_checkpoint, tmp_path), seed=3)
    assert backend.value_chars
    tok = backend.tokenizer
    table = token_bytes_table(tok, len(tok))
    letters = [t for t in table if t and len(t) > 1 and t.isalpha()]
    assert letters  # the vocabulary has multi-letter tokens the constraint would allow
    head = '<|reason_step|><|call_sep|><module><|line_sep|>1{"s":"'
    constraint = RegexConstraint(f"{re.escape(head)}'[a-z ]{{4,14}}'\"}}")
    prompt = V.encode_text(tok, L.render_header("s = 'hello there'\n", []) + L.render_state(State(
        reason=StopReason.ENTRY, frames=[Frame(name="<module>", line=1, source="")])) + L.STEP_INTO)  # fmt: skip
    stop = tok.convert_tokens_to_ids(L.STATE_END)
    for _ in range(3):
        gen = backend.generate(prompt, max_tokens=160, temperature=temperature, stop_ids=[stop], constraint=constraint)
        assert constraint.complete(gen.text), gen.text
        content = gen.text[len(head) + 1 : -3]
        pieces = [table[i].decode() for i in gen.token_ids]
        at, inside = 0, []
        for piece in pieces:
            if len(head) + 1 <= at < len(head) + 1 + len(content):
                inside.append(piece)
            at += len(piece)
        assert inside == list(content)  # as training writes it (a random model may spell the special tokens out)


def test_flagged_session_keeps_value_chars_ids(tiny_checkpoint, tmp_path):
    """Given states and predicted ones alike stand in the prompt as training writes them (value chars)."""
    from model.session import NeuralDebugger

    program = "s = 'total'\nt = s + ' fact'\nu = t.upper()\nv = [u, 'x']\n"  # words the tiny vocabulary merged
    session = NeuralDebugger.from_checkpoint(_flagged(tiny_checkpoint, tmp_path), program, max_state_tokens=96)
    session.start()
    for step in _trajectory(program, 3).steps:
        session.append(step.action, step.state)
    session.step(Action(kind=ActionKind.STEP_INTO))  # predicted by the (random) flagged model
    tok = session.tokenizer
    prompt = session._prompt_ids(Action(kind=ActionKind.STEP_INTO))
    start = session._window  # the window the prompt starts from (a new listing starts one)
    text = L.render_header(program, [], session._listing) + L.render_state(session._records[start].state, None)
    for action, record in zip(session._actions[start:], session._records[start + 1 :]):
        record_text = tok.decode(record.ids, skip_special_tokens=False)
        assert record.ids == V.encode_text(tok, record_text)
        text += L.render_action(action) + record_text
    text += L.STEP_INTO
    assert "total fact" in text and prompt == V.encode_text(tok, text) != tok.encode(text, add_special_tokens=False)
