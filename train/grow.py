"""Grow a trained model deeper without changing what it computes (block expansion), to train on from there.

A trained Llama of L layers becomes one of L * factor layers: after each original block come
``factor - 1`` copies of it whose output projections (``self_attn.o_proj``, ``mlp.down_proj``) are
zero, so each new block adds nothing to the residual stream and the grown model's logits equal the
original's (LLaMA Pro's identity blocks, Wu et al. 2024, arXiv 2401.02415). Training then uses the new
capacity without first relearning what the small model knew (`neural-debugger train --init-from`).

    python -m train.grow checkpoints/default runs/grown8 --factor 2
"""
from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ZEROED = ("self_attn.o_proj.weight", "mlp.down_proj.weight")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json")


def grow_state(state: dict[str, Any], layers: int, factor: int) -> dict[str, Any]:
    """The grown model's weights: layer i becomes layers i*factor (itself) and i*factor+1.. (copies, outputs zeroed)."""
    prefix = "model.layers."
    out: dict[str, Any] = {k: v for k, v in state.items() if not k.startswith(prefix)}
    for key, value in state.items():
        if not key.startswith(prefix):
            continue
        index, rest = key[len(prefix):].split(".", 1)
        base = int(index) * factor
        if int(index) >= layers:
            raise ValueError(f"weight {key} is beyond the config's {layers} layers")
        out[f"{prefix}{base}.{rest}"] = value
        for extra in range(1, factor):
            out[f"{prefix}{base + extra}.{rest}"] = value.clone() * 0 if rest in ZEROED else value.clone()
    return out


def grow(source: Path, out: Path, factor: int = 2) -> dict[str, Any]:
    """Write the grown model to `out` (a Hugging Face folder with the source's tokenizer); returns a summary."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    if factor < 2:
        raise ValueError("--factor must be at least 2")
    if not (Path(source) / "config.json").is_file():
        raise ValueError(f"{source}: not a Hugging Face model folder (no config.json)")
    small = AutoModelForCausalLM.from_pretrained(str(source), dtype="float32")
    layers = small.config.num_hidden_layers
    config = AutoConfig.from_pretrained(str(source))
    config.num_hidden_layers = layers * factor
    big = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    big.load_state_dict(grow_state(small.state_dict(), layers, factor), strict=True)
    big.tie_weights()
    return save_model(big, Path(source), Path(out), "grown_from", {"folder": str(source), "layers": layers, "factor": factor})


def save_model(model: Any, source: Path, out: Path, key: str, grown: dict[str, Any]) -> dict[str, Any]:
    """Save `model`, grown from `source`, to `out` with the source's tokenizer and a training summary that carries
    the source's token count forward (the model card adds stages up), `grown` under `key`; returns the summary."""
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    for name in TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, out / name)
    try:
        prior = json.loads((source / "training_summary.json").read_text())
    except (OSError, ValueError):
        prior = {}
    params = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())  # a tied head once
    summary = {**{k: prior.get(k) for k in ("steps", "tokens_seen", "elapsed_s", "tokens_per_s", "data")},
               "init_from_summary": prior.get("init_from_summary"), "params": params,
               key: {**grown, "params": prior.get("params")}}  # fmt: skip
    (out / "training_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a trained Hugging Face model folder")
    parser.add_argument("out", type=Path, help="the grown model's folder")
    parser.add_argument("--factor", type=int, default=2, help="layers per original layer (default 2: twice as deep)")
    args = parser.parse_args(argv)
    try:
        summary = grow(args.source, args.out, args.factor)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    grown = summary["grown_from"]
    print(f"{args.out}: {grown['layers'] * grown['factor']} layers, {summary['params']:,} parameters (from {grown['layers']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
