"""Held-out next-state exact match per action, forward and inverse, from tracegen trajectory shards.

Each trajectory is cut into the windows training uses (`train.data.trajectory_documents`, windows
of at most the model's context); every predicted state of a window is a question
(`train.data.every_window_example`): the window's text up to the action is the prompt, the
recorded state is the answer. A seeded sample is drawn per action (a random key per state, the
smallest keys kept) and the actions are interleaved round-robin (`train.data._interleave`), so
``--limit N`` covers every action, forward (step_into, step_over, step_return, breakpoint,
continue) and inverse (inv_step_into, inv_step_over, inv_step_call), about equally.

Each question is answered by the real inference path: a `NeuralDebugger` of the evaluated model
generates the state after the prompt's ids (greedy, constrained to well-formed states, the
session's retry and closing of a cut-off state) and parses it. The pair is compared with
`protocol.compare.compare_states` and counted in `protocol.compare.ComparisonSummary`s (overall,
per action, per direction) exactly as `train.eval.fidelity` counts, so the numbers are comparable. A
prediction that is not a state counts as wrong in every field. A prompt that does not fit the
model's context is skipped and counted (only possible with ``--seq-len`` above the context).
"""
from __future__ import annotations

import heapq
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.prompt.value_chars import encode_text
from protocol.compare import FIELDS, ComparisonSummary, FieldDiff, compare_states
from protocol.debugger import Action, ActionKind, State
from train.eval.error_analysis import LineKindTable, line_kind
from train.eval.value_types import ValueTypeTable
from train.eval.fidelity import rates
from train.manifest import NextStateExample

ACTION_ORDER = [kind.value for kind in ActionKind]  # forward actions first, then the inverse ones
DIRECTIONS = ("forward", "inverse")


class TrajectoriesError(ValueError):
    """The trajectories cannot be read; the message says why."""


@dataclass(frozen=True)
class Question:
    """One held-out next-state question: the example and where it comes from (trajectory number, step index)."""

    example: NextStateExample
    trajectory: int
    step: int


@dataclass
class Selection:
    """The sampled questions (in run order) and what was available."""

    questions: list[Question]
    trajectories: int = 0
    forward: int = 0
    inverse: int = 0
    states: int = 0  # predicted states in the windows (the candidates)
    states_dropped: int = 0  # steps no window holds (a state too long for the context)
    available_by_action: dict[str, int] = field(default_factory=dict)


def select_questions(path: Path, tokenizer: Any, seq_len: int, *, limit: int | None, seed: int) -> Selection:
    """Questions from the trajectory shards at `path`: a seeded sample of `limit` states, round-robin over actions.

    Every predicted state is a candidate with a random key (one `random.Random(seed)` drawn in
    file order); each action keeps its `limit` smallest keys. The result is in round-robin order
    over actions (cut to `limit`), then sorted by trajectory and step so consecutive prompts share
    their prefix (the backend's KV cache).
    """
    from train.data import SegmentEncoder, _interleave, every_window_example, read_trajectories, shard_paths, trajectory_documents

    try:
        paths = shard_paths(Path(path))
    except FileNotFoundError as exc:
        raise TrajectoriesError(str(exc)) from None
    rng = random.Random(seed)
    encoder = SegmentEncoder(tokenizer)
    kept: dict[str, list[tuple[float, int, Question]]] = {}  # per action: a heap of (-key, -order, question), the largest key on top
    selection = Selection([])
    order = 0
    try:
        for number, traj in enumerate(read_trajectories(paths)):
            selection.trajectories += 1
            setattr(selection, traj.direction, getattr(selection, traj.direction) + 1)
            _, windows = trajectory_documents(traj, encoder, seq_len, "states")
            used = 0
            for step, example in every_window_example(traj, windows):
                used += 1
                order += 1
                key = rng.random()
                selection.available_by_action[example.action] = selection.available_by_action.get(example.action, 0) + 1
                heap = kept.setdefault(example.action, [])
                item = (-key, -order, Question(example, number, step))
                if limit is None or len(heap) < limit:
                    heapq.heappush(heap, item)
                elif item[:2] > heap[0][:2]:
                    heapq.heapreplace(heap, item)
            selection.states += used
            selection.states_dropped += len(traj.steps) - used
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise TrajectoriesError(f"cannot read the trajectories at {path}: {exc}") from None
    if not selection.trajectories:
        raise TrajectoriesError(f"no trajectories in {path} (every line was empty or malformed)")
    by_action = {action: [q for _, _, q in sorted(heap, reverse=True)] for action, heap in kept.items()}
    chosen = _interleave(by_action)  # type: ignore[arg-type]  # round-robin works on any lists
    if limit is not None:
        chosen = chosen[:limit]
    selection.questions = sorted(chosen, key=lambda q: (q.trajectory, q.step))
    selection.available_by_action = {a: selection.available_by_action[a] for a in _ordered(selection.available_by_action)}
    return selection


