"""`eval next-state`: held-out questions from real trajectories, seeded round-robin sampling, scoring, the command."""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model.prompt.language import render_action
from protocol.debugger import Action, State
from tests.test_eval_fidelity import PROGRAMS
from train.eval import next_state as ns
from train.eval.cli import ModelSessions, Sampling, app
from train.toydata import write_shards


@pytest.fixture(scope="module")
def shard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shard of forward and inverse trajectories of two programs, recorded with tracegen's fast recorder."""
    from tracegen.fast import record_program
    from tracegen.sampling import sample_trajectories

    trajectories = []
    for index, source in enumerate(PROGRAMS.values()):
        trace = record_program(source)
        trajectories += sample_trajectories(trace, random.Random(index), 6, 8, inverse_fraction=0.5)
    assert {t.direction for t in trajectories} == {"forward", "inverse"}
    folder = tmp_path_factory.mktemp("next-state")
    return write_shards(folder, trajectories)[0]


@pytest.fixture(scope="module")
def tokenizer(tiny_checkpoint: Path):  # noqa: ANN201
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_checkpoint))


def _steps(shard: Path) -> list[dict]:
    return [step for line in shard.read_text().splitlines() for step in json.loads(line)["steps"]]


def test_every_state_is_a_question_and_a_limit_covers_every_action(shard: Path, tokenizer) -> None:  # noqa: ANN001
    every = ns.select_questions(shard, tokenizer, 1024, limit=None, seed=0)
    steps = _steps(shard)
    assert every.trajectories == 12 and every.forward + every.inverse == 12 and every.inverse > 0
    assert len(every.questions) == every.states == len(steps) and every.states_dropped == 0
    assert Counter(every.available_by_action) == Counter(step["action"]["kind"] for step in steps)
    actions = list(every.available_by_action)
    assert actions == [a for a in ns.ACTION_ORDER if a in actions]  # forward first, then inverse
    assert any(a.startswith("inv_") for a in actions)
    # a limit of one per action: exactly one question of each action, the same for the same seed
    picked = ns.select_questions(shard, tokenizer, 1024, limit=len(actions), seed=5)
    assert sorted(q.example.action for q in picked.questions) == sorted(actions)
    again = ns.select_questions(shard, tokenizer, 1024, limit=len(actions), seed=5)
    assert [(q.trajectory, q.step) for q in again.questions] == [(q.trajectory, q.step) for q in picked.questions]
    assert picked.questions == sorted(picked.questions, key=lambda q: (q.trajectory, q.step))  # run order: shared prefixes
    # each question is the recorded step it names
    traj_lines = shard.read_text().splitlines()
    for q in picked.questions:
        step = json.loads(traj_lines[q.trajectory])["steps"][q.step]
        assert step["action"]["kind"] == q.example.action
        assert q.example.prompt.endswith(render_action(Action.model_validate(step["action"])))


def test_a_question_after_a_return_stop_names_the_call_that_came_back(shard: Path, tokenizer) -> None:  # noqa: ANN001
    """As the session reads its history (`model.static.reach.returned_call`), so a question asked of the evaluation
    decodes under the same grammar as the session's own step."""
    from model.static.reach import returned_call

    lines = shard.read_text().splitlines()
    named = 0
    for q in ns.select_questions(shard, tokenizer, 1024, limit=None, seed=0).questions:
        traj = json.loads(lines[q.trajectory])
        states = [State.model_validate(traj["initial"])] + [State.model_validate(st["state"]) for st in traj["steps"]]
        kinds = [Action.model_validate(st["action"]).kind for st in traj["steps"]]
        expected = returned_call(states[q.step - 1], kinds[q.step - 1], states[q.step]) if q.step and traj["direction"] == "forward" else None
        assert q.example.returned == expected
        named += expected is not None
    assert named > 0


