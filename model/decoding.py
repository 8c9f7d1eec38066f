"""Which decode-time rules a session applies: the model alone (`Decoding.PLAIN`) or the full decoding (`Decoding.FULL`).

Every predicted stop is decoded under a grammar. *Plain* keeps what any reader of the language and
the source agrees on: the state is well formed (`model.prompt.language.state_regex`, `model.decode.repr_check`)
and its stack is one static control flow allows (`model.static.flow`, `model.static.call_chain`; for
``inv_step_call`` the first line of the called function, `model.static.entry_locals`), with the greedy
answer alone. *Full* adds the rules whose weight or reach was chosen by measuring:

- ``frame_names``: a frame's locals' keys are the names visible on its line (`model.static.frame_names`),
  and ``inv_step_call``'s keys the function's entry locals (`model.static.entry_locals`);
- ``value_kinds``: a return value, a call's arguments and a function's locals begin as the kinds the source
  allows (`model.static.return_kinds`, `model.static.param_kinds`);
- ``known_entries``: a called frame's parameters fixed where the call passes literals (`model.static.call_args`);
- ``line_effects``: a step's delta lists only the names the line may change (`model.static.line_effects`), and
  the new names it certainly binds (`model.static.certain_bindings`); a Step Over from a class statement shows the
  class body's return value (`model.static.class_returns`);
- ``ranking``: several answers drawn after inv_step_call and the coarse actions, the most likely kept,
  with the argument evidence and the stale penalty (`model.decode.rerank`, `model.decode.arg_evidence`);
- ``ensemble``: companion models draw and score a call's arguments (`model.backends.ensemble`).

`rules_for(decoding)` gives the switches; a session takes them as one option (`NeuralDebugger(decoding=...)`)
and builds each step's decoding spec with them (`model.decode.spec.build_spec`: the grammar every backend
enforces, the scoring rule, the sampling plan). Plain is what the weights know on their own; the evaluations
report both (docs/evaluation.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Decoding(str, Enum):
    """How a session decodes: the model alone under well-formedness and control flow, or every rule."""

    PLAIN = "plain"
    FULL = "full"


@dataclass(frozen=True)
class DecodingRules:
    """The rules beyond well-formed states and control flow (see the module docstring); all on: the full decoding."""

    frame_names: bool = True
    value_kinds: bool = True
    known_entries: bool = True
    line_effects: bool = True
    ranking: bool = True
    ensemble: bool = True


FULL_RULES = DecodingRules()
PLAIN_RULES = DecodingRules(frame_names=False, value_kinds=False, known_entries=False, line_effects=False, ranking=False, ensemble=False)


def rules_for(decoding: Decoding | str) -> DecodingRules:
    """The rules of `decoding` ("plain" or "full"); ValueError for anything else."""
    return PLAIN_RULES if Decoding(decoding) is Decoding.PLAIN else FULL_RULES
