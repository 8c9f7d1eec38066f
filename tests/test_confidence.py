"""Confidence: spans of a state text, raw scores from log-probs, calibration fits, the session's confidences.

Real tokenizer and tiny real checkpoints (tests/conftest.py); log-probs chosen by the test where a
test needs known numbers (a `Generation` is plain data).
"""
from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.prompt import language as lang
from model.backends.base import Generation
from model.backends.hf import HFBackend
from model.decode.confidence import (
    CALIBRATION_FILE, Calibration, FieldMap, expected_calibration_error, fit_field, fit_isotonic, fit_temperature,
    code_kind, layout, raw_scores, token_ends,
)
from model.session import NeuralDebugger, StateRecord
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason

PROGRAM = "def f(a):\n    b = [a, 2]\n    return b\n\nx = f(1)\ny = {'k': x}\n"


def _state(line: int, name: str = "<module>", values: dict[str, str] | None = None, outer: dict[str, str] | None = None) -> State:
    frames = [Frame(name=name, line=line, source=lang.source_line(PROGRAM, line), locals=values or {})]
    if outer is not None:
        frames.append(Frame(name="<module>", line=5, source=lang.source_line(PROGRAM, 5), locals=outer))
    return State(reason=StopReason.STEP, frames=frames)


def test_layout_finds_location_pairs_and_kept_marker() -> None:
    before = _state(2, "f", {"a": "1"}, outer={})
    after = _state(3, "f", {"a": "1", "b": "[1, 2]"}, outer={})
    after.return_value = None
    text = lang.render_state(after, before)
    shape = layout(text)
    assert len(shape.frames) == 2
    inner = shape.frames[1]
    assert set(inner.pairs) == {"b"} and inner.rest is not None
    start, end = inner.values["b"]
    assert json.loads(text[start:end]) == "[1, 2]"
    assert text[inner.rest[0]:inner.rest[1]] == ".."
    location = "".join(text[a:b] for a, b in shape.location)
    assert "f" in location and lang.LINE_SEP + "3" in location
    assert '"b"' not in location and "[1, 2]" not in location  # locals are not the location
    full = lang.render_state(_state(6, values={"x": "[1, 2]"}))
    assert layout(full).frames[0].rest is None and set(layout(full).frames[0].pairs) == {"x"}
    returned = _state(5, values={})
    returned.return_value = ReturnValue(name="f", value="[1, 2]")
    shape = layout(lang.render_state(returned))
    assert shape.return_value is not None and "[1, 2]" in lang.render_state(returned)[slice(*shape.return_value)]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12))
def test_layout_of_any_value_text(name: str, value: str) -> None:
    """Quotes, braces, backslashes and "|" in names and values never confuse the spans."""
    if not name or lang.NAME_FORBIDDEN_RE.search(name) or "\x00" in name:
        return
    text = lang.render_state(_state(6, values={name: value}))
    frame = layout(text).frames[0]
    start, end = frame.values[name]
    assert json.loads(text[start:end]).replace("\\u007c", "|") == value.replace("\\u007c", "|")


def test_raw_scores_sum_the_right_tokens(tiny_checkpoint: Path) -> None:
    backend = HFBackend(tiny_checkpoint)
    tok = backend.tokenizer
    previous = _state(2, "f", {"a": "1"}, outer={})
    text = lang.render_state(_state(3, "f", {"a": "1", "b": "[1, 2]"}, outer={}), previous).removesuffix(lang.STOP_TOKEN)
    ids = tok.encode(text, add_special_tokens=False)
    ends = token_ends(tok, ids)
    assert ends[-1] == len(text)
    shape = layout(text)
    rng = random.Random(0)
    logprobs = [-rng.random() for _ in ids]
    scores = raw_scores(tok, ids, logprobs, text)
    starts = [0, *ends[:-1]]

    def expected(spans: list[tuple[int, int]]) -> float:
        return math.exp(sum(lp for s, e, lp in zip(starts, ends, logprobs) if any(e > a and s < b for a, b in spans)))

    assert scores.location == pytest.approx(expected(shape.location))
    assert scores.frames[1]["b"] == pytest.approx(expected([shape.frames[1].pairs["b"]]))
    assert scores.rest[1] == pytest.approx(expected([shape.frames[1].rest]))
    assert scores.variable(1, "a", earlier=0.5) == min(0.5, scores.rest[1])  # kept: the weaker of '..' and its earlier score
    assert scores.variable(1, "a", earlier=1.0) == scores.rest[1]
    assert scores.variable(1, "b", earlier=0.5) == scores.frames[1]["b"]
    backend.close()


