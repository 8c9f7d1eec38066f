"""Training throughput on this CPU: tokens/s of one optimizer step (forward, backward, AdamW) per
precision / compile / thread setting, all measured in one process and reported as ratios to fp32.

    python bench/bench_train_throughput.py [--preset tiny] [--batch 4] [--seq-len 1024] [--steps 6]

Modes: fp32; bf16 autocast (torch.autocast("cpu", bfloat16): matmuls in bf16 on AMX/AVX512-BF16,
fp32 master weights); fp32 with oneDNN's bf16 matmul precision (torch.backends.mkldnn.matmul.fp32_precision);
each optionally under torch.compile. The loss after the same fixed batches is printed beside each mode,
so a mode that speeds up by computing something else shows it.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from train.presets import PRESETS, llama_config  # noqa: E402

VOCAB = 2142  # the shipped tokenizer's size


@dataclass
class Mode:
    name: str
    autocast: bool = False
    mkldnn_bf16: bool = False
    compile: bool = False
    threads: int | None = None


MODES = [
    Mode("fp32"),
    Mode("bf16 autocast", autocast=True),
    Mode("fp32 + mkldnn bf16 matmul", mkldnn_bf16=True),
    Mode("bf16 autocast + compile", autocast=True, compile=True),
    Mode("bf16 autocast, 1 thread", autocast=True, threads=1),
]


@contextlib.contextmanager
def _mkldnn_precision(bf16: bool) -> Iterator[None]:
    matmul = torch.backends.mkldnn.matmul
    before = getattr(matmul, "fp32_precision", None)
    if bf16 and before is not None:
        matmul.fp32_precision = "bf16"
    try:
        yield
    finally:
        if before is not None:
            matmul.fp32_precision = before


def _step_fn(model: torch.nn.Module, mode: Mode) -> Callable[[torch.Tensor], float]:
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    forward = torch.compile(model) if mode.compile else model

    def step(ids: torch.Tensor) -> float:
        ctx = torch.autocast("cpu", dtype=torch.bfloat16) if mode.autocast else contextlib.nullcontext()
        with ctx:
            loss = forward(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return float(loss)

    return step


def run_mode(mode: Mode, preset: str, batch: int, seq_len: int, steps: int, default_threads: int) -> tuple[float, float]:
    """(tokens/s over the timed steps, loss at the last step) from the same seeded model and batches."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    torch.set_num_threads(mode.threads or default_threads)
    model = LlamaForCausalLM(llama_config(PRESETS[preset], VOCAB, 1, 2, 0, seq_len))
    gen = torch.Generator().manual_seed(1)
    batches = [torch.randint(3, VOCAB, (batch, seq_len), generator=gen) for _ in range(steps + 2)]
    with _mkldnn_precision(mode.mkldnn_bf16):
        step = _step_fn(model, mode)
        for ids in batches[:2]:  # warm-up (and compilation)
            step(ids)
        start = time.perf_counter()
        loss = 0.0
        for ids in batches[2:]:
            loss = step(ids)
        elapsed = time.perf_counter() - start
    torch.set_num_threads(default_threads)
    return steps * batch * seq_len / elapsed, loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="tiny", choices=sorted(PRESETS))
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--modes", default="", help="comma-separated mode names to run (default: all)")
    args = parser.parse_args()
    threads = torch.get_num_threads()
    wanted = {m.strip() for m in args.modes.split(",") if m.strip()}
    rows = []
    for mode in MODES:
        if wanted and mode.name not in wanted:
            continue
        try:
            tps, loss = run_mode(mode, args.preset, args.batch, args.seq_len, args.steps, threads)
        except Exception as exc:  # noqa: BLE001 - a mode this build cannot run is reported, not fatal
            print(f"{mode.name}: failed: {type(exc).__name__}: {exc}", flush=True)
            continue
        rows.append((mode.name, tps, loss))
        print(f"{mode.name}: {tps:,.0f} tokens/s, loss {loss:.4f}", flush=True)
    base = next((tps for name, tps, _ in rows if name == "fp32"), None)
    print(f"\n| mode ({args.preset}, {args.batch} x {args.seq_len}, {threads} threads) | tokens/s | vs fp32 | loss after {args.steps + 2} steps |")
    print("|---|---|---|---|")
    for name, tps, loss in rows:
        ratio = f"{tps / base:.2f}x" if base else "-"
        print(f"| {name} | {tps:,.0f} | {ratio} | {loss:.4f} |")


if __name__ == "__main__":
    main()
