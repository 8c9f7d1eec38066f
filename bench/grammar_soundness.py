"""Is every recorded stop an answer its step's grammar admits? The soundness check of the decoding rules.

Reads recorded trajectories (tracegen shards: debugpy-equivalent stops), and for every forward step builds the step's
decoding spec as a session would (`model.decode.spec.build_spec` with the trajectory's breakpoints, modules and the
call that came back, full rules) and asks whether its grammar admits the recorded state's text. A sound rule narrows
what the model may write and never refuses what the program does; a refusal printed here is a rule to mend.

    .venv/bin/python -m bench.grammar_soundness data/dev-everyday data/mix79 [--limit 500] [--show 5]

Inverse steps are skipped (their grammar is not narrowed by an action). Runs no model and no program.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from model.decode.spec import build_spec
from model.decode.project_flow import file_lines
from model.prompt import language as lang
from model.static.reach import returned_call
from protocol.debugger import Trajectory
from train.data import read_trajectories

from tqdm import tqdm


def trajectories(folders: list[Path], limit: int) -> Iterator[Trajectory]:
    """The forward trajectories of each folder's shards, at most `limit` of each folder (0: all)."""
    for folder in folders:
        seen = 0
        for trajectory in read_trajectories(sorted(folder.glob("shard-*.jsonl"))):
            if limit and seen >= limit:
                break
            if trajectory.direction == "forward":
                seen += 1
                yield trajectory


def check(trajectory: Trajectory) -> Iterator[tuple[str, int, str]]:
    """('ok' | 'refused' | 'unconstrained', step index, detail) for each step of `trajectory`, up to a state the
    model's language cannot write ('unrenderable', where the trajectory's check ends)."""
    states = trajectory.states
    for index, step in enumerate(trajectory.steps):
        previous = states[index]
        returned = returned_call(states[index - 1], trajectory.steps[index - 1].action.kind, previous) if index else None
        spec = build_spec(trajectory.program, previous, step.action, modules=trajectory.modules,
                          breakpoints=tuple(trajectory.breakpoints), returned=returned, file_breakpoints=file_lines(trajectory.file_breakpoints))
        if spec.grammar is None:
            yield "unconstrained", index, ""
            continue
        try:
            text = lang.render_state(step.state, previous)
        except lang.UnrenderableError as exc:  # the model's language cannot write it (training drops such trajectories)
            yield "unrenderable", index, str(exc)
            return
        yield ("ok" if spec.grammar.admits(text) else "refused"), index, text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+", help="tracegen output folders (shard-*.jsonl)")
    parser.add_argument("--limit", type=int, default=0, help="forward trajectories per folder (0: all)")
    parser.add_argument("--show", type=int, default=5, help="refused steps printed in full")
    parser.add_argument("--refused-out", type=Path, default=None,
                        help="write each trajectory with a refused step here (a shard to check again, e.g. from another commit)")
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    shown = 0
    kept = []
    for trajectory in tqdm(trajectories(args.folders, args.limit), desc="trajectories", unit="traj", file=sys.stderr):
        verdicts = list(check(trajectory))
        if args.refused_out is not None and any(v == "refused" for v, _, _ in verdicts):
            kept.append(trajectory.model_dump_json())
        for verdict, index, text in verdicts:
            counts[verdict] += 1
            if verdict == "refused" and shown < args.show:
                shown += 1
                previous = trajectory.states[index]
                print(f"--- refused: step {index} ({trajectory.steps[index].action.kind.value}), breakpoints {trajectory.breakpoints}\n"
                      f"{trajectory.program}\nfrom: {lang.render_state(previous, None)}\nrecorded: {text}\n")
    if args.refused_out is not None:
        args.refused_out.parent.mkdir(parents=True, exist_ok=True)
        args.refused_out.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    print(dict(counts))
    return 1 if counts["refused"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
