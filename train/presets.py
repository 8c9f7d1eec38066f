"""Model size presets for training from scratch: LlamaForCausalLM shapes with 64-dimensional heads.

Heads of 64 dimensions keep every vLLM attention backend usable. The vocabulary size is not part of a
preset: it comes from the tokenizer the data was packed with. Parameter counts below are for a
4,096-token vocabulary with tied embeddings.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ModelShape(BaseModel):
    """The architecture of a from-scratch model (everything of a LlamaConfig except the vocabulary)."""

    model_config = ConfigDict(extra="forbid")

    layers: int = Field(gt=0)
    width: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int | None = None  # None: same as heads (no grouped-query attention)
    intermediate: int = Field(gt=0)
    max_positions: int | None = Field(default=None, gt=0)  # None: the packed data's sequence length
    rope_theta: float = 10000.0
    tie_embeddings: bool = True

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    def approx_params(self, vocab_size: int) -> int:
        """Parameters of the model built from this shape (norms included, tied head counted once)."""
        kv = (self.kv_heads or self.heads) * self.head_dim
        attn = self.width * self.width * 2 + self.width * kv * 2
        mlp = 3 * self.width * self.intermediate
        per_layer = attn + mlp + 2 * self.width
        embed = vocab_size * self.width * (1 if self.tie_embeddings else 2)
        return self.layers * per_layer + embed + self.width


PRESETS: dict[str, ModelShape] = {
    # ~4.5M parameters: the CPU default (about 4,000 tokens/s on 2 cores at sequence 512).
    "tiny": ModelShape(layers=4, width=256, heads=4, intermediate=768),
    # ~15M parameters.
    "small": ModelShape(layers=8, width=384, heads=6, intermediate=1024),
    # ~41M parameters.
    "base": ModelShape(layers=12, width=512, heads=8, intermediate=1408),
    # ~90M parameters: GPU only.
    "large": ModelShape(layers=12, width=768, heads=12, intermediate=2048),
}


def load_shape(preset: str | None, config_file: Path | None) -> ModelShape:
    """The shape named by `preset`, or read from a JSON file of `ModelShape` fields (the file wins)."""
    if config_file is not None:
        try:
            data: Any = json.loads(Path(config_file).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read model config {config_file}: {exc}") from None
        try:
            shape = ModelShape.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"invalid model config {config_file}: {exc}") from None
    else:
        name = preset or "tiny"
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
        shape = PRESETS[name]
    if shape.width % shape.heads:
        raise ValueError(f"width {shape.width} is not a multiple of heads {shape.heads}")
    if shape.kv_heads is not None and shape.heads % shape.kv_heads:
        raise ValueError(f"heads {shape.heads} is not a multiple of kv_heads {shape.kv_heads}")
    return shape


def llama_config(shape: ModelShape, vocab_size: int, bos_id: int | None, eos_id: int | None, pad_id: int | None, max_positions: int):
    """A transformers LlamaConfig for `shape` (imported lazily)."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=shape.width,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads or shape.heads,
        head_dim=shape.head_dim,
        max_position_embeddings=shape.max_positions or max_positions,
        rope_theta=shape.rope_theta,
        tie_word_embeddings=shape.tie_embeddings,
        bos_token_id=bos_id,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        attention_bias=False,
        mlp_bias=False,
    )
