"""The model alone next to the full decoding (`model.decoding`): plain keeps well-formedness and control flow, drops the rest."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from model.prompt import language as lang
from model.decode.constraints import state_constraint
from model.decoding import FULL_RULES, PLAIN_RULES, Decoding, rules_for
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason

PROGRAM = "def f(a):\n    b = a + 1\n    return b\n\nx = f(2)\ny = x * 2\n"
STEP_INTO = Action(kind=ActionKind.STEP_INTO)


def _module_stop(line: int, **values: str) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line, source=lang.source_line(PROGRAM, line), locals=dict(values))])


def _body(state: State, previous: State) -> str:
    return lang.render_state(state, previous)[: -len(lang.STATE_END)]


def test_rules_for_names_the_two_decodings() -> None:
    assert rules_for("full") == FULL_RULES and rules_for(Decoding.PLAIN) == PLAIN_RULES
    assert not any(vars(PLAIN_RULES).values()) and all(vars(FULL_RULES).values())
    with pytest.raises(ValueError):
        rules_for("greedy")


def test_plain_drops_the_frame_names_but_keeps_control_flow() -> None:
    previous = _module_stop(1)
    after = _module_stop(5)  # stepping over `def f` stops on line 5
    leaked = _module_stop(5, x="3")  # x is bound only once line 5 has run: frame names forbid it here
    for rules in (FULL_RULES, PLAIN_RULES):
        constraint = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.STEP_OVER), rules=rules)
        assert constraint.complete(_body(after, previous))
        assert not constraint.complete(_body(_module_stop(6), previous))  # line 6 cannot follow line 1: control flow, in both
    full = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.STEP_OVER), rules=FULL_RULES)
    plain = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.STEP_OVER), rules=PLAIN_RULES)
    assert not full.complete(_body(leaked, previous)) and plain.complete(_body(leaked, previous))


def test_plain_drops_the_known_arguments_of_a_call() -> None:
    previous = _module_stop(5)
    entered = State(reason=StopReason.STEP, frames=[Frame(name="f", line=2, source="    b = a + 1", locals={"a": "7"}), previous.frames[0]])
    full = state_constraint(PROGRAM, previous, action=STEP_INTO, rules=FULL_RULES)
    plain = state_constraint(PROGRAM, previous, action=STEP_INTO, rules=PLAIN_RULES)
    assert not full.complete(_body(entered, previous))  # f(2): the call's literal fixes a (model.call_args)
    assert plain.complete(_body(entered, previous))


def test_plain_inverse_call_places_the_first_stop_with_any_locals() -> None:
    later = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=5, source="x = f(2)")], return_value=ReturnValue(name="f", value="3"))
    entry = State(reason=StopReason.STEP, frames=[Frame(name="f", line=2, source="    b = a + 1", locals={"q": "1"}),
                                                  Frame(name="<module>", line=5, source="x = f(2)")])  # fmt: skip
    action = Action(kind=ActionKind.INV_STEP_CALL)
    full = state_constraint(PROGRAM, later, action=action, rules=FULL_RULES)
    plain = state_constraint(PROGRAM, later, action=action, rules=PLAIN_RULES)
    text = _body(entry, later)
    assert not full.complete(text) and plain.complete(text)  # f's only entry local is a
    wrong_line = text.replace(f"f{lang.LINE_SEP}2", f"f{lang.LINE_SEP}3")
    assert not plain.complete(wrong_line)  # still the first line of f


def test_a_plain_session_draws_one_answer_alone(tiny_checkpoint: Path) -> None:
    from model.session import NeuralDebugger

    full = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, call_candidates=8, coarse_candidates=4)
    plain = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, call_candidates=8, coarse_candidates=4, decoding=Decoding.PLAIN)
    assert full._candidate_count(ActionKind.INV_STEP_CALL) == 8 and full._candidate_count(ActionKind.STEP_RETURN) == 4
    assert plain._candidate_count(ActionKind.INV_STEP_CALL) == 1 and plain._candidate_count(ActionKind.STEP_RETURN) == 1
    plain.start()
    state = plain.step(Action(kind=ActionKind.STEP_OVER))
    assert state.finished or state.frames[0].line in (5, 6)  # well formed and where control flow allows
    assert plain.ranking == []  # nothing ranked


def test_eval_records_the_decoding(tiny_checkpoint: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from train.eval.cli import app

    (tmp_path / "p.py").write_text(PROGRAM)
    for decoding in ("plain", "full"):
        out = tmp_path / decoding
        result = CliRunner().invoke(app, ["fidelity", "--programs", str(tmp_path / "p.py"), "--model", str(tiny_checkpoint), "--out", str(out),
                                          "--scripts", "1", "--max-steps", "2", "--max-state-tokens", "16", "--no-progress", "--decoding", decoding])  # fmt: skip
        assert result.exit_code == 0, result.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["decoding"] == decoding
        assert summary["call_candidates"] == (1 if decoding == "plain" else 8)
    result = CliRunner().invoke(app, ["fidelity", "--programs", str(tmp_path / "p.py"), "--out", str(tmp_path / "x"), "--decoding", "greedy"])
    assert result.exit_code != 0


def test_results_and_card_show_the_model_alone_beside_the_full_decoding(tmp_path: Path) -> None:
    from train.eval.alone import alone_lines
    from train.eval.plots import make_all

    def run(name: str, location: float, state: float) -> None:
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps({"overall": {"stops": 40, "location": location, "locals": 0.5, "state": state}}))

    run("next-state", 0.9, 0.6)
    run("next-state-plain", 0.8, 0.4)
    run("realworld-long", 0.7, 0.3)  # no plain run: no row
    lines = alone_lines({p.name: json.loads((p / "summary.json").read_text()) for p in tmp_path.iterdir()})
    rows = [line for line in lines if line.startswith("| next-state")]
    assert rows == ["| next-state, held-out synthetic (teacher-forced) | 40 | 90.0 / 60.0 | 80.0 / 40.0 |"]
    assert not any(line.startswith("| real") for line in lines)
    make_all(tmp_path)
    assert rows[0] in (tmp_path / "RESULTS.md").read_text()
    assert alone_lines({"next-state": {"overall": {}}}) == []
