"""Tokens per state of the neural-debugger language on synthetic programs (tracegen.synth + tracegen.fast).

Records N synthetic programs with the fast recorder, samples trajectories of each with
tracegen.sampling's paper policy (forward and inverse), renders them, trains the byte-level BPE at several vocabulary sizes on the
programs after the first `--held-out`, and reports on those held out: bytes per token, tokens
per state (mean, p50, p90) with delta encoding (the format) and with every state written in full, and tokens per program header.

    .venv/bin/python -m bench.language_tokens --programs 500 --out /tmp/lang-bench
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

from model.prompt import language as L
from model.prompt import tokenizer as T
from protocol.debugger import Trajectory


def program_trajectories(source: str, rng: random.Random, per_program: int, max_steps: int = 60) -> list[Trajectory]:
    """Trajectories of `source` sampled with tracegen's paper policy (forward and inverse); [] if it cannot be recorded."""
    from tracegen.fast import record_program
    from tracegen.sampling import sample_trajectories

    try:
        trace = record_program(source)
    except Exception:  # noqa: BLE001 - a program the recorder rejects is just skipped here
        return []
    return [t for t in sample_trajectories(trace, rng, per_program, max_steps) if t.steps]


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def measure(trajectories: list[Trajectory], tok: object) -> dict[str, float]:
    """Token statistics of `trajectories` under tokenizer `tok`."""
    delta: list[int] = []
    full: list[int] = []
    headers: list[int] = []
    chars = tokens = 0
    for traj in trajectories:
        text = L.render_text(L.render_trajectory(traj))
        ids = T.encode(tok, text)  # type: ignore[arg-type]
        chars += len(text.encode())
        tokens += len(ids)
        headers.append(len(T.encode(tok, L.render_header(traj.program, traj.breakpoints))))  # type: ignore[arg-type]
        previous = traj.initial
        for step in traj.steps:
            delta.append(len(T.encode(tok, L.render_state(step.state, previous))))  # type: ignore[arg-type]
            full.append(len(T.encode(tok, L.render_state(step.state, None))))  # type: ignore[arg-type]
            previous = step.state
    return {
        "bytes_per_token": round(chars / max(tokens, 1), 3),
        "states": len(delta),
        "delta_mean": round(statistics.mean(delta), 1),
        "delta_p50": percentile(delta, 0.5),
        "delta_p90": percentile(delta, 0.9),
        "full_mean": round(statistics.mean(full), 1),
        "full_p50": percentile(full, 0.5),
        "full_p90": percentile(full, 0.9),
        "header_mean": round(statistics.mean(headers), 1),
        "trajectory_tokens_mean": round(tokens / max(len(trajectories), 1), 1),
    }


def main() -> None:
    from tracegen.synth import generate_program

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=300, help="programs recorded in all")
    parser.add_argument("--held-out", type=int, default=100, help="of which measured (the rest train the tokenizer)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-program", type=int, default=2, help="trajectories sampled per program")
    parser.add_argument("--vocab", type=int, nargs="+", default=[2048, 4096, 8192])
    parser.add_argument("--out", type=Path, default=None, help="also save each tokenizer and the numbers here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    per_program = [program_trajectories(generate_program(rng).source, rng, args.per_program) for _ in range(args.programs)]
    held_out = [t for ts in per_program[: args.held_out] for t in ts]
    train = [t for ts in per_program[args.held_out :] for t in ts]
    trajectories = held_out + train
    corpus = [L.render_text(L.render_trajectory(t)) for t in train] + [t.program for t in train]
    results: dict[str, object] = {
        "programs": args.programs,
        "held_out_programs": args.held_out,
        "held_out_trajectories": len(held_out),
        "train_trajectories": len(train),
        "inverse_share": round(sum(t.direction == "inverse" for t in trajectories) / max(len(trajectories), 1), 3),
    }
    for vocab in args.vocab:
        tok = T.train_tokenizer(corpus, vocab)
        results[f"vocab_{vocab}"] = {"actual_vocab": tok.get_vocab_size(), **measure(held_out, tok)}
        if args.out is not None:
            T.save_tokenizer(tok, args.out / f"tok{vocab}")
        print(vocab, json.dumps(results[f"vocab_{vocab}"]), flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "language_tokens.json").write_text(json.dumps(results, indent=2) + "\n")
        example = held_out[0]
        (args.out / "example.txt").write_text(L.render_text(L.render_trajectory(example)))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