def test_scoring_a_perfect_prediction_is_exact_and_no_state_is_wrong(shard: Path, tokenizer) -> None:  # noqa: ANN001
    questions = ns.select_questions(shard, tokenizer, 1024, limit=None, seed=0).questions
    for q in questions:
        ex = q.example
        perfect = ns.parse_prediction(ex, ns.target_text(ex))  # the text a perfect model writes, parsed as predictions are
        assert perfect is not None and ns.score(ex, perfect).matched
    ex = questions[0].example
    assert ns.parse_prediction(ex, "<|reason_step|>{garbage") is None
    wrong = ns.score(ex, None)
    assert not wrong.matched and set(wrong.mismatched_fields()) >= {"reason", "location", "locals"}
    moved = [q.example for q in questions if State.model_validate_json(q.example.target).location
             != State.model_validate_json(q.example.previous).location]  # fmt: skip
    assert moved and not ns.score(moved[0], State.model_validate_json(moved[0].previous)).matched


def test_command_writes_summary_and_predictions(shard: Path, tiny_checkpoint: Path, tmp_path: Path) -> None:
    out = tmp_path / "ns"
    result = CliRunner().invoke(app, ["next-state", "--trajectories", str(shard.parent), "--model", str(tiny_checkpoint),
                                      "--out", str(out), "--limit", "5", "--max-state-tokens", "8", "--no-progress", "--sample-seed", "5"])  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sample_seed"] == 5 and summary["seed_per_draw"] is True
    overall = summary["overall"]
    assert overall["stops"] + summary["skipped_too_long"] == 5 and overall["stops"] == 5
    assert set(overall) == {"stops", "location", "locals", "state"}
    assert set(summary["by_direction"]) == {"forward", "inverse"}
    assert sum(r["stops"] for r in summary["by_direction"].values()) == overall["stops"]
    assert sum(r["stops"] for r in summary["by_action"].values()) == overall["stops"]
    assert len(summary["by_action"]) == 5  # round-robin: 5 different actions out of the available ones
    assert summary["comparison"]["stops"] == 5 and summary["trajectories_read"] == 12
    assert summary["seq_len"] == 2048 and summary["limit"] == 5 and summary["seconds"] >= 0
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == 5
    assert Counter(r["action"] for r in records) == Counter({a: r["stops"] for a, r in summary["by_action"].items()})
    assert all(r["expected"] and isinstance(r["matched"], bool) for r in records)
    assert "next-state exact" in result.output
    from train.eval.model_card import render_card  # the card reads this summary as written

    (tmp_path / "results").mkdir()
    out.rename(tmp_path / "results" / "next-state")
    card = render_card(tiny_checkpoint, tmp_path / "results", "")
    assert "| all | both | 5 |" in card and "| all inverse | inverse |" in card


def test_prompts_past_the_context_are_skipped_and_counted(shard: Path, tiny_checkpoint: Path, tokenizer) -> None:  # noqa: ANN001
    questions = ns.select_questions(shard, tokenizer, 1024, limit=None, seed=0).questions
    lengths = sorted(len(tokenizer.encode(q.example.prompt, add_special_tokens=False)) for q in questions)
    sessions = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=4, constrained=True, threads=1)
    sessions.backend.max_model_len = lengths[-1]  # the longest prompt no longer fits
    try:
        longest = [q for q in questions if len(tokenizer.encode(q.example.prompt, add_special_tokens=False)) == lengths[-1]]
        short = [q for q in questions if q not in longest][:2]
        report = ns.evaluate(longest + short, sessions, progress=False)
    finally:
        sessions.close()
    assert report.skipped_too_long == len(longest) and report.overall.stops == len(short) == len(report.records)


def test_sampling_reaches_the_backend(tiny_checkpoint: Path) -> None:
    """The sample seed and per-draw seeding chosen for a run are the backend's (the default: seed 0, a seed per draw)."""
    chosen = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=4, constrained=True, threads=1,
                           sampling=Sampling(seed=3, per_draw=False))  # fmt: skip
    default = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=4, constrained=True, threads=1)
    try:
        assert (chosen.backend.seed, chosen.backend.seed_per_draw) == (3, False)
        assert (default.backend.seed, default.backend.seed_per_draw) == (0, True)
        assert Sampling(3, False).summary() == {"sample_seed": 3, "seed_per_draw": False}
    finally:
        chosen.close()
        default.close()


