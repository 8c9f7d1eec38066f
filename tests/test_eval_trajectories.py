"""tracegen eval-trajectories: an evaluation set's programs as trajectories for evaluations, refused as training data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracegen.cli import app
from tracegen.eval_trajectories import write_eval_trajectories
from train.data import pack

PROGRAMS = {
    "prices.py": "items = [{'name': 'tea', 'price': 2.5}, {'name': 'cake', 'price': 3.25}]\ntotal = 0.0\n"
                 "for item in items:\n    total += item['price']\nprint(round(total, 2))\n",
    "point.py": "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n\n"
                "p = Point(1, 2)\nq = Point(p.y, p.x)\nprint(q.x)\n",
    "broken.py": "def f(:\n",
}


def _without_paths(out: Path, folder: Path) -> str:
    return (out / "shard-00000.jsonl").read_text().replace(str(folder), "SET")


def test_evaluation_programs_become_trajectories_that_training_refuses(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    folder.mkdir()
    for name, source in PROGRAMS.items():
        (folder / name).write_text(source)
    out = tmp_path / "traj"
    result = write_eval_trajectories(folder, out, per_program=2, seed=0)
    assert result.programs == 2 and result.trajectories == 4 and any("broken.py" in k for k in result.skipped)
    lines = (out / "shard-00000.jsonl").read_text().splitlines()
    assert len(lines) == 4 and {json.loads(line)["meta"]["kind"] for line in lines} == {"evaluation"}
    assert any("object at" in line for line in lines)  # the object's default repr is kept: objects are everyday values
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["evaluation_only"] is True and manifest["programs"] == 2
    again = tmp_path / "again"
    write_eval_trajectories(folder, again, per_program=2, seed=0)
    assert (again / "shard-00000.jsonl").read_text() == (out / "shard-00000.jsonl").read_text()  # reproducible by seed
    moved = tmp_path / "elsewhere" / "deeper"
    moved.mkdir(parents=True)
    for name, source in PROGRAMS.items():
        (moved / name).write_text(source)
    write_eval_trajectories(moved, tmp_path / "moved", per_program=2, seed=0)
    assert _without_paths(tmp_path / "moved", moved) == _without_paths(out, folder)  # the same set sampled alike wherever it lies
    with pytest.raises(ValueError, match="evaluation_only"):
        pack(out, tmp_path / "packed", progress=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "broken.py").write_text("def f(:\n")
    failed = CliRunner().invoke(app, ["eval-trajectories", "--programs", str(empty), "--out", str(tmp_path / "none")])
    assert failed.exit_code == 2 and "no usable Python files" in failed.output