# ------------------------------------------------------------------------------ calibration fits


def _distorted(n: int, seed: int, power: float) -> tuple[list[float], list[bool]]:
    """Raw confidences p whose true accuracy is p ** power (an over-confident model for power > 1)."""
    rng = random.Random(seed)
    confs = [rng.random() ** 0.5 for _ in range(n)]
    return confs, [rng.random() < p**power for p in confs]


def test_fits_repair_an_overconfident_model() -> None:
    fit = _distorted(4000, 1, 3.0)
    held = _distorted(4000, 2, 3.0)
    raw = expected_calibration_error(*held)
    assert raw > 0.15
    for mapping in (fit_temperature(*fit), fit_isotonic(*fit)):
        assert expected_calibration_error([mapping(p) for p in held[0]], held[1]) < 0.05
    chosen = fit_field(fit, held)
    assert chosen.ece[chosen.name] == min(chosen.ece.values()) and chosen.name != "raw"
    binned = fit_isotonic(*fit, bins=10)
    assert len(binned.xs) <= 10 and expected_calibration_error([binned(p) for p in held[0]], held[1]) < 0.05


def test_temperature_fit_survives_certain_and_impossible_raw_scores() -> None:
    """Raw 0 (a prediction cut off) and 1 make huge logits: the damped fit still lowers the log-loss and stays finite."""
    confs = [0.0] * 50 + [1.0] * 300 + [0.5] * 100
    rng = random.Random(4)
    correct = [rng.random() < 0.3 for _ in range(50)] + [rng.random() < 0.9 for _ in range(300)] + [rng.random() < 0.5 for _ in range(100)]
    mapping = fit_temperature(confs, correct)
    assert mapping.method == "temperature" and math.isfinite(mapping.temperature) and math.isfinite(mapping.bias)
    assert expected_calibration_error([mapping(p) for p in confs], correct) < expected_calibration_error(confs, correct)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60))
def test_isotonic_map_is_monotone_and_bounded(points: list[tuple[float, bool]]) -> None:
    mapping = fit_isotonic([p for p, _ in points], [ok for _, ok in points])
    grid = [i / 50 for i in range(51)]
    values = [mapping(x) for x in grid]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert all(a <= b + 1e-12 for a, b in zip(values, values[1:]))
    temperature = fit_temperature([p for p, _ in points], [ok for _, ok in points])
    assert all(0.0 <= temperature(x) <= 1.0 for x in grid)


def test_calibration_file_round_trip_and_bad_files(tmp_path: Path) -> None:
    assert Calibration.load(tmp_path).location(0.3) == 0.3  # absent: identity
    (tmp_path / CALIBRATION_FILE).write_text("{not json")
    assert Calibration.load(tmp_path).variable(0.7) == 0.7  # unreadable: identity
    saved = Calibration(fields={"location": FieldMap(method="temperature", temperature=2.0, bias=0.5),
                                "variable": FieldMap(method="isotonic", xs=[0.1, 0.9], ys=[0.2, 0.6])})
    saved.save(tmp_path)
    loaded = Calibration.load(tmp_path)
    assert loaded == saved
    assert loaded.variable(0.5) == pytest.approx(0.4) and loaded.variable(0.0) == 0.2 and loaded.variable(1.0) == 0.6
    assert loaded.location(0.5) == pytest.approx(1 / (1 + math.exp(-0.5)))


def test_code_kinds_and_maps_by_kind(tmp_path: Path) -> None:
    assert code_kind(PROGRAM) == "self-contained"
    for program in ("import math\nx = math.pi\n", "def f():\n    from collections import Counter\n    return Counter()\n",
                    "import os\ndef broken(:\n"):  # fmt: skip
        assert code_kind(program) == "imports", program
    assert code_kind("s = 'import os'\n") == "self-contained"  # a string is not an import
    calibration = Calibration(fields={"location": _constant(0.4)}, by_kind={"imports": {"location": _constant(0.1)}})
    assert calibration.location(0.9, "imports") == 0.1 and calibration.location(0.9, "self-contained") == 0.4
    assert calibration.location(0.9) == 0.4 and calibration.variable(0.7, "imports") == 0.7  # no map for the field: identity
    calibration.save(tmp_path)
    assert Calibration.load(tmp_path) == calibration
    (tmp_path / CALIBRATION_FILE).write_text(json.dumps({"version": 1, "fields": {"location": _constant(0.3).model_dump()}}))
    assert Calibration.load(tmp_path).location(0.9, "imports") == 0.3  # a file from before kinds: the pooled maps serve


