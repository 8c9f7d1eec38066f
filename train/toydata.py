"""Toy trajectories of straight-line integer programs, computed without running anything.

For tests and smoke runs of the training pipeline when no tracegen data is at hand: each program is
a few assignments ``v = <expr of earlier variables and constants>`` and a ``print``; the forward
trajectory steps over every line to the exit, the inverse one walks back with ``inv_step_over``.
The states are exactly what debugpy shows for such a program at module level.
"""
from __future__ import annotations

import random
from pathlib import Path

from protocol.debugger import Action, ActionKind, Ending, Frame, State, Step, StopReason, Trajectory

NAMES = "abcdefghjkmnpqrstuvwxyz"


def _program(rng: random.Random) -> tuple[list[str], list[dict[str, str]], str]:
    """(lines, locals after each line, stdout of the print line)."""
    lines: list[str] = []
    values: dict[str, int] = {}
    snapshots: list[dict[str, str]] = []
    for i in range(rng.randint(2, 5)):
        name = NAMES[i]
        if values and rng.random() < 0.7:
            other = rng.choice(list(values))
            op = rng.choice(["+", "-", "*"])
            k = rng.randint(1, 9)
            expr, value = f"{other} {op} {k}", eval(f"{values[other]} {op} {k}")  # noqa: S307 - our own arithmetic
        else:
            value = rng.randint(0, 20)
            expr = str(value)
        lines.append(f"{name} = {expr}")
        values[name] = value
        snapshots.append({k: repr(v) for k, v in values.items()})
    last = list(values)[-1]
    lines.append(f"print({last})")
    snapshots.append(snapshots[-1])
    return lines, snapshots, f"{values[last]}\n"


def _states(lines: list[str], snapshots: list[dict[str, str]], stdout: str) -> list[State]:
    states = [State(reason=StopReason.ENTRY, frames=[Frame(name="<module>", line=1, source=lines[0], locals={})])]
    for n in range(1, len(lines)):
        frame = Frame(name="<module>", line=n + 1, source=lines[n], locals=dict(snapshots[n - 1]))
        states.append(State(reason=StopReason.STEP, frames=[frame]))
    states.append(State(reason=StopReason.EXITED, stdout=stdout, exit_code=0, ending=Ending.NORMAL))
    return states


def toy_trajectories(count: int, seed: int = 0, inverse_every: int = 4) -> list[Trajectory]:
    """`count` trajectories; every `inverse_every`-th one is inverse (0: none)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        lines, snapshots, stdout = _program(rng)
        program = "\n".join(lines) + "\n"
        states = _states(lines, snapshots, stdout)
        if inverse_every and i % inverse_every == inverse_every - 1:
            back = list(reversed(states[:-1]))
            steps = [Step(action=Action(kind=ActionKind.INV_STEP_OVER), state=s) for s in back[1:]]
            out.append(Trajectory(program=program, direction="inverse", initial=back[0], steps=steps, meta={"source": "toy"}))
        else:
            steps = [Step(action=Action(kind=ActionKind.STEP_OVER), state=s) for s in states[1:]]
            out.append(Trajectory(program=program, initial=states[0], steps=steps, ending=Ending.NORMAL, meta={"source": "toy"}))
    return out


def write_shards(folder: Path, trajectories: list[Trajectory], per_shard: int = 500) -> list[Path]:
    """Write trajectories as JSONL shards ``shard-00000.jsonl``... into `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(0, max(1, len(trajectories)), per_shard):
        path = folder / f"shard-{index // per_shard:05d}.jsonl"
        with path.open("w") as fh:
            for traj in trajectories[index : index + per_shard]:
                fh.write(traj.model_dump_json() + "\n")
        paths.append(path)
    return paths
