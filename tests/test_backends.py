"""The transformers backend on a tiny random checkpoint, and the vLLM engine's missing-package error."""
from __future__ import annotations

from pathlib import Path

import pytest

from model.backends.base import Backend, BackendError, Generation
from model.backends.draws import draw_seed
from model.backends.hf import HFBackend, common_prefix, decode_prefix, split_utf8
from model.decode.constraints import RegexConstraint


@pytest.fixture(scope="module")
def backend(tiny_checkpoint: Path) -> HFBackend:
    b = HFBackend(tiny_checkpoint)
    yield b
    b.close()


def _prompt(b: HFBackend, text: str = "def add(a, b):\n    c = a + b\n    return c\n") -> list[int]:
    return b.tokenizer.encode(text, add_special_tokens=False)


def test_is_a_backend(backend: HFBackend) -> None:
    assert isinstance(backend, Backend)


def test_greedy_is_deterministic_and_cache_exact(backend: HFBackend, tiny_checkpoint: Path) -> None:
    prompt = _prompt(backend)
    first = backend.generate(prompt, max_tokens=12, temperature=0.0, stop_ids=[])
    assert isinstance(first, Generation) and len(first.token_ids) == 12 and len(first.logprobs) == 12
    assert first.finish_reason == "length" and all(lp <= 0 for lp in first.logprobs)
    # extend the prompt with what was generated plus a few tokens: only the new tail is prefilled
    longer = prompt + first.token_ids + _prompt(backend, "x = 1\n")
    cached = backend.generate(longer, max_tokens=8, temperature=0.0, stop_ids=[])
    assert cached.prefilled == len(longer) - (len(prompt) + len(first.token_ids) - 1)
    fresh_backend = HFBackend(tiny_checkpoint)
    fresh = fresh_backend.generate(longer, max_tokens=8, temperature=0.0, stop_ids=[])
    assert fresh.prefilled == len(longer)
    assert fresh.token_ids == cached.token_ids
    assert fresh.logprobs == pytest.approx(cached.logprobs, abs=1e-4)


def test_prefill_stays_flat_as_session_grows(backend: HFBackend) -> None:
    backend.reset_cache()
    prompt = _prompt(backend)
    counts = []
    for _ in range(6):
        gen = backend.generate(prompt, max_tokens=5, temperature=0.0, stop_ids=[])
        counts.append(gen.prefilled)
        prompt = prompt + gen.token_ids + _prompt(backend, "\n")
    assert counts[0] == len(_prompt(backend))
    assert max(counts[1:]) <= 1 + len(_prompt(backend, "\n")), counts


def test_diverging_prompt_crops_cache(backend: HFBackend) -> None:
    base = _prompt(backend)
    backend.generate(base + _prompt(backend, "y = 2\n"), max_tokens=3, temperature=0.0, stop_ids=[])
    other = base + _prompt(backend, "z = [3]\n")
    gen = backend.generate(other, max_tokens=3, temperature=0.0, stop_ids=[])
    assert gen.prefilled == len(other) - common_prefix(base + _prompt(backend, "y = 2\n"), other)
    ref = HFBackend(backend.model.name_or_path).generate(other, max_tokens=3, temperature=0.0, stop_ids=[])
    assert ref.token_ids == gen.token_ids


def test_stop_token_ends_generation(backend: HFBackend) -> None:
    prompt = _prompt(backend)
    free = backend.generate(prompt, max_tokens=6, temperature=0.0, stop_ids=[])
    stop = free.token_ids[3]
    first_at = free.token_ids.index(stop)
    gen = backend.generate(prompt, max_tokens=6, temperature=0.0, stop_ids=[stop])
    assert gen.finish_reason == "stop" and gen.stop_token == stop
    assert gen.token_ids == free.token_ids[:first_at]
    assert len(gen.logprobs) == len(gen.token_ids)