def test_fit_gives_a_kind_its_own_maps_where_they_beat_the_pooled_ones() -> None:
    """Self-contained programs' questions calibrated as they are, importing ones far overconfident: the importing kind
    gets maps of its own, and its ECE under them is lower than under the pooled map; records without a kind keep the
    pooled maps."""
    from train.eval.calibration import Scored, check, fit

    rng = random.Random(5)
    scored = []
    for i in range(1600):
        kind = "imports" if i % 2 else "self-contained"
        p = rng.uniform(0.2, 1.0)
        truth = p - 0.4 if kind == "imports" else p
        scored.append(Scored(i, 0, "step_into", (i // 2) % 2, (p, rng.random() < truth), [("x", p, rng.random() < truth, "written")], "s", kind))
    calibration, fits = fit(scored)
    assert set(calibration.by_kind) >= {"imports"} and {"location/imports", "variable/imports"} <= set(fits)
    rich = [s for s in scored if s.kind == "imports"]
    pooled_only = Calibration(fields=calibration.fields)
    for name in ("location", "variable"):
        assert check(rich, calibration, half=1)[name]["ece_calibrated"] < check(rich, pooled_only, half=1)[name]["ece_calibrated"]
        assert check(rich, calibration, half=1)[name]["ece_calibrated"] < 0.08
    kindless = [Scored(s.trajectory, s.step, s.action, s.half, s.location, s.variables, s.source) for s in rich]
    assert check(kindless, calibration, half=1) == check(kindless, pooled_only, half=1)


# ------------------------------------------------------------------------------ the session


def _constant(p: float) -> FieldMap:
    return FieldMap(method="isotonic", xs=[0.0, 1.0], ys=[p, p])


def _predicted(session: NeuralDebugger, state: State, previous: State, logprob: float) -> StateRecord:
    """A record as if the model had written `state` with every token at probability exp(logprob)."""
    text = lang.render_state(state, previous).removesuffix(lang.STOP_TOKEN)
    ids = session.tokenizer.encode(text, add_special_tokens=False)
    gen = Generation(token_ids=ids, text=text, logprobs=[logprob] * len(ids))
    return StateRecord(state=state, ids=ids + [session.stop_id], generation=gen, text=text)


def test_session_confidences_chain_calibrate_and_edits_are_certain(tiny_checkpoint: Path) -> None:
    calibration = Calibration(fields={"location": _constant(0.42)})
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, calibration=calibration, max_state_tokens=16)
    first = session.start()
    assert session.stop_confidence() == 1.0 and not session.predicted
    one = _state(6, values={"x": "[1, 2]"})
    session._actions.append(Action(kind=ActionKind.STEP_OVER))
    session._records.append(_predicted(session, one, first, math.log(0.9)))
    assert session.predicted and session.stop_confidence() == 0.42
    conf_x = session.variable_confidence(0)["x"]
    assert 0.0 < conf_x < 0.9  # every token of the pair at 0.9: the pair's probability is a power of 0.9
    two = _state(7, values={"x": "[1, 2]", "y": "{'k': [1, 2]}"})
    session._actions.append(Action(kind=ActionKind.STEP_OVER))
    session._records.append(_predicted(session, two, one, math.log(0.99)))
    kept = session.variable_confidence(0)["x"]
    assert kept == min(conf_x, session._scores(session._records[-1]).rest[0])  # kept: the weaker of '..' and before
    for _ in range(30):  # kept through a long loop, a value does not fade away
        session._actions.append(Action(kind=ActionKind.STEP_OVER))
        session._records.append(_predicted(session, two, two, math.log(0.99)))
    assert session.variable_confidence(0)["x"] == kept
    assert session.confidence() == session.variable_confidence(0)
    session.set_variable("x", "[5]")
    assert session.variable_confidence(0)["x"] == 1.0 and session.variable_confidence(0)["y"] < 1.0
    assert session.alternatives("x") == []  # the user's value has no alternatives
    session.step_back()
    assert session.variable_confidence(0)["x"] == conf_x  # a state shown again keeps its prediction's confidence


def test_a_session_calibrates_by_its_programs_code_kind(tiny_checkpoint: Path) -> None:
    calibration = Calibration(fields={"location": _constant(0.42), "variable": _constant(0.5)},
                              by_kind={"imports": {"location": _constant(0.1), "variable": _constant(0.2)}})  # fmt: skip
    for program, expected in ((PROGRAM, (0.42, 0.5)), ("import math\n" + PROGRAM, (0.1, 0.2))):
        session = NeuralDebugger.from_checkpoint(tiny_checkpoint, program, calibration=calibration, max_state_tokens=16)
        first = session.start()
        one = first.model_copy(update={"reason": StopReason.STEP, "frames": [first.frames[0].model_copy(update={"locals": {"x": "[1, 2]"}})]})
        session._actions.append(Action(kind=ActionKind.STEP_OVER))
        session._records.append(_predicted(session, one, first, math.log(0.9)))
        assert (session.stop_confidence(), session.variable_confidence(0)["x"]) == expected, program
        session.close()


def test_alternatives_are_other_values_with_bounded_confidence(tiny_checkpoint: Path) -> None:
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, max_state_tokens=16, seed=3)
    first = session.start()
    one = _state(6, values={"x": "[1, 2]"})
    session._actions.append(Action(kind=ActionKind.STEP_OVER))
    session._records.append(_predicted(session, one, first, math.log(0.5)))
    found = session.alternatives("x", samples=16, count=5, floor=0.0)
    shown = session.variable_confidence(0)["x"]
    assert found  # an untrained model spreads its probability: sampling finds other values
    assert all(value != "[1, 2]" for value, _ in found)
    assert len({value for value, _ in found}) == len(found)
    assert all(0.0 < p <= 1.0 for _, p in found) and sum(p for _, p in found) <= 1.0 - shown + 1e-9
    assert [p for _, p in found] == sorted((p for _, p in found), reverse=True)


class RecordingBackend(HFBackend):
    """The real transformers backend, keeping every prompt it is given."""

    prompts: list[list[int]]

    def generate(self, prompt_ids: list[int], **kwargs):  # type: ignore[override]
        self.prompts = [*getattr(self, "prompts", []), list(prompt_ids)]
        return super().generate(prompt_ids, **kwargs)


def test_what_if_the_next_prediction_reads_the_edited_container(tiny_checkpoint: Path) -> None:
    backend = RecordingBackend(tiny_checkpoint)
    session = NeuralDebugger(backend, backend.tokenizer, PROGRAM, max_state_tokens=16)
    session.start_from(_state(6, values={"x": "[1, 2]"}))
    session.set_variable("x", "[1, {'new': (3.5, None)}]")
    session.step(Action(kind=ActionKind.STEP_OVER))
    prompt = backend.tokenizer.decode(backend.prompts[-1], skip_special_tokens=False)
    state_part = prompt.rsplit(lang.SRC_SEP, 1)[-1]  # after the listing: the states and the action
    assert json.dumps("[1, {'new': (3.5, None)}]") in state_part and "[1, 2]" not in state_part
    assert prompt.endswith(lang.render_action(Action(kind=ActionKind.STEP_OVER)))
    backend.close()


def test_predict_before_marks_backwards_states(tiny_checkpoint: Path) -> None:
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, max_state_tokens=24)
    session.start()
    from model.session_api import SessionError

    with pytest.raises(SessionError, match="start of the program"):
        session.predict_before(ActionKind.INV_STEP_OVER)
    session.start_from(_state(3, "f", {"a": "1", "b": "[1, 2]"}, outer={}))
    with pytest.raises(SessionError, match="not an inverse action"):
        session.predict_before(ActionKind.STEP_OVER)
    before = session.predict_before(ActionKind.INV_STEP_CALL)
    assert session.predicted_backwards and session.state == before
    assert 0.0 <= session.stop_confidence() <= 1.0
    assert all(0.0 <= p <= 1.0 for p in session.variable_confidence(0).values())


