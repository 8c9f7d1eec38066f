"""The inference backend interface: prompt token ids in; generated ids, text and log-probs out.

Every backend (in-process transformers, vLLM's OpenAI-compatible server, vLLM's in-process
engine) implements `Backend`. A `Constraint` restricts what may be generated: backends that mask
logits themselves use its incremental check (`allows`), vLLM receives its `regex` through
`structured_outputs`. A step's constraint is its decoding spec's grammar (`model.decode.spec.Grammar`, a
`Grammar` here): where it holds checks beyond the regex (`unfolded`), a backend that enforces the regex
only applies them to the answer (`refuse_unadmitted`). This module imports nothing heavy.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


class BackendError(RuntimeError):
    """A backend could not produce a generation (server down, garbage answer, missing package); the message is for the user."""


@runtime_checkable
class Constraint(Protocol):
    """What a generation must look like, as a regular expression over its text.

    `allows(text)` says whether `text` can still be extended into a full match (a prefix check),
    `complete(text)` whether it is a full match (so a stop token may end it). `regex` is the same
    language for vLLM's `structured_outputs` (no look-arounds, no back-references). A constraint may also have
    `next_bytes(text)`: the bytes that may come next (a superset of what `allows` accepts; None: not known), which
    the transformers backend uses to skip tokens before checking them one by one, and `forced_text(text)`: the text every
    match extending `text` goes on with ("": none known), which it drafts in one model call (`HFBackend(forced_drafts=)`).
    """

    regex: str

    def allows(self, text: str) -> bool: ...

    def complete(self, text: str) -> bool: ...


@runtime_checkable
class Grammar(Constraint, Protocol):
    """A constraint whose `regex` leaves out some checks (`unfolded`: their names); `admits(text)` says whether a
    finished answer (with or without the stop token's text) passes the regex and every check."""

    unfolded: tuple[str, ...]

    def admits(self, text: str) -> bool: ...


@dataclass
class Generation:
    """One completion.

    token_ids: generated ids, without the stop token that ended it (see `stop_token`).
    text: those ids decoded (special tokens kept).
    logprobs: one natural-log probability per generated id, under the model's raw distribution.
    finish_reason: "stop" (a stop token ended it), "length" (max_tokens reached), "deadline" (out of time), "repeat" (it ran into a
        repetition: `stop_repeats`), "error", or
        "rejected" (a backend that enforces only the regex finished an answer the grammar's other checks refuse).
    prompt_tokens: length of the prompt.
    prefilled: prompt tokens actually computed for this request (the rest came from a KV cache);
        None when the backend cannot tell (a remote server).
    stop_token: the stop id that ended the generation, if any.
    """

    token_ids: list[int]
    text: str
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    prefilled: int | None = None
    stop_token: int | None = None


@runtime_checkable
class Backend(Protocol):
    """A language model that continues token-id prompts."""

    def generate(
        self,
        prompt_ids: list[int],
        *,
        max_tokens: int,
        temperature: float,
        stop_ids: Sequence[int],
        constraint: Constraint | None = None,
        deadline: float | None = None,
        stop_repeats: bool = False,
    ) -> Generation:
        """Continue `prompt_ids` greedily (temperature 0) or by sampling until a stop id or `max_tokens`.

        deadline: a `time.monotonic()` time after which a backend that decodes token by token stops early
        (finish_reason "deadline"); a remote or batched backend may finish the request (its `max_tokens` bounds it).
        stop_repeats: a backend that decodes token by token stops as soon as the text ends in a long repetition inside
        one value (`model.decode.cut_values.repeating_tail`; finish_reason "repeat"); a remote one may finish the request."""
        ...

    def close(self) -> None:
        """Release the model, the cache or the connection."""
        ...


@runtime_checkable
class Scorer(Protocol):
    """A backend that can also score a given continuation (teacher forcing), e.g. to rerank candidates."""

    def score(self, prompt_ids: list[int], target_ids: list[int]) -> list[float]:
        """One natural-log probability per id of `target_ids`, each after the prompt and the ids before it."""
        ...


def refuse_unadmitted(gen: Generation, constraint: Constraint | None) -> Generation:
    """`gen` finished as "rejected" when it ended with the stop token but `constraint`'s checks beyond its regex (a
    `Grammar`'s `unfolded` ones) refuse it: what a backend that enforces only the regex (vLLM) does with the rest.
    An answer the regex itself refuses (a server that ignored it) is left to fail parsing, as any malformed reply."""
    if (isinstance(constraint, Grammar) and constraint.unfolded and gen.finish_reason == "stop" and not constraint.admits(gen.text)
            and constraint.regex_admits(gen.text)):  # fmt: skip
        gen.finish_reason = "rejected"
    return gen
