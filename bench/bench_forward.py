"""One decoding step of a checkpoint, `CompactLlama` against transformers' `LlamaForCausalLM`, in the same run.

Prefills `--prompt` tokens, then times `--tokens` single-token steps through each (one torch thread, as the
backend decodes), and prints the mean per token and the ratio; also the largest logit difference, which must
stay at float rounding. Numbers depend on the machine's load: read the ratio, not the milliseconds.

    .venv/bin/python bench/bench_forward.py --checkpoint checkpoints/default
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    import torch
    from transformers import AutoModelForCausalLM, DynamicCache

    from model.backends.compact_llama import CompactLlama
    from model.backends.hf import TransformersRunner

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "checkpoints" / "default")
    parser.add_argument("--prompt", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(str(args.checkpoint)).eval()
    ids = torch.randint(4, model.config.vocab_size, (args.prompt + args.tokens,), generator=torch.Generator().manual_seed(0)).tolist()
    prompt, steps = ids[: args.prompt], ids[args.prompt:]
    with torch.inference_mode():
        compact = CompactLlama(model, args.prompt + args.tokens)
        compact.run(prompt)
        start = time.perf_counter()
        fast = [compact.run([token])[0] for token in steps]
        compact_ms = (time.perf_counter() - start) * 1000 / len(steps)
        runner = TransformersRunner(model, DynamicCache)
        runner.run(prompt)
        start = time.perf_counter()
        slow = [runner.run([token])[0] for token in steps]
        transformers_ms = (time.perf_counter() - start) * 1000 / len(steps)
    diff = max(float((a - b).abs().max()) for a, b in zip(fast, slow))
    print(f"{args.checkpoint}: {args.tokens} tokens after a {args.prompt}-token prompt, one thread")
    print(f"CompactLlama {compact_ms:.2f} ms/token, transformers {transformers_ms:.2f} ms/token: "
          f"{transformers_ms / compact_ms:.2f}x; largest logit difference {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
