"""train.eval.rank_study: the kept answers of a CruxEval-I run, ranked again under other evidence weights."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from train.eval.cli import app
from train.eval.rank_study import RankStudyError, chosen, chosen_state, oracle, read_kept, rerank, rerank_states, states_oracle


def _answer(likelihood: float, violations: int, passed: bool, greedy: bool = False, prediction: str | None = "") -> dict:
    prediction = repr(str(likelihood)) if prediction == "" else prediction  # distinct answers have distinct arguments
    return {"prediction": prediction, "likelihood": likelihood, "violations": violations, "greedy": greedy, "passed": passed}


# problem a: the likeliest answer contradicts two uses and fails; the next one passes
# problem b: the likeliest answer passes and contradicts one use; another wrong answer is a little less likely
# problem c: every answer fails; problem d: no answer at all (the step failed)
RECORDS = [
    {"id": "a", "prediction": "'-1.0'", "passed": False, "candidates": [_answer(-1.0, 2, False, greedy=True), _answer(-3.0, 0, True), _answer(-30.0, 0, True)]},
    {"id": "b", "prediction": "'-2.0'", "passed": True, "candidates": [_answer(-2.0, 1, True, greedy=True), _answer(-4.0, 0, False)]},
    {"id": "c", "prediction": "'-2.0'", "passed": False, "candidates": [_answer(-2.0, 0, False, greedy=True), _answer(-1.0, 0, False, prediction=None)]},
    {"id": "d", "prediction": None, "passed": False, "note": "SessionError: ..."},
]


def test_weights_trade_likelihood_against_contradicted_uses() -> None:
    assert chosen(RECORDS[0]["candidates"], 0.0)["likelihood"] == -1.0
    assert chosen(RECORDS[0]["candidates"], 1.5)["likelihood"] == -3.0
    none = rerank(RECORDS, 0.0)
    assert (none.passed, none.problems, none.gained, none.lost) == (1, 4, 0, 0)
    weighed = rerank(RECORDS, 1.5)  # a: -4 vs -3 -> the passing one; b: -3.5 vs -4 -> still the passing one
    assert (weighed.passed, weighed.gained, weighed.lost) == (2, 1, 0)
    heavy = rerank(RECORDS, 8.0)  # b: -10 vs -4 -> the wrong one
    assert (heavy.passed, heavy.gained, heavy.lost) == (1, 1, 1)
    assert oracle(RECORDS) == 2


def test_ties_keep_the_greedy_answer_and_an_answer_without_arguments_fails() -> None:
    tie = [_answer(-2.0, 0, False), _answer(-2.0, 0, True, greedy=True)]
    assert chosen(tie, 8.0)["passed"] is True
    assert chosen(RECORDS[2]["candidates"], 0.0)["prediction"] is None  # the likeliest state had no arguments
    assert rerank([RECORDS[2]], 0.0).passed == 0


def test_files_without_kept_answers_are_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"id": "a", "passed": True}) + "\n")
    with pytest.raises(RankStudyError, match="--keep-candidates"):
        read_kept(plain)
    with pytest.raises(RankStudyError, match="cannot read"):
        read_kept(tmp_path / "missing.jsonl")
    result = CliRunner().invoke(app, ["rerank", str(plain)])
    assert result.exit_code == 2 and "--keep-candidates" in result.output


def test_cli_reports_each_weight(tmp_path: Path) -> None:
    kept = tmp_path / "predictions.jsonl"
    kept.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    result = CliRunner().invoke(app, ["rerank", str(kept), "--evidence-weight", "0", "--evidence-weight", "1.5"])
    assert result.exit_code == 0, result.output
    assert "evidence weight 0: 1/4 (25.00%), 0 gained and 0 lost" in result.output
    assert "evidence weight 1.5: 2/4 (50.00%), 1 gained and 0 lost" in result.output
    assert "a passing answer among the kept ones: 2/4" in result.output


def test_cli_writes_the_run_as_ranked_with_another_weight(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    (run / "summary.json").write_text(json.dumps({"pass@1": 25.0, "n": 4, "passed": 1, "mode": "input", "evidence_weight": 0.0, "sample_seed": 3}))
    out = tmp_path / "ranked"
    result = CliRunner().invoke(app, ["rerank", str(run / "predictions.jsonl"), "--evidence-weight", "1.5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["passed"], summary["n"], summary["evidence_weight"], summary["sample_seed"]) == (2, 4, 1.5, 3)
    assert summary["ranked_offline"]["from_evidence_weight"] == 0.0
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert records[0]["passed"] and records[0]["reranked"] and records[0]["how"] == "passed"
    assert "reranked" not in records[1] and records[3] == RECORDS[3]
    two = CliRunner().invoke(app, ["rerank", str(run / "predictions.jsonl"), "--evidence-weight", "1", "--evidence-weight", "2", "--out", str(out)])
    assert two.exit_code == 2 and "exactly one" in two.output


def _state(likelihood: float, stale: bool, matched: bool, greedy: bool = False) -> dict:
    return {"text": str(likelihood), "likelihood": likelihood, "greedy": greedy, "stale": stale, "chosen": greedy, "matched": matched, "fields": []}


# a: the likeliest answer loops back changing nothing and is wrong; b: the same, but it is right; c: one answer, no candidates
STATES = [
    {"action": "breakpoint", "matched": False, "candidates": [_state(-1.0, True, False, greedy=True), _state(-2.0, False, True)]},
    {"action": "continue", "matched": True, "candidates": [_state(-1.0, True, True, greedy=True), _state(-5.0, False, False)]},
    {"action": "step_into", "matched": True},
]


def test_stale_penalties_trade_likelihood_against_a_loop_back_that_changed_nothing(tmp_path: Path) -> None:
    assert chosen_state(STATES[0]["candidates"], 0.0)["likelihood"] == -1.0
    assert chosen_state(STATES[0]["candidates"], 3.0)["likelihood"] == -2.0
    none, some, heavy = rerank_states(STATES, 0.0), rerank_states(STATES, 3.0), rerank_states(STATES, 10.0)
    assert (none.matched, none.questions, none.gained, none.lost) == (2, 3, 0, 0)
    assert (some.matched, some.gained, some.lost) == (3, 1, 0) and some.by_action == {"breakpoint": 1, "continue": 1, "step_into": 1}
    assert (heavy.matched, heavy.gained, heavy.lost) == (2, 1, 1)
    assert states_oracle(STATES) == 3
    run = tmp_path / "predictions.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in STATES))
    result = CliRunner().invoke(app, ["rerank-states", str(run), "--stale-penalty", "0", "--stale-penalty", "3"])
    assert result.exit_code == 0, result.output
    assert "stale penalty 0: 2/3" in result.output and "stale penalty 3: 3/3" in result.output and "among the kept ones: 3/3" in result.output
    cruxeval = tmp_path / "crux.jsonl"
    cruxeval.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    assert CliRunner().invoke(app, ["rerank-states", str(cruxeval)]).exit_code == 2


# two runs of problems x and y: on x, run A keeps a wrong answer, run B draws the right one more surely;
# on y, run B kept nothing and A's likelier answer contradicts a use
RUN_A = [
    {"id": "x", "prediction": "'p'", "passed": False, "candidates": [_answer(-1.0, 0, False, True, "'p'"), _answer(-1.5, 0, True, prediction="'q'")]},
    {"id": "y", "prediction": "'t'", "passed": False, "candidates": [_answer(-1.0, 1, True, True, "'s'"), _answer(-2.0, 0, False, prediction="'t'")]},
]
RUN_B = [
    {"id": "x", "prediction": "'q'", "passed": True, "candidates": [_answer(-0.2, 0, True, True, "'q'"), _answer(-2.0, 0, False, prediction="'r'")]},
    {"id": "y", "prediction": None, "passed": False, "note": "SessionError: ..."},
]


def test_pooled_answers_are_scored_by_the_mean_over_the_runs_that_drew_them() -> None:
    from train.eval.rank_study import pool, pooled_choice

    assert pooled_choice([RUN_A[0]["candidates"], RUN_B[0]["candidates"]], 32.0)["prediction"] == "'q'"  # mean -0.85 beats -1.0
    assert pooled_choice([[], []], 32.0) is None
    result = pool([RUN_A, RUN_B], 32.0)
    assert (result.passed, result.problems, result.oracle, result.alone) == (1, 2, 2, (0, 1))
    assert pool([RUN_A, RUN_B], 0.0).passed == 2  # y: 's' is likelier once its contradicted use costs nothing
    with pytest.raises(RankStudyError, match="two runs"):
        pool([RUN_A], 32.0)
    with pytest.raises(RankStudyError, match="same problems"):
        pool([RUN_A, RUN_B[::-1]], 32.0)


def test_cli_pools_runs(tmp_path: Path) -> None:
    paths = []
    for name, run in (("a", RUN_A), ("b", RUN_B)):
        paths.append(tmp_path / f"{name}.jsonl")
        paths[-1].write_text("".join(json.dumps(r) + "\n" for r in run))
    result = CliRunner().invoke(app, ["pool", *map(str, paths)])
    assert result.exit_code == 0, result.output
    assert "pooled 2 runs: 1/2 (50.00%); each alone: 0, 1; a passing answer in the pool: 2" in result.output
    result = CliRunner().invoke(app, ["pool", str(paths[0])])
    assert result.exit_code == 2 and "two runs" in result.output
