"""Choosing a predicted stop among several drawn answers: the model's most likely one, optionally checked backwards.

Greedy decoding under the session's constraints takes the most likely token at each point, which is
not the most likely answer: a small model that starts a value wrongly cannot take it back. So the
session may draw several answers for one stop (the greedy one, then samples at `SAMPLE_TEMPERATURE`)
and keep the one with the highest score

    likelihood(c) + check_weight * check(c)

where ``likelihood(c) = log P(c | prompt)`` is the model's teacher-forced probability of the whole
answer (the stop token included), and ``check(c)`` is a second opinion where one exists:

* ``inv_step_call`` just after a call returned (CruxEval-I's posing): ``check(c) = log P(the later
  stop | c, step_return)``, whether stepping out of the call from candidate ``c`` leads to the
  return value the session already knows (a noisy channel: the model run forwards judges the
  arguments the model run backwards proposed).

For ``inv_step_call`` just after a call returned, the score also subtracts ``evidence_weight`` per use
of a parameter that the candidate's argument contradicts (`model.decode.arg_evidence`: ``text.endswith(x)``
with ``x = 3``): static evidence from the function's body, soft because a use in a branch that did
not run proves nothing.

After a coarse action (step_return, continue, a run to a breakpoint) the score subtracts
``stale_penalty`` from a *stale* answer (`is_stale`): a breakpoint stop back on an earlier or the
same line of the same frame, the frames below it unchanged, with every local as it was. That says a
loop ran at least one more iteration and changed nothing, which recorded runs rarely do (22 of 307
such loop-backs in `tracegen synth --count 1500 --seed 999`), but the model, copying the previous
locals, answers it often: soft, since a loop over equal items does it.

Nothing is run: every number is a probability under the model (the mean under the session's model and its
companions after `inv_step_call`, `model.backends.ensemble`), or read from the source. The greedy answer wins ties,
and is kept when no candidate can be scored (a backend without teacher forcing, a prompt too long).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from protocol.debugger import State, StopReason

CALL_CANDIDATES = 8  # default answers drawn for inv_step_call (docs/model-notes.md, session 11)
COARSE_CANDIDATES = 4  # default answers drawn after a coarse action (step_return, continue, run to a breakpoint; session 12)
SAMPLE_TEMPERATURE = 0.8  # the answers after the greedy one are sampled at this temperature
CHECK_WEIGHT = 0.0  # default weight of the check term (docs/model-notes.md, session 11: the measurements)
STALE_PENALTY = 3.0  # log-probability taken off a stale answer after a coarse action (docs/model-notes.md, session 15)
EVIDENCE_WEIGHT = 32.0  # log-probability taken off per contradicted use of an argument (docs/model-notes.md, session 14: 32 >= 8 on four sets of drawn answers)


@dataclass(frozen=True)
class Candidate:
    """One drawn answer: its text (a full state snapshot) and its log-probabilities."""

    text: str
    likelihood: float  # log P(this answer | the prompt); -inf when it could not be scored
    check: float | None = None  # log P(what is known | this answer), where a check exists; -inf: could not be scored
    greedy: bool = False
    violations: int = 0  # uses of the arguments this answer contradicts (`model.decode.arg_evidence`), where read
    stale: bool = False  # a coarse action's answer back in the same frame with nothing changed (`is_stale`)

    def total(self, check_weight: float = CHECK_WEIGHT, evidence_weight: float = EVIDENCE_WEIGHT,
              stale_penalty: float = STALE_PENALTY) -> float:  # fmt: skip
        if math.isinf(self.likelihood):
            return -math.inf
        score = self.likelihood - evidence_weight * self.violations - (stale_penalty if self.stale else 0.0)
        if self.check is None or check_weight == 0:
            return score
        if math.isinf(self.check):
            return -math.inf
        return score + check_weight * self.check


def best_candidate(candidates: Sequence[Candidate], check_weight: float = CHECK_WEIGHT, evidence_weight: float = EVIDENCE_WEIGHT,
                   stale_penalty: float = STALE_PENALTY) -> int:  # fmt: skip
    """Index of the candidate with the highest total; the greedy one (else the first) on ties or when none scored."""
    if not candidates:
        raise ValueError("no candidates to choose from")
    fallback = next((i for i, c in enumerate(candidates) if c.greedy), 0)
    best, best_total = fallback, candidates[fallback].total(check_weight, evidence_weight, stale_penalty)
    for i, candidate in enumerate(candidates):
        total = candidate.total(check_weight, evidence_weight, stale_penalty)
        if total > best_total:
            best, best_total = i, total
    return best


def is_stale(answer: State, previous: State) -> bool:
    """Whether `answer` is a breakpoint stop back in `previous`'s top frame (same depth, the frames below on
    the same (name, line, file)) on an earlier or the same line, with exactly the same locals. (An exception
    raised on the line the action started from stops there with nothing changed: not stale.)"""
    if answer.reason is not StopReason.BREAKPOINT or not answer.frames or len(answer.frames) != len(previous.frames):
        return False
    top, before = answer.frames[0], previous.frames[0]
    below_same = all((a.name, a.line, a.file) == (b.name, b.line, b.file) for a, b in zip(answer.frames[1:], previous.frames[1:]))
    return (below_same and (top.name, top.file) == (before.name, before.file) and top.line <= before.line
            and top.locals == before.locals)  # fmt: skip
