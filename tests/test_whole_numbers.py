"""Whole-number decoding: the search is exact (checked against brute force), and the transformers
backend uses it after `<|line_sep|>`, leaving its KV cache consistent."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.backends.hf import HFBackend
from model.backends.whole_numbers import best_number
from model.decode.constraints import RegexConstraint

DIGITS = {str(d): d for d in range(10)}  # token id == digit; id 10 is "anything else"
VOCAB = 11


def _normalized(weights: list[float]) -> list[float]:
    total = sum(weights)
    return [math.log(w / total) if w > 0 else -math.inf for w in weights]


def _table(seed_weights: dict[str, list[float]]):
    def dist(prefix: str) -> list[float]:
        return _normalized(seed_weights.get(prefix, [1.0] * VOCAB))
    return dist


def _whole_score(dist, number: str) -> float:
    score = sum(dist(number[:i])[DIGITS[c]] for i, c in enumerate(number))
    after = dist(number)
    return score + math.log(max(1.0 - sum(math.exp(after[i]) for i in range(10)), 1e-30))


def test_picks_the_most_probable_number_not_the_most_probable_first_digit() -> None:
    # first digit: "1" 0.6 (it covers 12 and 14), "3" 0.4; after "1": "2" and "4" 0.5 each; numbers end there
    ends = [0.0] * 10 + [1.0]
    weights = {"": [0, 0.6, 0, 0.4, 0, 0, 0, 0, 0, 0, 0], "1": [0, 0, 0.5, 0, 0.5, 0, 0, 0, 0, 0, 0],
               "3": ends, "12": ends, "14": ends}
    allowed = {"3", "12", "14"}
    dist = _table(weights)
    choice = best_number(dist(""), dist, digit_ids=DIGITS, continue_ids=list(range(10)),
                         can_extend=lambda p: any(a.startswith(p) for a in allowed), can_end=lambda p: p in allowed)
    assert choice is not None and choice.digits == "3"
    assert choice.logprobs == pytest.approx((math.log(0.4),))


def test_a_short_number_must_also_be_likely_to_end() -> None:
    # "1" is allowed to end, but the model continues it to "17" with probability 0.9
    weights = {"": [0, 0.7, 0.3] + [0] * 8, "1": [0] * 7 + [0.9, 0, 0, 0.1], "2": [0] * 10 + [1.0], "17": [0] * 10 + [1.0]}
    dist = _table(weights)
    choice = best_number(dist(""), dist, digit_ids=DIGITS, continue_ids=list(range(10)),
                         can_extend=lambda p: p in {"1", "2", "17"}, can_end=lambda p: p in {"1", "2", "17"})
    assert choice is not None and choice.digits == "17"


def test_nothing_allowed_gives_none() -> None:
    dist = _table({})
    assert best_number(dist(""), dist, digit_ids=DIGITS, continue_ids=list(range(10)),
                       can_extend=lambda p: False, can_end=lambda p: False) is None


@settings(max_examples=60, deadline=None)
@given(
    allowed=st.sets(st.integers(min_value=1, max_value=140), min_size=1, max_size=25),
    weights=st.dictionaries(st.sampled_from(["", "1", "2", "3", "10", "11", "12", "13", "14"]),
                            st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=VOCAB, max_size=VOCAB)),
)
def test_search_is_exact_against_brute_force(allowed: set[int], weights: dict[str, list[float]]) -> None:
    numbers = {str(n) for n in allowed}
    dist = _table(weights)
    choice = best_number(dist(""), dist, digit_ids=DIGITS, continue_ids=list(range(10)),
                         can_extend=lambda p: any(a.startswith(p) for a in numbers), can_end=lambda p: p in numbers,
                         max_expansions=1000)
    assert choice is not None and choice.digits in numbers
    best = max(_whole_score(dist, n) for n in numbers)
    assert _whole_score(dist, choice.digits) == pytest.approx(best, abs=1e-9)


# ------------------------------------------------------------------ in the transformers backend


@pytest.fixture(scope="module")
def backend(tiny_checkpoint: Path) -> HFBackend:
    b = HFBackend(tiny_checkpoint)
    yield b
    b.close()


def _model_score(b: HFBackend, prompt: list[int], number: str) -> float:
    """log P(number, then not a digit) under the model, by plain teacher-forced forward passes."""
    import torch

    digit_ids = [b._digit_ids[c] for c in number]
    with torch.inference_mode():
        logits = b.model(input_ids=torch.tensor([prompt + digit_ids])).logits[0].float()
    logits = logits.masked_fill(b._invalid, -math.inf)
    lp = torch.log_softmax(logits, dim=-1)
    start = len(prompt) - 1
    score = sum(float(lp[start + i, t]) for i, t in enumerate(digit_ids))
    after = lp[start + len(digit_ids)]
    return score + math.log(max(1.0 - float(after[b._continue_ids].exp().sum()), 1e-30))


@pytest.mark.parametrize("lines", [("1", "12", "3"), ("7", "70", "71", "112"), ("2",)])
def test_backend_writes_the_most_probable_allowed_line(backend: HFBackend, tiny_checkpoint: Path, lines: tuple[str, ...]) -> None:
    prompt = backend.tokenizer.encode("<|call_sep|>f<|line_sep|>", add_special_tokens=False)
    assert backend._table[prompt[-1]] == b"<|line_sep|>"
    constraint = RegexConstraint("(" + "|".join(lines) + r")\{\}")
    backend.reset_cache()
    gen = backend.generate(prompt, max_tokens=8, temperature=0.0, stop_ids=[], constraint=constraint)
    number = gen.text.split("{")[0]
    assert number in lines and gen.text == number + "{}"
    scores = {n: _model_score(backend, prompt, n) for n in lines}
    assert scores[number] == pytest.approx(max(scores.values()), abs=1e-4)
    # the cache holds exactly the emitted tokens: continuing from it equals a fresh backend
    longer = prompt + gen.token_ids
    assert backend.generate(longer, max_tokens=4, temperature=0.0, stop_ids=[]).token_ids == \
        HFBackend(tiny_checkpoint).generate(longer, max_tokens=4, temperature=0.0, stop_ids=[]).token_ids


def test_digit_by_digit_remains_available(tiny_checkpoint: Path) -> None:
    b = HFBackend(tiny_checkpoint, whole_numbers=False)
    prompt = b.tokenizer.encode("<|call_sep|>f<|line_sep|>", add_special_tokens=False)
    gen = b.generate(prompt, max_tokens=8, temperature=0.0, stop_ids=[], constraint=RegexConstraint(r"(1|12|3)\{\}"))
    assert gen.text in {"1{}", "12{}", "3{}"}
