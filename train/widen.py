"""Grow a trained model wider without changing what it computes, to train on from there.

A trained Llama of width W (heads of 64 dimensions, MLP of M units) becomes one of width W' > W with
more heads of the same size and M' >= M MLP units. The old weights fill the top-left block of each
new matrix; everything that *reads* a new dimension (query, key, value, gate and up projections,
new heads, new MLP units) starts small and random, everything that *writes* one (the new rows of
the output and down projections, the new columns of the embedding, the new MLP units' down
columns, the new heads' output columns) starts at zero. So the residual stream's new dimensions
start at zero, the new heads and units add nothing, and the logits equal the original's. RMSNorm
divides by the root mean square over all dimensions: W' - W zeros lower it by sqrt(W / W'), so the
old dimensions' norm weights are scaled by sqrt(W / W') (and the norms' epsilon by W / W') to give
the same outputs. Gradients reach
every new weight through the random readers (the zero writers get a gradient from them at once).

    python -m train.widen checkpoints/default runs/wide384 --width 384 --intermediate 1152
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from train.grow import save_model

READER_STD = 0.02  # the initialiser's std for new weights that read the new dimensions


def widen_state(state: dict[str, Any], width: int, new_width: int, inter: int, new_inter: int, seed: int = 0) -> dict[str, Any]:
    """The widened model's weights (see the module docstring); `state` is a LlamaForCausalLM state dict."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    norm_scale = math.sqrt(width / new_width)

    def grown(old: Any, shape: tuple[int, ...], fill: str) -> Any:
        new = torch.randn(shape, generator=gen, dtype=old.dtype) * READER_STD if fill == "random" else torch.zeros(shape, dtype=old.dtype)
        new[tuple(slice(0, n) for n in old.shape)] = old
        return new

    out: dict[str, Any] = {}
    for key, value in state.items():
        name = key.rsplit(".", 1)[0]
        if key.endswith("norm.weight"):  # input_layernorm, post_attention_layernorm, model.norm
            new = torch.full((new_width,), float(value.mean()) * norm_scale, dtype=value.dtype)
            new[:width] = value * norm_scale
            out[key] = new
        elif key in ("model.embed_tokens.weight", "lm_head.weight"):
            out[key] = grown(value, (value.shape[0], new_width), "zero")
        elif name.endswith(("q_proj", "k_proj", "v_proj")):
            out[key] = grown(value, (new_width, new_width), "random")
        elif name.endswith("o_proj"):
            out[key] = grown(value, (new_width, new_width), "zero")
        elif name.endswith(("gate_proj", "up_proj")):
            out[key] = grown(value, (new_inter, new_width), "random")
        elif name.endswith("down_proj"):
            out[key] = grown(value, (new_width, new_inter), "zero")
        else:
            out[key] = value
    return out


def widen(source: Path, out: Path, width: int, intermediate: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Write the widened model to `out` (a Hugging Face folder with the source's tokenizer); returns a summary."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    if not (Path(source) / "config.json").is_file():
        raise ValueError(f"{source}: not a Hugging Face model folder (no config.json)")
    config = AutoConfig.from_pretrained(str(source))
    old_width, old_inter = config.hidden_size, config.intermediate_size
    head_dim = getattr(config, "head_dim", None) or old_width // config.num_attention_heads
    intermediate = intermediate if intermediate is not None else old_inter * width // old_width
    if width <= old_width or width % head_dim:
        raise ValueError(f"--width must be a multiple of the head size {head_dim} above the current {old_width}")
    if intermediate < old_inter:
        raise ValueError(f"--intermediate must be at least the current {old_inter}")
    if (config.num_key_value_heads or config.num_attention_heads) != config.num_attention_heads:
        raise ValueError("grouped-query attention is not supported by widening")
    small = AutoModelForCausalLM.from_pretrained(str(source), dtype="float32")
    config.hidden_size, config.intermediate_size, config.head_dim = width, intermediate, head_dim
    config.num_attention_heads = config.num_key_value_heads = width // head_dim
    config.rms_norm_eps = config.rms_norm_eps * old_width / width  # the mean of squares falls by the same factor
    big = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    state = widen_state(small.state_dict(), old_width, width, old_inter, intermediate, seed)
    big.load_state_dict({k: v for k, v in state.items() if k in big.state_dict()}, strict=False)
    big.tie_weights()
    return save_model(big, Path(source), Path(out), "widened_from", {"folder": str(source), "width": old_width, "new_width": width,
                                                                    "intermediate": old_inter, "new_intermediate": intermediate})  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a trained Hugging Face model folder")
    parser.add_argument("out", type=Path, help="the widened model's folder")
    parser.add_argument("--width", type=int, required=True, help="the new width (a multiple of the head size)")
    parser.add_argument("--intermediate", type=int, default=None, help="the new MLP size (default: scaled with the width)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the new weights' initialisation")
    args = parser.parse_args(argv)
    try:
        summary = widen(args.source, args.out, args.width, args.intermediate, args.seed)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    wide = summary["widened_from"]
    print(f"{args.out}: width {wide['width']} -> {wide['new_width']}, MLP {wide['intermediate']} -> "
          f"{wide['new_intermediate']}, {summary['params']:,} parameters")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