def test_sampling_is_seeded(tiny_checkpoint: Path) -> None:
    a = HFBackend(tiny_checkpoint, seed=7)
    b = HFBackend(tiny_checkpoint, seed=7)
    prompt = _prompt(a)
    ga = a.generate(prompt, max_tokens=10, temperature=1.0, stop_ids=[])
    gb = b.generate(prompt, max_tokens=10, temperature=1.0, stop_ids=[])
    assert ga.token_ids == gb.token_ids


def test_each_sampled_answer_has_its_own_seed_whatever_came_before(tiny_checkpoint: Path) -> None:
    """The n-th sample of a prompt is the same in a fresh backend and in one that sampled other prompts first."""
    a = HFBackend(tiny_checkpoint, seed=7, seed_per_draw=True)
    b = HFBackend(tiny_checkpoint, seed=7, seed_per_draw=True)
    prompt = _prompt(a)
    other = prompt[:-1] + [prompt[-1] ^ 1]
    first = [a.generate(prompt, max_tokens=12, temperature=2.0, stop_ids=[]).token_ids for _ in range(3)]
    for _ in range(2):
        b.generate(other, max_tokens=12, temperature=2.0, stop_ids=[])
        b.generate(prompt[:3], max_tokens=5, temperature=0.0, stop_ids=[])  # greedy decoding draws nothing
    assert [b.generate(prompt, max_tokens=12, temperature=2.0, stop_ids=[]).token_ids for _ in range(3)] == first
    assert len({tuple(ids) for ids in first}) > 1  # the draws of one prompt differ from each other
    a.generate(prompt, max_tokens=3, temperature=0.0, stop_ids=[])  # a greedy answer to it: the count starts over
    assert a.generate(prompt, max_tokens=12, temperature=2.0, stop_ids=[]).token_ids == first[0]
    assert draw_seed(7, prompt, 0) != draw_seed(7, prompt, 1) != draw_seed(8, prompt, 1)
    assert draw_seed(7, prompt, 0) != draw_seed(7, other, 0)


@pytest.mark.parametrize("temperature", [0.0, 1.5])
def test_constraint_is_obeyed_by_random_model(backend: HFBackend, temperature: float) -> None:
    constraint = RegexConstraint(r'(3|14|27) \{("[a-z]{1,4}": "[0-9]{1,3}"(, "[a-z]{1,4}": "[0-9]{1,3}")*)?\}')
    stop = backend.tokenizer.convert_tokens_to_ids("<|exit_normal|>")
    gen = backend.generate(_prompt(backend), max_tokens=60, temperature=temperature, stop_ids=[stop], constraint=constraint)
    text = decode_prefix(b"".join(backend._table[t] for t in gen.token_ids))
    assert constraint.allows(text) and text[:1] in {"1", "2", "3"}
    if gen.finish_reason == "stop":
        assert constraint.complete(text)
    if gen.finish_reason == "stop":
        assert gen.text == text


def test_bad_prompts_raise_clear_errors(backend: HFBackend, tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="empty prompt"):
        backend.generate([], max_tokens=3, temperature=0.0, stop_ids=[])
    with pytest.raises(BackendError, match="outside the vocabulary"):
        backend.generate([10**6], max_tokens=3, temperature=0.0, stop_ids=[])
    with pytest.raises(BackendError, match="does not fit"):
        backend.generate([1] * backend.max_model_len, max_tokens=3, temperature=0.0, stop_ids=[])
    with pytest.raises(BackendError, match="not a checkpoint folder"):
        HFBackend(tmp_path)


def test_decode_prefix_drops_partial_character() -> None:
    data = "é".encode()
    assert decode_prefix(data[:1]) == ""
    assert decode_prefix(b"ab" + data) == "abé"
    assert split_utf8(b"a" + data[1:]) is None  # a lone continuation byte is not the start of a character
    assert split_utf8(b"a" + data[:1]) == ("a", data[:1])