def test_from_checkpoint_loads_the_calibration_file(tiny_checkpoint: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, folder)
    Calibration(fields={"location": _constant(0.25)}).save(folder)
    session = NeuralDebugger.from_checkpoint(folder, PROGRAM, max_state_tokens=8)
    assert session.calibration.location(0.9) == 0.25


@pytest.mark.slow
def test_eval_calibration_command(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """`eval calibration` on held-out synth trajectories: summary per field, diagram, records, calibration.json."""
    import subprocess
    import sys

    from typer.testing import CliRunner

    from train.eval.cli import app

    data = tmp_path / "heldout"
    synth = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "synth", "--count", "12", "--per-program", "2",
                            "--seed", "7", "--out", str(data), "--no-progress"], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert synth.returncode == 0, synth.stderr
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, folder)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["calibration", "--model", str(folder), "--trajectories", str(data), "--out", str(out),
                                      "--limit", "30", "--max-state-tokens", "24", "--write-calibration", "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    for name in ("location", "variable"):
        field = summary["fields"][name]
        assert field["method"] in ("raw", "temperature", "isotonic", "isotonic-binned")
        assert 0.0 <= field["ece_calibrated"] <= field["ece_raw"] + 1e-9  # the chosen map is never worse on the held-out half
        assert field["n_fit"] + field["n_eval"] > 0
    assert summary["fields"]["location"]["n_eval"] > 0
    assert (out / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == summary["questions"] > 0 and {r["half"] for r in records} == {0, 1}
    written = Calibration.load(folder)
    assert written.fields["location"].method == {"raw": "identity", "isotonic-binned": "isotonic"}.get(
        summary["fields"]["location"]["method"], summary["fields"]["location"]["method"])
    assert written.report["location"]["ece_calibrated"] == summary["fields"]["location"]["ece_calibrated"]
    missing = CliRunner().invoke(app, ["calibration", "--model", str(folder), "--trajectories", str(tmp_path / "nothing"), "--out", str(out)])
    assert missing.exit_code == 2 and "no trajectories" in missing.output
    refit = tmp_path / "refit"
    again = CliRunner().invoke(app, ["calibration", "--model", str(folder), "--trajectories", str(data), "--out", str(refit),
                                     "--records", str(out / "records.jsonl")])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert json.loads((refit / "summary.json").read_text())["fields"] == summary["fields"]  # same scores, same fit
    (tmp_path / "bad.jsonl").write_text('{"trajectory": 1}\n')
    bad = CliRunner().invoke(app, ["calibration", "--model", str(folder), "--trajectories", str(data), "--out", str(refit),
                                   "--records", str(tmp_path / "bad.jsonl")])  # fmt: skip
    assert bad.exit_code == 2 and "line 1" in bad.output


def test_calibration_pools_sets_and_checks_calibrations_on_others(tmp_path: Path) -> None:
    """Refit from the records of two sets (each ECE reported on its own), then measure calibrations on records of a third."""
    import random

    from typer.testing import CliRunner

    from train.eval.calibration import Scored
    from train.eval.cli import app

    rng = random.Random(3)

    def write(name: str, bias: float) -> Path:  # an overconfident model: right with probability p - bias
        folder = tmp_path / name
        folder.mkdir()
        lines = []
        for i in range(200):
            p = rng.uniform(0.3, 1.0)
            variables = [("x", p, rng.random() < p - bias, "written")]
            lines.append(json.dumps(Scored(i, 0, "step_into", i % 2, (p, rng.random() < p - bias), variables).to_json()))
        (folder / "records.jsonl").write_text("\n".join(lines) + "\n")
        return folder / "records.jsonl"

    synth, real, hand = write("synth-dev", 0.0), write("real-dev", 0.25), write("hand", 0.25)
    out = tmp_path / "fit"
    result = CliRunner().invoke(app, ["calibration", "--records", str(synth), "--records", str(real), "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["by_source"]) == {"synth-dev", "real-dev"} and summary["questions"] == 400
    assert (out / "calibration.json").is_file() and "real-dev: location ECE" in result.output
    only_synth = tmp_path / "fit-synth"
    assert CliRunner().invoke(app, ["calibration", "--records", str(synth), "--out", str(only_synth)]).exit_code == 0
    table_file = tmp_path / "check.json"
    check = CliRunner().invoke(app, ["calibration-check", "--records", str(hand), "--calibration", str(only_synth),
                                     "--calibration", str(out / "calibration.json"), "--out", str(table_file)])  # fmt: skip
    assert check.exit_code == 0, check.output
    table = json.loads(table_file.read_text())[str(hand)]
    before, after = table[str(only_synth)]["location"], table[str(out / "calibration.json")]["location"]
    assert before["n"] == after["n"] == 200 and after["ece_calibrated"] < before["ece_calibrated"]  # real code in the fit helps on real code
    missing = CliRunner().invoke(app, ["calibration-check", "--records", str(hand), "--calibration", str(tmp_path / "none.json")])
    assert missing.exit_code == 2 and "cannot read the calibration" in missing.output