def _ordered(names: Iterable[str]) -> list[str]:
    """Action names in `ActionKind` order (forward, then inverse); unknown names last, sorted."""
    names = list(names)
    return [a for a in ACTION_ORDER if a in names] + sorted(a for a in names if a not in ACTION_ORDER)


# ------------------------------------------------------------------------------ scoring


def unparsed_diff(expected: State) -> FieldDiff:
    """The comparison of a prediction that is not a state: every field wrong, every top-frame variable wrong."""
    top = expected.normalized().frames[0].locals if expected.frames else {}
    return FieldDiff(**{name: True for name in FIELDS}, wrong_variables=tuple(sorted(top)), top_variables=len(top))


def score(example: NextStateExample, predicted: State | None) -> FieldDiff:
    """`compare_states(predicted, expected)` for one question; None (no state) is wrong in every field."""
    expected = State.model_validate_json(example.target)
    return unparsed_diff(expected) if predicted is None else compare_states(predicted, expected)


def parse_prediction(example: NextStateExample, text: str) -> State | None:
    """The state a generated text stands for (deltas against the example's previous state), None if it does not parse."""
    from model.prompt import language

    previous = State.model_validate_json(example.previous) if example.previous else None
    try:
        return language.parse_state(text, previous, example.program)
    except language.ParseError:
        return None


def target_text(example: NextStateExample) -> str:
    """The expected state as the model should write it (without the stop token)."""
    from model.prompt import language

    previous = State.model_validate_json(example.previous) if example.previous else None
    return language.render_state(State.model_validate_json(example.target), previous).removesuffix(language.STOP_TOKEN)


def prompt_action(prompt: str) -> tuple[Action | None, list[int]]:
    """The action a next-state prompt ends with and the program breakpoints of its header (None: unreadable)."""
    from model.prompt import language

    head, sep, rest = prompt.partition(language.BREAKPOINTS)
    breakpoints: list[int] = []
    if sep:
        try:
            breakpoints = [b for b in language.parse_breakpoints(rest.partition("\n")[0]) if isinstance(b, int)]
        except language.ParseError:
            breakpoints = []
    try:
        return language.parse_action(prompt.rpartition(language.STOP_TOKEN)[2]), breakpoints
    except language.ParseError:
        return None, breakpoints


@dataclass
class NextStateReport:
    """Counts of compared states: overall, per action, per direction; one record per question."""

    overall: ComparisonSummary = field(default_factory=ComparisonSummary)
    by_action: dict[str, ComparisonSummary] = field(default_factory=dict)
    by_direction: dict[str, ComparisonSummary] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    unparsed: int = 0  # predictions that were no state (counted wrong)
    closed: int = 0  # predictions cut off by the token budget and closed (scored as they are)
    skipped_too_long: int = 0  # prompts that did not fit the context (not counted)
    by_line_kind: LineKindTable = field(default_factory=LineKindTable)  # misses by what the line does
    by_value_type: ValueTypeTable = field(default_factory=ValueTypeTable)  # variables right per value type (forward questions)

    def add(self, question: Question, diff: FieldDiff, **record: Any) -> None:
        ex = question.example
        for summary in (self.overall, self.by_action.setdefault(ex.action, ComparisonSummary()),
                        self.by_direction.setdefault(ex.direction, ComparisonSummary())):  # fmt: skip
            summary.add(diff)
        if record.get("line_kind"):
            self.by_line_kind.add(record["line_kind"], matched=diff.matched, location_ok="location" not in diff.mismatched_fields())
        self.records.append({"trajectory": question.trajectory, "step": question.step, "action": ex.action,
                             "direction": ex.direction, "matched": diff.matched, "fields": diff.mismatched_fields(),
                             **record})  # fmt: skip

    def summary(self, selection: Selection, *, backend: str, model: str, trajectories: str, limit: int | None, seed: int,
                seq_len: int, max_state_tokens: int, constrained: bool, seconds: float) -> dict[str, Any]:  # fmt: skip
        """summary.json: exact-match rates (0..1, with `stops` counts) overall, per action and per direction; the run's settings."""
        return {
            "overall": rates(self.overall),
            "by_action": {a: rates(self.by_action[a]) for a in _ordered(self.by_action)},
            "by_direction": {d: rates(self.by_direction.get(d, ComparisonSummary())) for d in DIRECTIONS},
            "by_line_kind": self.by_line_kind.to_json(),
            "by_value_type": self.by_value_type.to_json(),
            "unparsed": self.unparsed, "closed": self.closed, "skipped_too_long": self.skipped_too_long,
            "trajectories_read": selection.trajectories, "forward_trajectories": selection.forward,
            "inverse_trajectories": selection.inverse, "states_available": selection.states,
            "states_dropped": selection.states_dropped, "available_by_action": selection.available_by_action,
            "comparison": self.overall.to_json(),
            "backend": backend, "model": model, "trajectories": trajectories, "limit": limit, "seed": seed, "seq_len": seq_len,
            "max_state_tokens": max_state_tokens, "constrained": constrained, "seconds": round(seconds, 1),
            "seconds_per_state": round(seconds / max(1, self.overall.stops), 3),
        }  # fmt: skip