def test_vllm_engine_missing_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    try:
        import vllm  # noqa: F401
    except ImportError:
        from model.backends.vllm_engine import VLLMEngineBackend

        with pytest.raises(BackendError, match=r"pip install '\.\[gpu\]'"):
            VLLMEngineBackend(tmp_path)
    else:  # pragma: no cover - only where vLLM is installed
        pytest.skip("vLLM is installed here")


def test_score_is_teacher_forced_generation(backend: HFBackend) -> None:
    """score() of what greedy decoding wrote gives the generation's own log-probs, with or without a warm cache."""
    prompt = _prompt(backend)
    gen = backend.generate(prompt, max_tokens=10, temperature=0.0, stop_ids=[])
    assert backend.score(prompt, gen.token_ids) == pytest.approx(gen.logprobs, abs=1e-4)
    backend.reset_cache()
    assert backend.score(prompt, gen.token_ids) == pytest.approx(gen.logprobs, abs=1e-4)
    assert backend.score(prompt, []) == []
    with pytest.raises(BackendError):
        backend.score(prompt, [backend.vocab_size + 5])
    with pytest.raises(BackendError):
        backend.score(prompt, [1] * backend.max_model_len)


def test_the_vocabulary_scan_skips_only_tokens_the_constraint_refuses(backend: HFBackend) -> None:
    """`_candidates` drops tokens whose first byte the regex cannot take next: the allowed tokens of a sampled step's
    scan are the same as checking every token, at every prefix of a rendered state (and after a partial character)."""
    import torch

    from model.decode.spec import build_grammar
    from model.prompt import language as lang
    from protocol.debugger import Action, ActionKind, Frame, State, StopReason

    program = "def f(s):\n    t = s.upper()\n    return t\n\nx = f('é')\n"
    module = Frame(name="<module>", line=5, source="x = f('é')")
    inside = State(reason=StopReason.STEP, frames=[Frame(name="f", line=2, locals={"s": "'é'"}), module])
    after = State(reason=StopReason.STEP, frames=[Frame(name="f", line=3, locals={"s": "'é'", "t": "'É'"}), module])
    grammar = build_grammar(program, inside, Action(kind=ActionKind.STEP_OVER))
    assert grammar is not None and grammar.next_bytes("") is not None
    probs = torch.ones(backend.vocab_size)
    probs[backend._invalid] = 0.0
    stops = {backend.tokenizer.convert_tokens_to_ids(lang.STATE_END)}
    data = lang.render_state(after, inside).encode()
    non_ascii = {t for t, piece in enumerate(backend._table) if piece and piece[0] >= 128}
    skipped = 0
    opened = 0
    for cut in range(len(data) + 1):  # every prefix: inside the string value 'É' (non-ASCII tokens allowed) and mid-character
        every = [t for t in range(backend.vocab_size) if probs[t] > 0 and backend._valid(t, stops, grammar, data[:cut])]
        opened += bool(non_ascii & set(every))
        candidates = backend._candidates(probs > 0, stops, grammar, data[:cut])
        assert [t for t in candidates if backend._valid(t, stops, grammar, data[:cut])] == every
        logits = torch.randn(backend.vocab_size, generator=torch.Generator().manual_seed(cut))
        order = torch.argsort(logits, descending=True)
        best = next((t for t in order.tolist() if t in every), None)  # greedy: the most probable allowed token
        assert backend._first_valid(order, logits, stops, grammar, data[:cut]) == best
        skipped += backend.vocab_size - len(candidates)
    assert skipped > backend.vocab_size * 10 and opened  # most prefixes rule out most first bytes; some allow non-ASCII ones
    ended = RegexConstraint("ab")  # after "ab" no byte may come, but the stop token may
    assert ended.next_bytes("ab") == frozenset()
    assert [t for t in backend._candidates(probs > 0, stops, ended, b"ab") if backend._valid(t, stops, ended, b"ab")] == sorted(stops)
