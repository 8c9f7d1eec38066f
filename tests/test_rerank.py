"""Drawing several answers for a stop and keeping the best-ranked one (model.decode.rerank)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from model.prompt import language as lang
from model.decode.arg_evidence import uses_at, violations
from model.decode.rerank import Candidate, best_candidate, is_stale
from model.session import NeuralDebugger
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason

PROGRAM = "def f(text):\n    return text.upper()\n\n\nresult = f('ab')\n"


def _returned(output: str) -> State:
    frame = Frame(name="<module>", line=5, source="result = f('ab')", locals={})
    return State(reason=StopReason.STEP, frames=[frame], return_value=ReturnValue(name="f", value=output))


def test_best_candidate_prefers_the_total_and_falls_back_to_greedy() -> None:
    greedy = Candidate(text="g", likelihood=-1.0, check=-9.0, greedy=True)
    sampled = Candidate(text="s", likelihood=-3.0, check=-2.0)
    assert best_candidate([greedy, sampled]) == 0  # no check weight: the likelier answer
    assert best_candidate([greedy, sampled], check_weight=1.0) == 1  # -5 beats -10
    assert best_candidate([greedy, sampled], check_weight=0.2) == 0  # -2.8 vs -3.4
    unscored = Candidate(text="u", likelihood=-math.inf)
    assert best_candidate([unscored, greedy]) == 1
    assert best_candidate([unscored, Candidate(text="v", likelihood=-math.inf, greedy=True)]) == 1
    assert best_candidate([Candidate(text="a", likelihood=-1.0, check=-math.inf), sampled], check_weight=1.0) == 1
    with pytest.raises(ValueError):
        best_candidate([])


def test_contradicted_argument_uses_cost_evidence_weight_each() -> None:
    likely = Candidate(text="a", likelihood=-2.0, greedy=True, violations=1)  # e.g. text.endswith(3)
    fitting = Candidate(text="b", likelihood=-5.0)
    assert best_candidate([likely, fitting]) == 1  # -2 - 8 < -5
    assert best_candidate([likely, fitting], evidence_weight=2.0) == 0  # -4 > -5
    assert best_candidate([likely, fitting], evidence_weight=0.0) == 0
    assert likely.total(evidence_weight=8.0) == -10.0 and fitting.total(evidence_weight=8.0) == -5.0


def test_the_session_counts_each_answers_contradicted_uses(tiny_checkpoint: Path) -> None:
    """After a return, every ranked inv_step_call answer carries the uses its arguments contradict; none without the weight."""
    program = "def f(text, n):\n    if n:\n        return text.endswith(n)\n    return text\n\n\nresult = f('ab', 0)\n"
    returned = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=7, source="result = f('ab', 0)", locals={})],
                     return_value=ReturnValue(name="f", value="'ab'"))  # fmt: skip
    for weight in (8.0, 0.0):
        session = NeuralDebugger.from_checkpoint(tiny_checkpoint, program, max_state_tokens=64, call_candidates=4, evidence_weight=weight)
        session.start_from(returned)
        session.step(Action(kind=ActionKind.INV_STEP_CALL))
        for state, candidate in session.ranking:
            top = state.top
            expected = violations(uses_at(program, top.name, top.line), top.locals) if weight and top is not None else 0
            assert candidate.violations == expected


def _session(checkpoint: Path, **options: object) -> NeuralDebugger:
    session = NeuralDebugger.from_checkpoint(checkpoint, PROGRAM, max_state_tokens=64, **options)
    session.start_from(_returned("'AB'"))
    return session


def test_session_ranks_distinct_candidates_by_the_models_own_scores(tiny_checkpoint: Path) -> None:
    """With a real (tiny, random) model: the candidates are distinct parsed states scored by the
    backend's teacher forcing, and the step answers with the best-ranked one."""
    session = _session(tiny_checkpoint, call_candidates=4, check_weight=1.0)
    state = session.step(Action(kind=ActionKind.INV_STEP_CALL))
    ranking = session.ranking
    assert 1 <= len(ranking) <= 4 and sum(c.greedy for _, c in ranking) <= 1
    assert len({c.text for _, c in ranking}) == len(ranking)
    for _, candidate in ranking:
        assert candidate.likelihood <= 0 and candidate.check is not None and candidate.check <= 0
        assert not math.isinf(candidate.total(1.0))
    chosen = ranking[best_candidate([c for _, c in ranking], 1.0)][0]
    assert state == chosen and lang.render_state(chosen, None) in {c.text for _, c in ranking}
    # the check is the model's probability of the known return from that candidate: deterministic, and it depends on the return
    check = session._forward_to(session.backend, chosen, _returned("'AB'"))
    assert check == pytest.approx(session._forward_to(session.backend, chosen, _returned("'AB'")), abs=1e-4)
    assert check != pytest.approx(session._forward_to(session.backend, chosen, _returned("'XYZ'")), abs=1e-6)


def test_without_check_weight_no_check_is_computed(tiny_checkpoint: Path) -> None:
    session = _session(tiny_checkpoint, call_candidates=3)
    session.step(Action(kind=ActionKind.INV_STEP_CALL))
    assert session.ranking and all(c.check is None for _, c in session.ranking)