# ----------------------------------------------------------------------------- predicting


def kept_candidates(example: NextStateExample, ranking: list[tuple[State, Any]], chosen: State | None) -> list[dict[str, Any]]:
    """The ranked answers of one question (`NeuralDebugger.ranking`, draw order), each scored against the real
    stop: for ranking studies of next-state (which answer another rule would keep, and whether it matched)."""
    kept = []
    for state, candidate in ranking:
        diff = score(example, state)
        kept.append({"text": candidate.text, "likelihood": round(candidate.likelihood, 4), "greedy": candidate.greedy,
                     "stale": candidate.stale, "chosen": state == chosen, "matched": diff.matched, "fields": diff.mismatched_fields()})  # fmt: skip
    return kept


def evaluate(questions: list[Question], sessions: Any, *, progress: bool = True, keep_candidates: bool = False) -> NextStateReport:
    """Answer each question with a model session (`train.eval.cli.ModelSessions`) and count it. `keep_candidates`:
    each record also lists the ranked answers of a stop that drew several (`kept_candidates`)."""
    from tqdm import tqdm

    from model.session import SessionError

    context = int(getattr(sessions.backend, "max_model_len", None) or 2048)
    report = NextStateReport()
    session: Any = None
    bar = tqdm(questions, desc="next-state", unit="state", disable=not progress, dynamic_ncols=True)
    for question in bar:
        ex = question.example
        ids = encode_text(sessions.tokenizer, ex.prompt)  # as the model was trained (model.prompt.value_chars)
        if len(ids) >= context:
            report.skipped_too_long += 1
            continue
        if session is None or session.program != ex.program:
            session = sessions(ex.program)
        previous = State.model_validate_json(ex.previous) if ex.previous else None
        action, breakpoints = prompt_action(ex.prompt)
        session.ranking = []
        started = time.perf_counter()
        try:  # the session's own step, as `step` and `predict_before` ask it: generate (a forward stop narrowed by static
            # flow, inv_step_call's by the call's entry locals; an earlier stop's runaway trimmed), retry, close, parse
            outcome = session._generate_or_rank(ids, previous, action, breakpoints, kind=action.kind, returned=ex.returned)
        except SessionError as exc:  # the backend failed on this prompt: no prediction
            outcome = f"error: {exc}"
        seconds = time.perf_counter() - started
        predicted = getattr(outcome, "state", None)
        note = outcome if isinstance(outcome, str) else getattr(outcome, "note", None)
        if predicted is None:
            report.unparsed += 1
        elif note:
            report.closed += 1
        expected = State.model_validate_json(ex.target)
        kind = line_kind(ex.program, previous, expected) if ex.direction == "forward" else None
        extra = {"candidates": kept_candidates(ex, session.ranking, predicted)} if keep_candidates and session.ranking else {}
        diff = score(ex, predicted)
        if ex.direction == "forward":
            report.by_value_type.add_stop(previous, expected, diff, kind)
        report.add(question, diff, prompt_tokens=len(ids), seconds=round(seconds, 3), line_kind=kind,
                   predicted=getattr(outcome, "text", None), expected=target_text(ex), note=note, **extra)  # fmt: skip
        bar.set_postfix(exact=f"{100 * report.overall.match_rate:.1f}%")
    bar.close()
    return report
