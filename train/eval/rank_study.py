"""Other rankings of the answers a CruxEval or next-state run kept (`eval cruxeval|next-state --keep-candidates`).

Each record of such a run lists the ranked answers of the session's last ranked step (draw order: the
greedy one first, then the samples; CruxEval-I: the arguments, CruxEval-O: the return value after the
last step_return) with their likelihood, the argument uses they contradict (`model.decode.arg_evidence`,
inv_step_call only) and whether they pass. Ranking the same answers with another evidence weight is then exact and free: no model
runs. The run's own weight reproduces its pass count (up to likelihoods rounded to 4 decimals).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.decode.rerank import STALE_PENALTY, Candidate, best_candidate
from train.eval.cruxeval import summarize


class RankStudyError(ValueError):
    """A predictions file that cannot be read, or one without kept candidates."""


@dataclass(frozen=True)
class Reranked:
    """One evidence weight applied to a run's kept answers."""

    evidence_weight: float
    passed: int  # problems whose chosen answer passes (problems without answers count as failed)
    problems: int
    gained: int  # vs the run's own choice
    lost: int


def read_kept(predictions: Path) -> list[dict[str, Any]]:
    """The records of a predictions.jsonl that kept its candidates; refuses a run without any."""
    try:
        records = [json.loads(line) for line in Path(predictions).read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise RankStudyError(f"cannot read {predictions}: {exc}") from None
    if not any("candidates" in r for r in records):
        raise RankStudyError(f"{predictions} kept no candidates: run `eval cruxeval ... --keep-candidates`")
    return records


def chosen(candidates: list[dict[str, Any]], evidence_weight: float) -> dict[str, Any]:
    """The answer the session would keep under this evidence weight (`model.decode.rerank.best_candidate`)."""
    ranked = [Candidate("", float(c["likelihood"]), greedy=bool(c["greedy"]), violations=int(c.get("violations", 0))) for c in candidates]
    return candidates[best_candidate(ranked, evidence_weight=evidence_weight)]


def rerank(records: list[dict[str, Any]], evidence_weight: float) -> Reranked:
    """Pass count when each problem keeps its most likely answer less `evidence_weight` per contradicted use."""
    nows = [_kept_now(record, "passed", lambda answers: chosen(answers, evidence_weight)) for record in records]
    return Reranked(evidence_weight, sum(nows), len(records), *_changes(records, nows, "passed"))


def _kept_now(record: dict[str, Any], key: str, pick: Any) -> bool:
    """Whether the answer `pick` keeps among the record's kept answers is right (`key`: passed or matched);
    a record without kept answers stays as the run had it (an answer without arguments fails)."""
    answers = record.get("candidates") or []
    return bool(pick(answers)[key]) if answers else bool(record[key])


def _changes(records: list[dict[str, Any]], nows: list[bool], key: str) -> tuple[int, int]:
    """(gained, lost) against the run's own outcomes."""
    gained = sum(1 for r, now in zip(records, nows) if now and not r[key])
    lost = sum(1 for r, now in zip(records, nows) if r[key] and not now)
    return gained, lost


def oracle(records: list[dict[str, Any]]) -> int:
    """Problems with a passing answer among the kept ones: the ceiling of any ranking of these answers."""
    return sum(1 for r in records if r["passed"] or any(c.get("passed") for c in r.get("candidates") or []))


def reranked_records(records: list[dict[str, Any]], evidence_weight: float) -> list[dict[str, Any]]:
    """The records as a run with this evidence weight would have written them: each problem's prediction and
    outcome from the answer the session would keep (marked `reranked`; a changed failing answer has no note)."""
    out = []
    for record in records:
        answers = record.get("candidates") or []
        new = dict(record)
        if answers:
            pick = chosen(answers, evidence_weight)
            if pick["prediction"] != record["prediction"]:
                new.update(prediction=pick["prediction"], passed=bool(pick["passed"]), reranked=True)
                new["how"] = "passed" if pick["passed"] else ("failed" if pick["prediction"] is not None else "invalid")
                new.pop("note", None)
        out.append(new)
    return out


def reranked_summary(ranked: list[dict[str, Any]], settings: dict[str, Any], evidence_weight: float) -> dict[str, Any]:
    """The summary.json of `reranked_records`: the run's settings (`settings`, its summary) with the counts
    computed again, the new weight, and where the ranking came from."""
    computed = summarize([])  # the keys a summary computes from its records
    kept = {k: v for k, v in settings.items() if k not in computed}
    origin = {"from_evidence_weight": settings.get("evidence_weight"), "how": "the run's kept answers ranked again (train/eval/rank_study.py)"}
    return summarize(ranked, **{**kept, "evidence_weight": evidence_weight, "ranked_offline": origin})


@dataclass(frozen=True)
class StatesReranked:
    """One stale penalty applied to a next-state run's kept answers."""

    stale_penalty: float
    matched: int  # questions whose chosen answer matches the real stop (questions without kept answers as the run had them)
    questions: int
    gained: int  # vs the run's own choice
    lost: int
    by_action: dict[str, int]  # matched per action


def chosen_state(candidates: list[dict[str, Any]], stale_penalty: float = STALE_PENALTY) -> dict[str, Any]:
    """The next-state answer the session would keep under this stale penalty (`model.decode.rerank.best_candidate`)."""
    ranked = [Candidate("", float(c["likelihood"]), greedy=bool(c["greedy"]), stale=bool(c.get("stale", False))) for c in candidates]
    return candidates[best_candidate(ranked, stale_penalty=stale_penalty)]


def rerank_states(records: list[dict[str, Any]], stale_penalty: float) -> StatesReranked:
    """Matched next-state questions when each keeps its most likely answer, less `stale_penalty` for a stale one."""
    nows = [_kept_now(record, "matched", lambda answers: chosen_state(answers, stale_penalty)) for record in records]
    by_action: dict[str, int] = {}
    for record, now in zip(records, nows):
        by_action[record["action"]] = by_action.get(record["action"], 0) + now
    return StatesReranked(stale_penalty, sum(nows), len(records), *_changes(records, nows, "matched"), by_action)


def states_oracle(records: list[dict[str, Any]]) -> int:
    """Questions with a matching answer among the kept ones: the ceiling of any ranking of these answers."""
    return sum(1 for r in records if r["matched"] or any(c.get("matched") for c in r.get("candidates") or []))


@dataclass(frozen=True)
class Pooled:
    """Several CruxEval runs' kept answers pooled per problem (`pool`)."""

    runs: int
    passed: int
    problems: int
    oracle: int  # problems with a passing answer in the pool
    alone: tuple[int, ...]  # each run's own pass count


def pooled_choice(answer_lists: list[list[dict[str, Any]]], evidence_weight: float) -> dict[str, Any] | None:
    """The answer kept from several runs' answers to one problem: each scored by the run that drew it
    (likelihood less `evidence_weight` per contradicted use), the mean where several drew it; the first
    run's greedy answer wins ties. None when no run kept an answer."""
    scores: dict[str, list[float]] = {}
    first: dict[str, dict[str, Any]] = {}
    for r, answers in enumerate(answer_lists):
        for c in answers:
            text = c["prediction"]
            scores.setdefault(text, []).append(float(c["likelihood"]) - evidence_weight * int(c.get("violations", 0)))
            first.setdefault(text, {**c, "greedy": bool(c.get("greedy")) and r == 0})
    if not first:
        return None
    ranked = [Candidate("", sum(scores[t]) / len(scores[t]), greedy=first[t]["greedy"]) for t in first]
    return list(first.values())[best_candidate(ranked, evidence_weight=0.0)]


def pool(runs: list[list[dict[str, Any]]], evidence_weight: float) -> Pooled:
    """What a decode-time ensemble of the runs' models would keep, read offline from their kept answers
    (runs of the same problems, in the same order: `eval cruxeval --keep-candidates`)."""
    if len(runs) < 2:
        raise RankStudyError("pool needs two runs or more")
    ids = [[r["id"] for r in run] for run in runs]
    if any(other != ids[0] for other in ids[1:]):
        raise RankStudyError("the runs are not of the same problems in the same order")
    passed = best = 0
    for records in zip(*runs):
        pick = pooled_choice([r.get("candidates") or [] for r in records], evidence_weight)
        passed += bool(pick["passed"]) if pick is not None else bool(records[0]["passed"])
        best += any(r["passed"] or any(c.get("passed") for c in r.get("candidates") or []) for r in records)
    return Pooled(len(runs), passed, len(ids[0]), best, tuple(sum(bool(r["passed"]) for r in run) for run in runs))
