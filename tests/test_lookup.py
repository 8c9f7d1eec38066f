"""Prompt-lookup drafting (model.backends.lookup): proposals, and answers unchanged by it in fewer model calls."""
from __future__ import annotations

from pathlib import Path

import pytest

from model.backends.hf import HFBackend
from model.backends.lookup import LookupDrafter
from model.decode.constraints import RegexConstraint


def test_the_latest_occurrence_of_the_longest_suffix_is_proposed() -> None:
    drafter = LookupDrafter([1, 2, 3, 4, 9, 2, 3, 5, 6, 7])
    drafter.extend([2, 3])
    assert drafter.propose(2) == [5, 6]  # (2, 3) ended last before 5
    drafter.extend([4])
    assert drafter.propose(5) == [9, 2, 3, 5, 6]  # (2, 3, 4), the longest suffix seen before, is preferred
    assert drafter.propose(0) == []
    drafter.truncate(12)  # ... 7, 2, 3: forget the 4
    assert drafter.ids[-2:] == [2, 3] and drafter.propose(1) == [5]


def test_nothing_is_proposed_without_an_earlier_match() -> None:
    drafter = LookupDrafter([1, 2, 3])
    assert drafter.propose(4) == []  # (2, 3) ends at the last token: no earlier occurrence
    drafter.extend([8])
    assert drafter.propose(4) == []
    assert LookupDrafter([]).propose(3) == []


class CountingRunner:
    """The backend's runner, counting model calls."""

    def __init__(self, inner: object) -> None:
        self.inner, self.calls = inner, 0

    def run(self, ids: list[int], keep: int = 1) -> object:
        self.calls += 1
        return self.inner.run(ids, keep)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def _generate(checkpoint: Path, lookahead: int, temperature: float, constrained: bool) -> tuple[list[int], list[float], int]:
    backend = HFBackend(checkpoint, lookahead=lookahead, forced_drafts=False)
    runner = CountingRunner(backend._runner)
    backend._runner = runner  # type: ignore[assignment]
    text = "x = [1, 2, 3]\ny = {'a': 1, 'b': 2}\n" * 6
    prompt = backend.tokenizer.encode(text, add_special_tokens=False)
    constraint = RegexConstraint(r"[xy] = [\[\{][^\n]*\n([xy] = [\[\{][^\n]*\n)*") if constrained else None
    gen = backend.generate(prompt, max_tokens=40, temperature=temperature, stop_ids=[], constraint=constraint)
    backend.close()
    return gen.token_ids, gen.logprobs, runner.calls


@pytest.mark.parametrize("temperature", [0.0, 1.5])
@pytest.mark.parametrize("constrained", [False, True])
def test_drafting_changes_no_answer(tiny_checkpoint: Path, temperature: float, constrained: bool) -> None:
    """The tiny random model, greedy and sampled (a seeded draw), with and without a constraint: the same tokens and
    log-probabilities with drafting as one token a call, in no more calls."""
    plain_ids, plain_logprobs, plain_calls = _generate(tiny_checkpoint, 0, temperature, constrained)
    ids, logprobs, calls = _generate(tiny_checkpoint, 8, temperature, constrained)
    assert ids == plain_ids and logprobs == pytest.approx(plain_logprobs, abs=1e-4)
    assert calls <= plain_calls


def test_the_shipped_model_steps_the_same_in_fewer_calls() -> None:
    """The shipped model copies most of a state from the one before: the same stops, in fewer model calls."""
    from model.paths import DEFAULT_CHECKPOINT
    from model.session import NeuralDebugger
    from protocol.debugger import Action, ActionKind

    program = "def total(prices):\n    s = 0.0\n    for p in prices:\n        s += p\n    return s\n\n\nrows = [1.5, 2.25, 3.0]\nt = total(rows)\nprint(t)\n"
    walks = []
    for lookahead in (0, 8):
        session = NeuralDebugger.from_checkpoint(DEFAULT_CHECKPOINT, program)
        session.backend.lookahead = lookahead
        session.backend.forced_drafts = False  # lookup drafting alone (tests/test_forced_drafts.py: the two together)
        runner = CountingRunner(session.backend._runner)
        session.backend._runner = runner
        states = [session.start()]
        for kind in [ActionKind.STEP_OVER, ActionKind.STEP_OVER, ActionKind.STEP_INTO] + [ActionKind.STEP_INTO] * 5:
            if states[-1].finished:
                break
            states.append(session.step(Action(kind=kind)))
        session.close()
        walks.append((states, runner.calls))
    (plain_states, plain_calls), (states, calls) = walks
    assert states == plain_states
    assert calls < 0.8 * plain_calls, (calls, plain_calls)
