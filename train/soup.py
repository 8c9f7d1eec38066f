"""Interpolate the weights of two models of one lineage (a weight-space ensemble, WiSE-FT).

A model fine-tuned from a base on new data (here: real code) forgets some of what the base knew
(synthetic programs). Averaging the two in weight space, ``(1 - alpha) * base + alpha * tuned``,
often keeps most of both (Wortsman et al. 2022, "Robust fine-tuning of zero-shot models",
arXiv 2109.01903). Both models must have the same architecture and tokenizer; ``alpha`` is chosen
on dev sets like any other weight.

    python -m train.soup checkpoints/default runs/stage20 runs/soup50 --alpha 0.5
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from train.grow import save_model

ARCHITECTURE_KEYS = ("model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                     "num_key_value_heads", "vocab_size", "max_position_embeddings", "tie_word_embeddings")


def check_compatible(base: Path, tuned: Path) -> None:
    """Raise ValueError unless both folders hold models of one architecture with the same tokenizer."""
    configs = []
    for folder in (base, tuned):
        if not (folder / "config.json").is_file():
            raise ValueError(f"{folder}: not a Hugging Face model folder (no config.json)")
        configs.append(json.loads((folder / "config.json").read_text()))
    differ = [key for key in ARCHITECTURE_KEYS if configs[0].get(key) != configs[1].get(key)]
    if differ:
        raise ValueError(f"{base} and {tuned} differ in {', '.join(differ)}: only models of one architecture mix")
    tokenizers = [(folder / "tokenizer.json").read_bytes() if (folder / "tokenizer.json").is_file() else None
                  for folder in (base, tuned)]
    if tokenizers[0] != tokenizers[1]:
        raise ValueError(f"{base} and {tuned} have different tokenizers")


def interpolate_state(base: dict[str, Any], tuned: dict[str, Any], alpha: float) -> dict[str, Any]:
    """``(1 - alpha) * base + alpha * tuned`` for every tensor (both state dicts must hold the same keys)."""
    if base.keys() != tuned.keys():
        missing = sorted(set(base) ^ set(tuned))[:3]
        raise ValueError(f"the models hold different weights (e.g. {', '.join(missing)})")
    return {key: base[key].lerp(tuned[key].to(base[key].dtype), alpha) if base[key].is_floating_point() else base[key]
            for key in base}


def soup(base: Path, tuned: Path, out: Path, alpha: float) -> dict[str, Any]:
    """Write the interpolated model to `out` (with the tuned model's tokenizer files); returns its summary."""
    from transformers import AutoModelForCausalLM

    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"--alpha must be within 0 and 1, not {alpha}")
    check_compatible(base, tuned)
    base_model = AutoModelForCausalLM.from_pretrained(str(base), dtype="float32")
    tuned_model = AutoModelForCausalLM.from_pretrained(str(tuned), dtype="float32")
    base_model.load_state_dict(interpolate_state(base_model.state_dict(), tuned_model.state_dict(), alpha), strict=True)
    base_model.tie_weights()
    return save_model(base_model, Path(tuned), Path(out), "interpolated",
                      {"base": str(base), "tuned": str(tuned), "alpha": alpha})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="the model fine-tuned from (e.g. checkpoints/default)")
    parser.add_argument("tuned", type=Path, help="the fine-tuned model of the same lineage")
    parser.add_argument("out", type=Path, help="the interpolated model's folder")
    parser.add_argument("--alpha", type=float, default=0.5, help="the tuned model's share (0: base, 1: tuned; default 0.5)")
    args = parser.parse_args(argv)
    try:
        summary = soup(args.base, args.tuned, args.out, args.alpha)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    print(f"{args.out}: {summary['params']:,} parameters, {1 - args.alpha:g} x {args.base} + {args.alpha:g} x {args.tuned}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
