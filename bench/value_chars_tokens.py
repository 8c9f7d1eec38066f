"""The token cost of value chars (model/prompt/value_chars.py): the same trajectories packed with and without it.

Renders every trajectory under a folder of shards into training windows (`train.data.trajectory_documents`,
the packer's code, at `--seq-len`) with a tokenizer (default the shipped model's, read only) with and
without the flag, and reports tokens per predicted state (all, and those with string contents), per
window, windows per trajectory, and the share of states holding string contents.

    .venv/bin/python -m bench.value_chars_tokens data/heldout-next-state
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))]) if ordered else 0.0


def measure(trajectories: list[Any], tokenizer: Any, seq_len: int) -> dict[str, Any]:
    """Token statistics of the windows of `trajectories` (the tokenizer's value-chars flag decides the encoding)."""
    from model.prompt import value_chars as V
    from train.data import SegmentEncoder, trajectory_documents

    encoder = SegmentEncoder(tokenizer)
    states: list[int] = []
    stringy: list[int] = []
    windows: list[int] = []
    targets = 0
    for traj in trajectories:
        docs, rendered = trajectory_documents(traj, encoder, seq_len, "states")
        windows += [len(d.ids) for d in docs]
        targets += sum(sum(d.mask) for d in docs)
        for segments in rendered:
            for seg in segments:
                if seg.predicted:
                    n = len(encoder.ids(seg.text))
                    states.append(n)
                    if V.content_spans(seg.text):
                        stringy.append(n)
    return {
        "value_chars": encoder.value_chars, "trajectories": len(trajectories), "states": len(states),
        "state_mean": round(statistics.mean(states), 2), "state_p50": percentile(states, 0.5), "state_p90": percentile(states, 0.9),
        "string_states": len(stringy), "string_state_mean": round(statistics.mean(stringy), 2) if stringy else None,
        "windows": len(windows), "window_mean": round(statistics.mean(windows), 1), "window_p90": percentile(windows, 0.9),
        "tokens": sum(windows), "target_tokens": targets,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trajectories", type=Path, help="a folder of trajectory shards (tracegen output)")
    parser.add_argument("--tokenizer", type=Path, default=Path("checkpoints/default"), help="a tokenizer folder (read only)")
    parser.add_argument("--seq-len", type=int, default=1024)
    args = parser.parse_args()
    from model.prompt.value_chars import mark_value_chars
    from train.data import read_trajectories, shard_paths
    from train.modeling import load_hf_tokenizer

    trajectories = list(read_trajectories(shard_paths(args.trajectories)))
    rows = []
    for on in (False, True):
        tokenizer = load_hf_tokenizer(args.tokenizer)
        mark_value_chars(tokenizer, on)
        rows.append(measure(trajectories, tokenizer, args.seq_len))
    plain, chars = rows
    ratio = {k: round(chars[k] / plain[k], 3) for k in ("state_mean", "string_state_mean", "window_mean", "windows", "tokens", "target_tokens")
             if plain.get(k) and chars.get(k)}  # fmt: skip
    print(json.dumps({"plain": plain, "value_chars": chars, "ratio": ratio}, indent=2))


if __name__ == "__main__":
    main()
