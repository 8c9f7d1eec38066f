"""One decoding spec per step: what every backend enforces, how drawn answers are scored, and what is drawn.

`build_spec(program, previous, action, ...)` is called once per (program, state, action) by the session
(`model.session.NeuralDebugger`), from the static facts of the source and the `model.decoding` rules
(plain or full); the backends receive it and never build rules themselves. A `DecodingSpec` holds:

- `grammar` (`Grammar`): one regular expression over the state text (`model.decode.constraints`: the
  state language narrowed by control flow, frame names, kinds, known entries, line effects), plus the
  checks that are not part of the regex (`Grammar.unfolded`): ``reprs`` (`model.decode.repr_check`: a
  value's brackets and quotes balance, which no regular expression can say) and ``call_chain``
  (`model.static.call_chain`: each new frame is a function the frame below can start; regular, but its
  regex is the path language of the call graph, exponential by state elimination and of unbounded
  depth). The transformers backend masks each token by `Grammar.allows` (regex and checks, prefix by
  prefix); vLLM enforces `Grammar.regex` as ``structured_outputs`` and applies the unfolded checks to
  the answer that comes back (`Grammar.admits`; a refused answer is finished as ``"rejected"`` and the
  session's second, sampled attempt follows, then the closing of `model.decode.constraints.close_text`).
- `scoring` (`ScoringRule`): how several drawn answers are ranked (`model.decode.rerank`), a pure
  function of an answer (its state) and its tokens' log-probabilities under teacher forcing, which
  every backend gives (`model.backends.base.Scorer`: transformers, the vLLM server and engine).
- `plan` (`SamplingPlan`): the greedy answer, then ``count - 1`` samples at `SamplingPlan.sample_temperature`
  (each sampled draw seeded by `model.backends.draws.draw_seed`), the token budget, the sampled retry.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from model.backends.base import Constraint
from model.decode.arg_evidence import uses_at, violations
from model.decode.constraints import state_constraint
from model.decode.rerank import (CALL_CANDIDATES, CHECK_WEIGHT, COARSE_CANDIDATES, EVIDENCE_WEIGHT, SAMPLE_TEMPERATURE, STALE_PENALTY,
                                 Candidate, best_candidate, is_stale)  # fmt: skip
from model.decoding import FULL_RULES, DecodingRules
from model.prompt.language import STATE_END
from model.static.call_chain import ChainCheckedConstraint
from model.decode.repr_check import CheckedConstraint
from protocol.debugger import Action, ActionKind, State

# actions whose stop is many lines away: one answer simulates them all (`coarse_candidates` answers are drawn)
COARSE_ACTIONS = frozenset({ActionKind.STEP_RETURN, ActionKind.CONTINUE, ActionKind.BREAKPOINT})
# actions after which companion models draw and score answers too: a call's arguments
ENSEMBLE_KINDS = frozenset({ActionKind.INV_STEP_CALL})


@dataclass(frozen=True)
class Grammar:
    """What the answer must look like: `regex` for every backend, `unfolded` checks applied beside it.

    `constraint` is the step's constraint (`model.decode.constraints.state_constraint`): its `allows` /
    `complete` apply the regex (without the stop token) and the unfolded checks together; `regex`
    includes the stop token's text (`STATE_END`), so a grammar engine that ends a match only at EOS
    still reaches the stop token.
    """

    constraint: Constraint
    unfolded: tuple[str, ...] = ()

    @property
    def regex(self) -> str:
        return self.constraint.regex

    def allows(self, text: str) -> bool:
        """Whether `text` (no stop token) can still become an answer: the regex and every unfolded check."""
        return self.constraint.allows(text)

    def complete(self, text: str) -> bool:
        """Whether `text` (no stop token) is a whole answer."""
        return self.constraint.complete(text)

    def next_bytes(self, text: str) -> frozenset[int] | None:
        """The bytes the regex lets follow `text` (None: not known): a superset of what `allows` accepts next."""
        return self.constraint.next_bytes(text)

    def forced_text(self, text: str) -> str:
        """The text the regex makes every answer that extends `text` go on with ("": none known); a check may still refuse it."""
        return self.constraint.forced_text(text)

    def admits(self, text: str) -> bool:
        """Whether a finished answer (with or without the stop token's text) is one: what a backend that only
        enforces `regex` (vLLM) checks the unfolded rules by."""
        return self.complete(text.removesuffix(STATE_END))

    def regex_admits(self, text: str) -> bool:
        """Whether a finished answer matches the regex alone (the unfolded checks aside)."""
        inner = self.constraint
        while getattr(inner, "inner", None) is not None:
            inner = inner.inner
        return inner.complete(text.removesuffix(STATE_END))


@dataclass(frozen=True)
class ScoringRule:
    """How drawn answers are ranked (`model.decode.rerank`):

        likelihood - evidence_weight * violations - stale_penalty * stale + check_weight * check

    likelihood: the mean, over the models that drew (the session's and its companions), of the sum of the
    answer's token log-probabilities (its ids and the stop token, teacher-forced). `evidence` (``inv_step_call``
    right after a call returned): the called function's body's argument uses (`model.decode.arg_evidence`);
    `stale` (after a coarse action): an answer back in the same frame with nothing changed is penalised;
    `check`: the backward check's log-probability, where `checks` (weight 0 by default: not computed)."""

    program: str
    previous: State
    evidence: bool = False
    stale: bool = False
    checks: bool = False
    check_weight: float = CHECK_WEIGHT
    evidence_weight: float = EVIDENCE_WEIGHT
    stale_penalty: float = STALE_PENALTY

    def candidate(self, text: str, state: State, logprobs: Sequence[Sequence[float] | None], *, greedy: bool = False,
                  check: float | None = None) -> Candidate:  # fmt: skip
        """The scored `Candidate` of an answer: `text` its full rendering, `state` what it parses to, `logprobs` its
        token log-probabilities under each model (None: that model could not score it, which makes it -inf)."""
        sums = [float(sum(lp)) if lp is not None else -math.inf for lp in logprobs]
        likelihood = sum(sums) / len(sums) if sums else -math.inf
        if not self.checks:
            check = None
        elif check is None:
            check = -math.inf
        contradicted = self._violations(state) if self.evidence and self.evidence_weight != 0 else 0
        stale = self.stale and is_stale(state, self.previous)
        return Candidate(text=text, likelihood=likelihood, check=check, greedy=greedy, violations=contradicted, stale=stale)

    def score(self, candidate: Candidate) -> float:
        """The candidate's total (the formula above)."""
        return candidate.total(self.check_weight, self.evidence_weight, self.stale_penalty)

    def best(self, candidates: Sequence[Candidate]) -> int:
        """Index of the best candidate (the greedy one on ties, or when none could be scored)."""
        return best_candidate(candidates, self.check_weight, self.evidence_weight, self.stale_penalty)

    def _violations(self, entry: State) -> int:
        """How many uses of the called function's parameters the predicted arguments contradict."""
        top = entry.top
        if top is None or top.file is not None:
            return 0
        return violations(uses_at(self.program, top.name, top.line), top.locals)


@dataclass(frozen=True)
class SamplingPlan:
    """What a step draws: the first answer at `temperature` (0: greedy), then ``count - 1`` samples at
    `sample_temperature`; each attempt has `max_tokens`, a failed one is tried once more with twice the tokens at
    `retry_temperature` (None: `temperature`). `ensemble`: the companion models draw `count` answers too. Sampled
    draws are seeded per draw (`model.backends.draws.draw_seed`: the backend's seed, the prompt, the draw's
    number), so the same stop asked again draws the same answers on any backend that takes a seed."""

    count: int = 1
    temperature: float = 0.0
    sample_temperature: float = SAMPLE_TEMPERATURE
    max_tokens: int = 384
    retry_temperature: float | None = 0.7
    ensemble: bool = False

    def draw_temperatures(self, count: int | None = None) -> list[float | None]:
        """The temperature of each drawn answer (None: the plan's first-answer temperature); `count`: instead of the plan's."""
        return [None] + [self.sample_temperature] * (max(1, self.count if count is None else count) - 1)


@dataclass(frozen=True)
class DecodingSpec:
    """Everything a backend needs to decode one step (see the module docstring). `grammar` None: unconstrained."""

    grammar: Grammar | None
    scoring: ScoringRule
    plan: SamplingPlan


@dataclass(frozen=True)
class SpecOptions:
    """The session's settings that go into every spec (`model.session.NeuralDebugger`'s keywords of the same names)."""

    rules: DecodingRules = FULL_RULES
    constrained: bool = True
    flow_constraint: bool = True
    repr_check: bool = True
    candidates: int = 1
    call_candidates: int = CALL_CANDIDATES
    coarse_candidates: int = COARSE_CANDIDATES
    check_weight: float = CHECK_WEIGHT
    evidence_weight: float = EVIDENCE_WEIGHT
    stale_penalty: float = STALE_PENALTY
    temperature: float = 0.0
    max_state_tokens: int = 384
    retry_temperature: float | None = 0.7
    ensemble_kinds: frozenset[ActionKind] = ENSEMBLE_KINDS


def build_spec(program: str, previous: State, action: Action | None, options: SpecOptions = SpecOptions(), *,
               modules: Mapping[str, str] | None = None, breakpoints: Sequence[int] = (), kind: ActionKind | None = None,
               enter: bool = False, returned: str | None = None, file_breakpoints: Mapping[str, Sequence[int]] | None = None) -> DecodingSpec:  # fmt: skip
    """The spec of the state after `previous` when `action` is asked. `action` None: an answer not narrowed by an
    action, as next-state evaluation asks inverse actions; `kind` then names the action asked, which sets the plan
    (how many answers) but neither the grammar nor the scoring's evidence and stale terms, which need the narrowing
    action. `breakpoints`: the program's lines; `modules`: other user files whose frames may appear (path -> source);
    `file_breakpoints`: the breakpoints in those files (path -> lines).
    `enter`: a Step Into's stop must enter a call of the line (a coarse action's fine step, `model.static.reach`).
    `returned`: `previous` stops back on its calling line after that function's call came back (the session's history
    says so: `model.static.reach.back_on_calling_line`)."""
    narrowing = action.kind if action is not None else None
    return DecodingSpec(grammar=build_grammar(program, previous, action, options, modules=modules, breakpoints=breakpoints, enter=enter,
                                                 returned=returned, file_breakpoints=file_breakpoints),
                        scoring=scoring_rule(program, previous, narrowing, options),
                        plan=sampling_plan(narrowing or kind, options))  # fmt: skip


def build_grammar(program: str, previous: State, action: Action | None, options: SpecOptions = SpecOptions(), *,
                  modules: Mapping[str, str] | None = None, breakpoints: Sequence[int] = (), enter: bool = False,
                  returned: str | None = None, file_breakpoints: Mapping[str, Sequence[int]] | None = None) -> Grammar | None:  # fmt: skip
    """The step's `Grammar` (None when the session decodes unconstrained)."""
    if not options.constrained:
        return None
    flow_action = action if options.flow_constraint else None
    constraint = state_constraint(program, previous, modules, action=flow_action, breakpoints=tuple(breakpoints),
                                  reprs=options.repr_check, rules=options.rules, enter=enter, returned=returned,
                                  file_breakpoints=file_breakpoints)  # fmt: skip
    return Grammar(constraint, unfolded_checks(constraint))


def unfolded_checks(constraint: Constraint) -> tuple[str, ...]:
    """The names of the checks `constraint` applies beyond its regex (outermost first)."""
    names: list[str] = []
    while True:
        if isinstance(constraint, CheckedConstraint):
            if constraint.judged:
                names.append("reprs")
        elif isinstance(constraint, ChainCheckedConstraint):
            names.append("call_chain")
        else:
            return tuple(names)
        constraint = constraint.inner


def scoring_rule(program: str, previous: State, kind: ActionKind | None, options: SpecOptions = SpecOptions()) -> ScoringRule:
    """How the step's answers are ranked: argument evidence after ``inv_step_call`` from a returned call, the stale
    penalty after a coarse action, the check term where its weight is not 0."""
    returned = kind is ActionKind.INV_STEP_CALL and previous.return_value is not None
    return ScoringRule(program=program, previous=previous, evidence=returned, stale=kind in COARSE_ACTIONS,
                       checks=returned and options.check_weight != 0, check_weight=options.check_weight,
                       evidence_weight=options.evidence_weight, stale_penalty=options.stale_penalty)  # fmt: skip


def sampling_plan(kind: ActionKind | None, options: SpecOptions = SpecOptions()) -> SamplingPlan:
    """How many answers the step draws (one without the ``ranking`` rule) and whether the companions draw too."""
    if not options.rules.ranking:
        count = 1
    elif kind is ActionKind.INV_STEP_CALL:
        count = options.call_candidates
    elif kind in COARSE_ACTIONS:
        count = options.coarse_candidates
    else:
        count = options.candidates
    return SamplingPlan(count=max(1, int(count)), temperature=options.temperature, max_tokens=options.max_state_tokens,
                        retry_temperature=options.retry_temperature,
                        ensemble=options.rules.ensemble and kind in options.ensemble_kinds)  # fmt: skip
