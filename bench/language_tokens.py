"""Tokens per state of the neural-debugger language on synthetic programs (tracegen.synth + tracegen.fast).

Records N synthetic programs with the fast recorder, walks each with a random action policy
(step_into / step_over / step_return / continue with two session breakpoints / run to a line),
renders the trajectories, trains the byte-level BPE at several vocabulary sizes on the
programs after the first `--held-out`, and reports on those held out: bytes per token, tokens
per state (mean, p50, p90) with delta encoding (the format) and with every state written in full, and tokens per program header.

    .venv/bin/python -m bench.language_tokens --programs 900 --out /tmp/lang-bench
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

from model import language as L
from model import tokenizer as T
from protocol.debugger import Action, ActionKind, Step, Trajectory


def random_trajectory(source: str, rng: random.Random, max_steps: int = 60) -> Trajectory | None:
    """One forward trajectory of `source` under a random action policy (None if it cannot be recorded)."""
    from tracegen.fast import ReplaySession, record_program

    try:
        trace = record_program(source)
    except Exception:  # noqa: BLE001 - a program the recorder rejects is just skipped here
        return None
    lines = trace.executed_lines
    if not lines:
        return None
    breakpoints = sorted(rng.sample(lines, min(2, len(lines))))
    session = ReplaySession(trace, breakpoints)
    initial = session.start()
    steps: list[Step] = []
    state = initial
    kinds = [ActionKind.STEP_INTO] * 5 + [ActionKind.STEP_OVER] * 3 + [ActionKind.STEP_RETURN, ActionKind.CONTINUE, ActionKind.BREAKPOINT]
    while not state.finished and len(steps) < max_steps:
        kind = rng.choice(kinds)
        action = Action(kind=kind, line=rng.choice(lines)) if kind is ActionKind.BREAKPOINT else Action(kind=kind)
        try:
            state = session.step(action)
        except Exception:  # noqa: BLE001 - e.g. a run-to-line the replay refuses
            continue
        steps.append(Step(action=action, state=state))
    return Trajectory(program=source, breakpoints=breakpoints, initial=initial, steps=steps)


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
    parser.add_argument("--vocab", type=int, nargs="+", default=[2048, 4096, 8192])
    parser.add_argument("--out", type=Path, default=None, help="also save each tokenizer and the numbers here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    trajectories = []
    for _ in range(args.programs):
        traj = random_trajectory(generate_program(rng).source, rng)
        if traj is not None and traj.steps:
            trajectories.append(traj)
    held_out, train = trajectories[: args.held_out], trajectories[args.held_out :]
    corpus = [L.render_text(L.render_trajectory(t)) for t in train] + [t.program for t in train]
    results: dict[str, object] = {"programs": len(trajectories), "held_out": len(held_out), "train_programs": len(train)}
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
