"""A Llama decoder run by hand, on a KV cache of its own: the transformers backend's fast path on the CPU.

The shipped model is small (4 layers, 256 wide), and one decoding step through transformers' `LlamaForCausalLM`
spends a good part of its time in Python: about 70 module calls, hooks and output wrappers a token. `CompactLlama`
computes the same function as plain torch calls: the model's own weight tensors (shared, not copied), the same
RMSNorm, rotary embedding and scaled dot-product attention, and a cache allocated once (its pages are touched only
as positions are written) that is cropped by moving its length. What is left of a token's time is mostly reading
the weights (16 MB in fp32 for the shipped model; 3.8 ms against transformers' 5.3 ms, docs/speed.md).
Its logits agree with transformers' to float rounding (`tests/test_compact_llama.py`).

`CompactLlama.unsupported(config)` says why a checkpoint cannot take this path (another architecture, a scaled
rotary embedding, another activation); the backend then runs transformers' model as before. torch is imported
lazily, like the rest of the backend.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SUPPORTED_ROPE = ("default", None)


def _rope_type(config: Any) -> str | None:
    params = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
    return params.get("rope_type", params.get("type")) if isinstance(params, dict) else "unknown"


def _rope_theta(config: Any) -> float:
    params = getattr(config, "rope_parameters", None)
    if isinstance(params, dict) and "rope_theta" in params:
        return float(params["rope_theta"])
    return float(getattr(config, "rope_theta", 10000.0))


@dataclass
class _Layer:
    """One decoder layer's weights (views of the model's parameters) and the biases it has, by weight name."""

    attn_norm: Any
    q: Any
    k: Any
    v: Any
    out: Any
    mlp_norm: Any
    gate: Any
    up: Any
    down: Any
    biases: dict[str, Any]


class CompactLlama:
    """`LlamaForCausalLM`'s forward pass on a cache of `max_len` positions, for one sequence.

    run(ids, keep) appends `ids` to the cache and returns the logits after the last `keep` of them (0: all);
    crop(length) forgets every position from `length` on; reset() empties the cache."""

    @staticmethod
    def unsupported(config: Any) -> str | None:
        """Why `config` cannot run here, or None when it can."""
        if getattr(config, "model_type", None) != "llama":
            return f"model type {getattr(config, 'model_type', None)!r} is not llama"
        if getattr(config, "hidden_act", "silu") != "silu":
            return f"activation {config.hidden_act!r} is not silu"
        if _rope_type(config) not in SUPPORTED_ROPE:
            return f"rotary embedding {_rope_type(config)!r} is not the default one"
        heads, kv_heads = config.num_attention_heads, getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        if heads % kv_heads:
            return f"{heads} attention heads do not share {kv_heads} key/value heads evenly"
        return None

    def __init__(self, model: Any, max_len: int) -> None:
        import torch

        config = model.config
        reason = self.unsupported(config)
        if reason is not None:
            raise ValueError(f"CompactLlama cannot run this model: {reason}")
        self._torch = torch
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(getattr(config, "num_key_value_heads", None) or self.heads)
        self.head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // self.heads)
        self.eps = float(config.rms_norm_eps)
        self.max_len = int(max_len)
        weights = {name: tensor.detach() for name, tensor in model.state_dict().items()}
        self.embed = weights["model.embed_tokens.weight"]
        self.norm = weights["model.norm.weight"]
        self.head = weights.get("lm_head.weight", self.embed)
        self.layers = [self._layer(weights, f"model.layers.{i}.") for i in range(int(config.num_hidden_layers))]
        self.dtype, self.device = self.embed.dtype, self.embed.device
        self.cos, self.sin = self._rotary(_rope_theta(config))
        shape = (len(self.layers), self.kv_heads, self.max_len, self.head_dim)
        # empty, not zeros: every position is written before it is read, and untouched pages stay out of memory
        self.keys = torch.empty(shape, dtype=self.dtype, device=self.device)
        self.values = torch.empty(shape, dtype=self.dtype, device=self.device)
        self.length = 0

    @staticmethod
    def _layer(weights: dict[str, Any], prefix: str) -> _Layer:
        names = {"q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj", "out": "self_attn.o_proj",
                 "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}
        biases = {key: weights[prefix + name + ".bias"] for key, name in names.items() if prefix + name + ".bias" in weights}
        return _Layer(
            attn_norm=weights[prefix + "input_layernorm.weight"],
            mlp_norm=weights[prefix + "post_attention_layernorm.weight"],
            biases=biases,
            **{key: weights[prefix + name + ".weight"] for key, name in names.items()},
        )

    def _rotary(self, theta: float) -> tuple[Any, Any]:
        """cos and sin of every position, [max_len, head_dim], as transformers' default rotary embedding makes them."""
        torch = self._torch
        inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.int64).to(torch.float32) / self.head_dim))
        freqs = torch.outer(torch.arange(self.max_len, dtype=torch.float32), inv_freq)
        angles = torch.cat((freqs, freqs), dim=-1).to(self.device)
        return angles.cos().to(self.dtype), angles.sin().to(self.dtype)

    # ---------------------------------------------------------------- cache

    def reset(self) -> None:
        self.length = 0

    def crop(self, length: int) -> None:
        self.length = max(0, min(self.length, int(length)))

    # ---------------------------------------------------------------- forward

    def _rms(self, x: Any, weight: Any) -> Any:
        torch = self._torch
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return weight * h.to(x.dtype)

    @staticmethod
    def _rotate(x: Any, cos: Any, sin: Any) -> Any:
        half = x.shape[-1] // 2
        rotated = x.new_empty(x.shape)
        rotated[..., :half] = -x[..., half:]
        rotated[..., half:] = x[..., :half]
        return x * cos + rotated * sin

    def run(self, ids: list[int], keep: int = 1) -> Any:
        """Append `ids` at the cache's end; the logits after the last `keep` of them (0: after every one)."""
        torch = self._torch
        F = torch.nn.functional
        count = len(ids)
        start, end = self.length, self.length + count
        if count == 0 or end > self.max_len:
            raise ValueError(f"cannot run {count} token(s) after {start}: the cache holds {self.max_len}")
        x = self.embed[torch.tensor(ids, device=self.device)]  # [count, hidden]
        cos, sin = self.cos[start:end], self.sin[start:end]
        mask = None
        if count > 1:  # each new token sees the cache and the new tokens up to itself
            mask = torch.ones(count, end, dtype=torch.bool, device=self.device).tril(diagonal=start)
        for index, layer in enumerate(self.layers):
            h = self._rms(x, layer.attn_norm)
            bias = layer.biases.get
            q = F.linear(h, layer.q, bias("q")).view(count, self.heads, self.head_dim).transpose(0, 1)
            k = F.linear(h, layer.k, bias("k")).view(count, self.kv_heads, self.head_dim).transpose(0, 1)
            v = F.linear(h, layer.v, bias("v")).view(count, self.kv_heads, self.head_dim).transpose(0, 1)
            q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
            self.keys[index, :, start:end] = k
            self.values[index, :, start:end] = v
            attended = F.scaled_dot_product_attention(
                q.unsqueeze(0), self.keys[index, :, :end].unsqueeze(0), self.values[index, :, :end].unsqueeze(0),
                attn_mask=mask, enable_gqa=self.kv_heads != self.heads,
            )[0]
            x = x + F.linear(attended.transpose(0, 1).reshape(count, self.heads * self.head_dim), layer.out, bias("out"))
            h = self._rms(x, layer.mlp_norm)
            gated = F.silu(F.linear(h, layer.gate, bias("gate"))) * F.linear(h, layer.up, bias("up"))
            x = x + F.linear(gated, layer.down, bias("down"))
        self.length = end
        rows = x if keep <= 0 else x[-keep:]
        return F.linear(self._rms(rows, self.norm), self.head)
