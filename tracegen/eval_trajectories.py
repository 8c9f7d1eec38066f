"""Trajectories of an evaluation set's programs, for the evaluations that read trajectories (never training data).

`tracegen synth` refuses every program of an evaluation set (`tracegen.heldout`), as training data must. Some
evaluations read trajectories, not programs (`eval calibration`, `eval next-state`), and the evaluation sets are
folders of programs (the everyday set, examples/). `write_eval_trajectories(folder, out, ...)` records each program
of the folder with the fast recorder under the dataset's filter (default object reprs allowed: objects are part of
everyday code) and samples trajectories from it with the dataset's policy (`tracegen.sampling.sample_trajectories`,
seeded per program by its path inside the folder), into one shard that the evaluations read like any other. Its manifest says ``"evaluation_only": true``; the training data loader refuses such a folder.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from tracegen.dataset import record_filtered
from tracegen.sampling import sample_trajectories
from tracegen.shards import shard_name
from tracegen.sources import FileSource
from tracegen.synth.filter import FilterPolicy

MANIFEST = "manifest.json"


@dataclass
class EvalTrajectories:
    """What was written: trajectories and programs, and why the other programs gave none."""

    trajectories: int = 0
    programs: int = 0
    skipped: dict[str, str] = field(default_factory=dict)


def write_eval_trajectories(folder: Path, out: Path, *, per_program: int = 4, seed: int = 0, max_steps: int = 64) -> EvalTrajectories:
    """Record every program under `folder` and write `per_program` sampled trajectories of each to `out`
    (shard 0 and a manifest marked evaluation-only). ValueError when no program gives a trajectory."""
    source = FileSource(folder)
    result = EvalTrajectories(skipped=dict(source.skipped))
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for number, spec in enumerate(source.programs):
        trace, reason = record_filtered(spec, FilterPolicy(reject_object_reprs=False))  # objects are everyday values
        if trace is None:
            result.skipped[spec.origin] = reason or "not recorded"
            continue
        name = _relative_name(spec.origin, folder)
        trajectories = sample_trajectories(trace, random.Random(f"{seed}:{name}"), per_program, max_steps)
        if not trajectories:
            result.skipped[spec.origin] = "no trajectories"
            continue
        result.programs += 1
        for trajectory in trajectories[:per_program]:
            trajectory.meta.update({"kind": "evaluation", "origin": spec.origin, "shard": "0", "program": str(number)})
            lines.append(trajectory.model_dump_json())
    if not lines:
        raise ValueError(f"no program under {folder} gave a trajectory (skipped: {result.skipped})")
    result.trajectories = len(lines)
    (out / shard_name(0)).write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = {"evaluation_only": True, "programs_from": str(folder), "per_program": per_program, "seed": seed,
                "max_steps": max_steps, "trajectories": result.trajectories, "programs": result.programs, "skipped": result.skipped}  # fmt: skip
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return result


def _relative_name(origin: str, folder: Path) -> str:
    """The program's path inside the set: its trajectories are the same wherever the set lies."""
    path, root = Path(origin).resolve(), folder.resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