def test_one_candidate_is_the_plain_greedy_answer(tiny_checkpoint: Path) -> None:
    plain = _session(tiny_checkpoint, call_candidates=1)
    greedy = plain.step(Action(kind=ActionKind.INV_STEP_CALL))
    assert plain.ranking == []
    ranked = _session(tiny_checkpoint, call_candidates=3)
    ranked.step(Action(kind=ActionKind.INV_STEP_CALL))
    greedy_texts = [c.text for _, c in ranked.ranking if c.greedy]
    if greedy.top is not None and greedy.top.name == "f":  # the greedy answer parsed: the ranked session drew the same one first
        assert greedy_texts == [lang.render_state(greedy, None)]
    else:  # it did not (the session stayed at the return): it is no candidate
        assert greedy_texts == []


def test_inv_step_call_has_its_own_count(tiny_checkpoint: Path) -> None:
    """`candidates` ranks every action but inv_step_call (forward and the other inverse ones); `call_candidates` that one."""
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, max_state_tokens=64, candidates=3, call_candidates=1)
    session.start()
    state = session.step(Action(kind=ActionKind.STEP_OVER))
    assert 1 <= len(session.ranking) <= 3 and all(c.check is None for _, c in session.ranking)
    assert state in [s for s, _ in session.ranking]
    session.ranking = []
    session.step(Action(kind=ActionKind.INV_STEP_OVER))
    assert session.ranking
    session.ranking = []
    session.start_from(_returned("'AB'"))
    session.step(Action(kind=ActionKind.INV_STEP_CALL))  # one answer for inv_step_call: nothing ranked
    assert session.ranking == []


def test_coarse_actions_have_their_own_count(tiny_checkpoint: Path) -> None:
    """`coarse_candidates` ranks step_return, continue and breakpoint stops; `candidates` leaves them alone."""
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, max_state_tokens=64, candidates=1, call_candidates=1,
                                             coarse_candidates=3)  # fmt: skip
    session.start()
    session.step(Action(kind=ActionKind.STEP_OVER))
    assert session.ranking == []  # one answer for step_over
    for kind in (ActionKind.STEP_RETURN, ActionKind.CONTINUE):
        session.start()
        session.ranking = []
        state = session.step(Action(kind=kind))
        assert 1 <= len(session.ranking) <= 3 and state in [s for s, _ in session.ranking]
    plain = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, max_state_tokens=64, candidates=3, call_candidates=1,
                                           coarse_candidates=1)  # fmt: skip
    plain.start()
    plain.step(Action(kind=ActionKind.STEP_RETURN))
    assert plain.ranking == []


def _stop(line: int, locals_: dict[str, str], below: int = 9, reason: StopReason = StopReason.BREAKPOINT) -> State:
    return State(reason=reason, frames=[Frame(name="f", line=line, locals=locals_), Frame(name="<module>", line=below)])


def test_a_stale_answer_loops_back_in_the_same_frame_with_nothing_changed() -> None:
    before = _stop(4, {"i": "1", "acc": "[1]"})
    assert is_stale(_stop(4, {"i": "1", "acc": "[1]"}), before)  # the same line, the same locals
    assert is_stale(_stop(3, {"i": "1", "acc": "[1]"}), before)  # an earlier line
    assert not is_stale(_stop(4, {"i": "2", "acc": "[1]"}), before)  # the loop moved on
    assert not is_stale(_stop(6, {"i": "1", "acc": "[1]"}), before)  # further down: nothing need have changed
    assert not is_stale(_stop(4, {"i": "1", "acc": "[1]"}, below=10), before)  # another call of f
    assert not is_stale(State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=9)]), before)  # f returned
    assert not is_stale(State(reason=StopReason.EXITED, frames=[]), before)
    raised = _stop(4, {"i": "1", "acc": "[1]"}, reason=StopReason.EXCEPTION)
    assert not is_stale(raised, before)  # an exception on the line the action started from: nothing ran


def test_a_stale_answer_costs_the_stale_penalty() -> None:
    stale = Candidate(text="s", likelihood=-1.0, greedy=True, stale=True)
    moved = Candidate(text="m", likelihood=-2.5)
    assert best_candidate([stale, moved]) == 1  # -1 - 3 < -2.5
    assert best_candidate([stale, moved], stale_penalty=1.0) == 0
    assert best_candidate([stale]) == 0  # the only answer is kept
    assert stale.total(stale_penalty=3.0) == -4.0 and moved.total(stale_penalty=3.0) == -2.5


def test_the_session_marks_stale_answers_after_coarse_actions_only(tiny_checkpoint: Path) -> None:
    """With a real (tiny, random) model: each ranked answer of a run to a breakpoint carries `is_stale`; a step never does."""
    program = "def f(xs):\n    acc = 0\n    for x in xs:\n        acc += x\n    return acc\n\n\nresult = f([1, 1, 1])\n"
    inside = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="f", line=4, source="acc += x", locals={"acc": "0", "x": "1", "xs": "[1, 1, 1]"}),
                                                         Frame(name="<module>", line=8, source="result = f([1, 1, 1])")])  # fmt: skip
    for kind, count in ((ActionKind.CONTINUE, "coarse_candidates"), (ActionKind.STEP_OVER, "candidates")):
        session = NeuralDebugger.from_checkpoint(tiny_checkpoint, program, max_state_tokens=64, breakpoints=[4], **{count: 4})
        session.start_from(inside)
        session.step(Action(kind=kind))
        assert session.ranking
        for state, candidate in session.ranking:
            assert candidate.stale == (kind is ActionKind.CONTINUE and is_stale(state, inside))