def test_clear_errors(tmp_path: Path, tiny_checkpoint: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["next-state", "--trajectories", str(tmp_path / "nothing"), "--model", str(tiny_checkpoint), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 2 and "error: no trajectories at" in missing.output and "Traceback" not in missing.output
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(app, ["next-state", "--trajectories", str(tmp_path / "empty"), "--model", str(tiny_checkpoint), "--out", str(tmp_path / "o")])
    assert empty.exit_code == 2 and "no *.jsonl" in empty.output
    (tmp_path / "bad.jsonl").write_text("not a trajectory\n")
    bad = runner.invoke(app, ["next-state", "--trajectories", str(tmp_path / "bad.jsonl"), "--model", str(tiny_checkpoint), "--out", str(tmp_path / "o")])
    assert bad.exit_code == 2 and "error: no trajectories in" in bad.output
    no_model = runner.invoke(app, ["next-state", "--trajectories", str(tmp_path / "bad.jsonl"), "--model", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert no_model.exit_code == 2 and "error:" in no_model.output and "Traceback" not in no_model.output
    assert not (tmp_path / "o").exists()


def test_kept_candidates_are_the_ranked_answers_scored(shard: Path, tiny_checkpoint: Path, tmp_path: Path) -> None:
    out = tmp_path / "ns"
    result = CliRunner().invoke(app, ["next-state", "--trajectories", str(shard.parent), "--model", str(tiny_checkpoint), "--out", str(out),
                                      "--limit", "4", "--max-state-tokens", "8", "--no-progress", "--candidates", "3",
                                      "--coarse-candidates", "3", "--call-candidates", "3", "--keep-candidates"])  # fmt: skip
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    kept = [r for r in records if "candidates" in r]
    assert kept, "every action drew three answers: some stop must have kept them"
    for record in kept:
        answers = record["candidates"]
        assert 1 <= len(answers) <= 3 and sum(a["greedy"] for a in answers) <= 1
        assert all(set(a) == {"text", "likelihood", "greedy", "stale", "chosen", "matched", "fields"} for a in answers)
        assert all(a["matched"] == (not a["fields"]) for a in answers)
        chosen = [a for a in answers if a["chosen"]]
        assert chosen and all(a["matched"] == record["matched"] for a in chosen)  # the kept answer is the one scored
    plain = tmp_path / "plain"
    CliRunner().invoke(app, ["next-state", "--trajectories", str(shard.parent), "--model", str(tiny_checkpoint), "--out", str(plain),
                             "--limit", "4", "--max-state-tokens", "8", "--no-progress", "--candidates", "3"])  # fmt: skip
    assert not any("candidates" in json.loads(line) for line in (plain / "predictions.jsonl").read_text().splitlines())


@pytest.mark.slow  # 23 s in CI; the other seven tests here stay quick
def test_inverse_call_questions_are_narrowed_like_the_session(shard: Path, tokenizer, tiny_checkpoint: Path) -> None:  # noqa: ANN001
    """inv_step_call is asked as `predict_before` asks it: the answer is a call's first stop, its locals the parameters."""
    from model.decode.constraints import InverseCallConstraint
    from model.static.entry_locals import entry_locals

    every = ns.select_questions(shard, tokenizer, 1024, limit=None, seed=0)
    calls = [q for q in every.questions if q.example.action == "inv_step_call"]
    narrowed = [q for q in calls if isinstance(InverseCallConstraint.or_state(q.example.program, State.model_validate_json(q.example.previous)),
                                               InverseCallConstraint)]  # fmt: skip
    assert narrowed, "the fixture's inverse trajectories must hold inv_step_call questions the entry analysis places"
    sessions = ModelSessions(tiny_checkpoint, "transformers", vllm_url=None, max_state_tokens=48, constrained=True, threads=1)
    report = ns.evaluate(narrowed[:4], sessions, progress=False)
    checked = 0
    for question, record in zip(narrowed[:4], report.records):
        predicted = ns.parse_prediction(question.example, record["predicted"] or "")
        if predicted is None or predicted.top is None:
            continue
        spec = entry_locals(question.example.program)[(predicted.top.name, predicted.top.line)]  # a call's first stop
        assert spec.required <= set(predicted.top.locals) <= set(spec.names), (predicted.top, spec)
        checked += 1
    assert checked, "no answer to check"
