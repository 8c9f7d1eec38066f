"""CruxEval evaluation: posing, the sandboxed scoring harness, the oracle path and the model path."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from protocol.debugger import Action, ActionKind
from tracegen.posing import join_arguments
from tracegen.sandbox import Limits
from train.eval import cruxeval as cx
from train.eval.cli import DEFAULT_PROBLEMS, ModelSessions, Ranking

PROBLEM = cx.Problem(id="t0", code="def f(a, b=2, *rest, k, **kw):\n    if a:\n        return a + b\n    return b", input="1, 3, k=0", output="4")
FAST = Limits(cpu_seconds=2, wall_seconds=2.0)


def test_pose_output_shape() -> None:
    posed = cx.pose(PROBLEM, "output")
    assert posed.program == PROBLEM.code + "\n\nresult = f(1, 3, k=0)\n"
    assert posed.call_line == 6
    assert posed.return_lines == (3, 4)
    assert posed.params == (("a", "pos"), ("b", "pos"), ("rest", "var"), ("k", "kwonly"), ("kw", "varkw"))
    compile(posed.program, "<posed>", "exec")


def test_pose_input_hides_the_input() -> None:
    posed = cx.pose(PROBLEM, "input")
    assert posed.program.endswith("\n\nresult = f(...)\n")
    assert "1, 3" not in posed.program


def test_return_state_is_on_the_calling_line() -> None:
    state = cx.return_state(cx.pose(PROBLEM, "input"), "4")
    assert state.location == [("<module>", 6)] and state.return_value is not None and state.return_value.value == "4"


def test_join_arguments_in_signature_order() -> None:
    params = cx.pose(PROBLEM, "output").params
    values = {"kw": "{'z': 1}", "k": "0", "rest": "(5,)", "b": "3", "a": "1"}
    assert join_arguments(params, values) == "1, 3, *(5,), k=0, **{'z': 1}"
    assert join_arguments(params, {"a": "1"}) is None


def test_check_output_correct_and_wrong() -> None:
    assert cx.check_output(PROBLEM, "4", FAST) == cx.CheckResult(True, "passed")
    wrong = cx.check_output(PROBLEM, "5", FAST)
    assert not wrong.passed and wrong.how == "failed" and "AssertionError" in wrong.detail


def test_check_input_correct_and_wrong() -> None:
    assert cx.check_input(PROBLEM, "2, 2, k=1", FAST).passed
    assert not cx.check_input(PROBLEM, "0, 3, k=1", FAST).passed


def test_check_prediction_that_loops_forever_times_out() -> None:
    looping = cx.check_output(PROBLEM, "[x for x in iter(int, 1)]", FAST)
    assert not looping.passed and looping.how == "timeout"


def test_check_prediction_with_syntax_error_is_invalid() -> None:
    for bad in ("[1, 2", "4\nimport os", "1) or (True"):
        result = cx.check_output(PROBLEM, bad, FAST)
        assert not result.passed and result.how == "invalid"
    assert cx.check_input(PROBLEM, "1, k=", FAST).how == "invalid"
    assert cx.check_output(PROBLEM, None, FAST).how == "invalid"


def test_load_problems_errors(tmp_path: Path) -> None:
    with pytest.raises(cx.ProblemsError, match="cannot read"):
        cx.load_problems(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    with pytest.raises(cx.ProblemsError, match="bad.jsonl:1"):
        cx.load_problems(bad)


@pytest.fixture(scope="module")
def real_problems() -> list[cx.Problem]:
    problems = cx.load_problems(DEFAULT_PROBLEMS)
    assert len(problems) == 800
    # plain, one-line f, module statements, globals, multi-line return, comprehension on the return line, recursion
    picked = ["sample_0", "sample_17", "sample_51", "sample_280", "sample_66", "sample_288", "sample_531"]
    return [p for p in problems if p.id in picked]


@pytest.mark.parametrize(("mode", "via"), [("output", "step_return"), pytest.param("output", "breakpoint", marks=pytest.mark.slow),
                                           pytest.param("output", "fine", marks=pytest.mark.slow), ("input", "step_return")])
def test_oracle_passes_real_problems(real_problems: list[cx.Problem], mode: str, via: str) -> None:
    sessions = ModelSessions(None, "oracle", vllm_url=None, max_state_tokens=64, constrained=True, threads=1)
    records = [cx.evaluate_problem(p, mode, via, sessions, oracle=True) for p in real_problems]  # type: ignore[arg-type]
    assert [r["passed"] for r in records] == [True] * len(records), records


def test_model_path_runs_on_a_tiny_model(tiny_checkpoint: Path) -> None:
    """Both modes go through a real (tiny, random) model: the session steps; an output answer that is
    missing says where the session went instead; an input answer is f's arguments in signature order
    (read from the predicted entry locals), scored by the sandboxed check."""
    sessions = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=12, constrained=True, threads=1)
    records = {mode: cx.evaluate_problem(PROBLEM, mode, "step_return", sessions) for mode in ("output", "input")}  # type: ignore[arg-type]
    sessions.close()
    for record in records.values():
        assert set(record) >= {"id", "prediction", "passed", "how", "steps"} and record["steps"] >= 1, record
        json.dumps(record)
    output = records["output"]
    assert output["prediction"] is not None or "calling line 6" in output["note"], output
    answer = records["input"]["prediction"]
    assert answer is not None and re.fullmatch(r"[^,]+, [^,]+, \*[^,]+, k=[^,]+, \*\*.+", answer), records["input"]
    assert records["input"]["passed"] is cx.check_input(PROBLEM, answer, FAST).passed


def test_kept_candidates_are_the_sessions_ranked_answers_each_checked(tiny_checkpoint: Path) -> None:
    sessions = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=24, constrained=True, threads=1)
    sessions.set_ranking(Ranking(call_candidates=3))
    record = cx.evaluate_problem(PROBLEM, "input", "step_return", sessions, keep_candidates=True)  # type: ignore[arg-type]
    json.dumps(record)
    kept = record.get("candidates")
    if kept is None:  # the step itself failed (a tiny random model): the note says why
        assert record.get("note")
    else:
        assert 1 <= len(kept) <= 3 and sum(c["greedy"] for c in kept) <= 1
        for answer in kept:
            assert answer["passed"] == cx.check_input(PROBLEM, answer["prediction"]).passed
            assert answer["likelihood"] <= 0 and answer["violations"] >= 0
        if record["prediction"] is not None:
            assert record["prediction"] in [c["prediction"] for c in kept]
        from model.decode.rerank import EVIDENCE_WEIGHT
        from train.eval.rank_study import rerank

        assert rerank([record], EVIDENCE_WEIGHT).passed == record["passed"]  # ranked again offline: the run's own choice
    plain = cx.evaluate_problem(PROBLEM, "input", "step_return", sessions)  # type: ignore[arg-type]
    assert "candidates" not in plain
    sessions.close()


def test_kept_output_candidates_are_the_return_values_of_the_last_ranked_step() -> None:
    from model.decode.rerank import Candidate
    from protocol.debugger import Frame, ReturnValue, State, StopReason

    posed = cx.pose(PROBLEM, "output")
    right = cx.return_state(posed, "4")
    wrong = cx.return_state(posed, "'4'")
    elsewhere = State(reason=StopReason.STEP, frames=[Frame(name="f", line=3, source="        return a + b", locals={"a": "1"})],
                      return_value=ReturnValue(name="f", value="4"))  # fmt: skip  (not the calling line: no answer)
    ranking = [(wrong, Candidate("", -1.0, greedy=True)), (right, Candidate("", -2.5)), (elsewhere, Candidate("", -0.5))]
    kept = cx.ranked_returns(PROBLEM, posed, ranking)
    assert [c["prediction"] for c in kept] == ["'4'", "4", None]
    assert [c["passed"] for c in kept] == [False, True, False]
    assert [c["greedy"] for c in kept] == [True, False, False] and kept[1]["likelihood"] == -2.5


def test_kept_output_candidates_in_a_run(tiny_checkpoint: Path) -> None:
    sessions = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=24, constrained=True, threads=1)
    sessions.set_ranking(Ranking(coarse_candidates=3))
    record = cx.evaluate_problem(PROBLEM, "output", "step_return", sessions, keep_candidates=True)  # type: ignore[arg-type]
    json.dumps(record)
    assert len(record["candidates"]) <= 3  # a tiny random model may never reach step_return: then none
    fine = cx.evaluate_problem(PROBLEM, "output", "fine", sessions, keep_candidates=True, fine_budget=2)  # type: ignore[arg-type]
    assert "candidates" not in fine  # no ranked last step
    sessions.close()


def test_fine_posing_counts_every_line_and_honours_its_budget(real_problems: list[cx.Problem]) -> None:
    sessions = ModelSessions(None, "oracle", vllm_url=None, max_state_tokens=64, constrained=True, threads=1)
    recursive = next(p for p in real_problems if p.id == "sample_531")
    posed = cx.pose(recursive, "output")
    session = sessions(posed.program)
    full = cx.predict_output(session, posed, "fine")
    assert full.note is None and cx.check_output(recursive, full.prediction).passed
    # one stop per line event of user code between the call and the return: what the recording holds
    session.start()
    lines = 0
    while not session.step(Action(kind=ActionKind.STEP_INTO)).finished:
        lines += 1
    assert full.steps == lines  # every line event up to the stop on the calling line (the last one before the exit)
    short = cx.predict_output(sessions(posed.program), posed, "fine", fine_budget=2)
    assert short.prediction is None and "within 2 fine steps" in (short.note or "")
    assert short.steps == len(posed.module_lines) + 2


def test_fine_posing_on_a_tiny_model_stays_within_its_budget(tiny_checkpoint: Path) -> None:
    sessions = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=12, constrained=True, threads=1)
    posed = cx.pose(PROBLEM, "output")
    record = cx.evaluate_problem(PROBLEM, "output", "fine", sessions, fine_budget=4)  # type: ignore[arg-type]
    assert record["steps"] <= len(posed.module_lines) + 1 + 4  # module steps, then at most the budget
    assert record["prediction"] is not None or record.get("note")
    json.dumps(record)
    sessions.close()


def test_cli_oracle_input_mode_writes_predictions_and_summary(tmp_path: Path) -> None:
    problems = tmp_path / "p.jsonl"
    problems.write_text(PROBLEM.model_dump_json() + "\n" + PROBLEM.model_copy(update={"id": "t1", "output": "5"}).model_dump_json() + "\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "neural_debugger_cli", "eval", "cruxeval", "--mode", "input", "--backend", "oracle", "--problems", str(problems), "--out", str(out), "--no-progress"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [(r["id"], r["prediction"], r["passed"]) for r in records] == [("t0", "1, 3, *(), k=0, **{}", True), ("t1", "1, 3, *(), k=0, **{}", False)]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pass@1"] == 50.0 and summary["n"] == 2


def test_cli_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "neural_debugger_cli", "eval", "cruxeval", "--backend", "oracle", "--problems", str(tmp_path / "no.jsonl"), "--out", str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 2 and "cannot read the problems file" in done.stderr
    done = subprocess.run(cmd + ["--via", "coarse"], capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 2 and "unknown --via 'coarse'" in done.stderr and "fine" in done.stderr
    cmd[cmd.index("oracle")] = "nonsense"
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 2 and "unknown backend" in done.stderr


def test_cli_two_workers_match_one(tmp_path: Path) -> None:
    problems = tmp_path / "p.jsonl"
    problems.write_text("".join(PROBLEM.model_copy(update={"id": f"t{i}", "input": f"{i}, 3, k=0"}).model_dump_json() + "\n" for i in range(3)))
    base = [sys.executable, "-m", "neural_debugger_cli", "eval", "cruxeval", "--backend", "oracle", "--problems", str(problems), "--no-progress"]
    root = Path(__file__).resolve().parent.parent
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        done = subprocess.run(base + ["--workers", workers, "--out", str(out)], capture_output=True, text=True, timeout=180, cwd=root)
        assert done.returncode == 0, done.stderr
        outs.append([(r["id"], r["prediction"], r["passed"]) for r in map(json.loads, (out / "predictions.jsonl").read_text().splitlines())])
    assert outs[0] == outs[1] == [("t0", "3", True), ("t1", "4", True), ("t2", "5", True)]


def test_an_interrupted_run_is_taken_up_with_resume_and_refused_under_other_settings(tmp_path: Path) -> None:
    import signal
    import time

    root, out = Path(__file__).resolve().parent.parent, tmp_path / "out"
    base = [sys.executable, "-m", "neural_debugger_cli", "eval", "cruxeval", "--backend", "oracle", "--problems", str(DEFAULT_PROBLEMS),
            "--limit", "24", "--out", str(out), "--no-progress"]  # fmt: skip
    run = subprocess.Popen(base, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial = out / "predictions.partial.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None and len(partial.read_text().splitlines() if partial.exists() else []) < 2:
        time.sleep(0.02)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=30)
    kept = partial.read_text().splitlines()[:2]
    assert len(kept) == 2 and not (out / "summary.json").exists()
    other = subprocess.run(base + ["--resume", "--max-state-tokens", "64"], cwd=root, capture_output=True, text=True, timeout=120)
    assert other.returncode == 2 and "other settings (max_state_tokens: 192 then, 64 now)" in other.stderr
    done = subprocess.run(base + ["--resume"], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"resuming: \d+ of 24 problems already done", done.stderr)
    records = (out / "predictions.jsonl").read_text().splitlines()
    assert len(records) == 24 and records[:2] == kept
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == 24 and summary["resumed_after"] >= 2 and summary["passed"] >= 22
    assert not partial.exists() and not (out / "predictions.partial.json").exists()
