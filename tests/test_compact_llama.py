"""model/backends/compact_llama.py: the hand-run Llama computes transformers' logits, on its own cache, and the
transformers backend decodes the same answers through it."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from model.backends.compact_llama import CompactLlama
from model.backends.hf import HFBackend, TransformersRunner
from tests.conftest import build_tiny_checkpoint

TOLERANCE = 1e-4


def _model(**shape) -> LlamaForCausalLM:
    torch.manual_seed(3)
    config = LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                         head_dim=16, max_position_embeddings=128, initializer_range=0.2, **shape)
    return LlamaForCausalLM(config).eval()


SHAPES = {
    "plain": {"num_key_value_heads": 4},
    "grouped-query, biases, tied head": {"num_key_value_heads": 2, "attention_bias": True, "mlp_bias": True,
                                         "tie_word_embeddings": True},
    "rope theta": {"num_key_value_heads": 4, "rope_parameters": {"rope_type": "default", "rope_theta": 500.0}},
}


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_logits_match_transformers_through_prefill_steps_crops_and_resets(shape: dict) -> None:
    model = _model(**shape)
    compact = CompactLlama(model, max_len=128)
    ids = torch.randint(0, 97, (60,), generator=torch.Generator().manual_seed(1)).tolist()
    with torch.inference_mode():
        full = model(input_ids=torch.tensor([ids])).logits[0]
        assert torch.allclose(compact.run(ids[:30], keep=0), full[:30], atol=TOLERANCE)
        for i in range(30, 40):  # one token at a time, the last row only
            assert torch.allclose(compact.run([ids[i]])[0], full[i], atol=TOLERANCE)
        compact.crop(35)  # forget 5, then a prefill of several on the rest of the cache
        assert compact.length == 35
        assert torch.allclose(compact.run(ids[35:60], keep=3), full[57:60], atol=TOLERANCE)
        compact.reset()
        other = ids[::-1][:20]
        assert torch.allclose(compact.run(other, keep=0), model(input_ids=torch.tensor([other])).logits[0], atol=TOLERANCE)


def test_the_cache_does_not_overflow_silently() -> None:
    compact = CompactLlama(_model(num_key_value_heads=4), max_len=16)
    compact.run(list(range(10)))
    with pytest.raises(ValueError, match="cache holds 16"):
        compact.run(list(range(7)))


@pytest.mark.parametrize("change,reason", [
    ({"rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}}, "rotary embedding 'linear'"),
    ({"hidden_act": "gelu"}, "activation 'gelu'"),
])
def test_unsupported_shapes_say_why_and_the_backend_runs_transformers(change: dict, reason: str, tmp_path: Path) -> None:
    config = _model(num_key_value_heads=4).config
    for key, value in change.items():
        setattr(config, key, value)
    assert reason in CompactLlama.unsupported(config)
    assert "not llama" in CompactLlama.unsupported(type("C", (), {"model_type": "gpt2"})())
    folder = build_tiny_checkpoint(tmp_path / "ckpt")
    assert isinstance(HFBackend(folder)._runner, CompactLlama)
    assert isinstance(HFBackend(folder, compact=False)._runner, TransformersRunner)


def test_the_backend_decodes_the_same_answers_either_way(tmp_path: Path) -> None:
    """Greedy and sampled generations, with the cache reused, cropped and rewound by whole-number choices, give the same
    tokens and (to rounding) the same log-probabilities through CompactLlama as through transformers' model."""
    folder = build_tiny_checkpoint(tmp_path / "ckpt", seed=4)
    fast, slow = HFBackend(folder, seed=9), HFBackend(folder, seed=9, compact=False)
    prompts = [[5, 9, 11, 20, 7], [5, 9, 11, 3, 3, 8], [5, 9], [40, 41, 42, 43, 44, 45, 46]]
    for temperature in (0.0, 0.8):
        for prompt in prompts:
            a = fast.generate(prompt, max_tokens=12, temperature=temperature, stop_ids=[])
            b = slow.generate(prompt, max_tokens=12, temperature=temperature, stop_ids=[])
            assert a.token_ids == b.token_ids and a.prefilled == b.prefilled
            assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    assert fast.score([5, 9, 11], [20, 7, 3]) == pytest.approx(slow.score([5, 9, 11], [20, 7, 3]), abs=1e-4)
