"""Sharded trajectory datasets: shape, determinism for a seed, worker-count independence,
resumability, settings checks and a tiny `tracegen synth` run through the real CLI."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from protocol.debugger import Trajectory
from tracegen.dataset import SynthConfig, build_shard, make_dataset
from tracegen.shards import read_shard, shard_name

REPO = Path(__file__).resolve().parents[1]
TINY = dict(count=14, seed=3, shard_size=6, per_program=4, max_steps=12)


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("shard-*.jsonl"))}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("tiny")
    manifest = make_dataset(SynthConfig(**TINY), out, workers=1, show_progress=False)
    return out, manifest


def test_dataset_layout_and_manifest(tiny: tuple[Path, dict]) -> None:
    out, manifest = tiny
    assert sorted(p.name for p in out.glob("shard-*.jsonl")) == [shard_name(i) for i in range(3)]
    assert not list(out.glob("*.tmp"))
    sizes = [sum(1 for _ in read_shard(out / shard_name(i))) for i in range(3)]
    assert sizes == [6, 6, 2]
    saved = json.loads((out / "manifest.json").read_text())
    assert saved == manifest
    assert manifest["complete"] is True and manifest["trajectories"] == 14 and manifest["seed"] == 3
    assert manifest["forward"] + manifest["inverse"] == 14
    assert manifest["sources"] == "synthetic" and manifest["versions"]["python"].startswith("3.")
    assert [s["trajectories"] for s in manifest["shards"]] == [6, 6, 2]


def test_trajectories_are_valid_and_mix_directions(tiny: tuple[Path, dict]) -> None:
    out, _ = tiny
    trajs = [t for i in range(3) for t in read_shard(out / shard_name(i))]
    assert all(isinstance(t, Trajectory) for t in trajs)
    assert {t.direction for t in trajs} == {"forward", "inverse"}
    for t in trajs:
        assert t.meta["kind"] in ("crux", "multi") and t.meta["origin"].startswith("synthetic:")
        assert len(t.steps) <= TINY["max_steps"]
        assert t.program.endswith("\n")
        if t.meta["kind"] == "crux":
            assert "\n\nresult = f(" in t.program


@pytest.mark.slow
def test_same_seed_same_data_whatever_the_worker_count(tiny: tuple[Path, dict], tmp_path: Path) -> None:
    out, _ = tiny
    make_dataset(SynthConfig(**TINY), tmp_path / "w2", workers=2, show_progress=False)
    assert _files(tmp_path / "w2") == _files(out)
    other = dict(TINY, seed=4, count=8)
    make_dataset(SynthConfig(**other), tmp_path / "s4", workers=1, show_progress=False)
    assert _files(tmp_path / "s4")[shard_name(0)] != _files(out)[shard_name(0)]


def test_a_rerun_continues_from_completed_shards(tiny: tuple[Path, dict], tmp_path: Path) -> None:
    out, _ = tiny
    work = tmp_path / "resume"
    config = SynthConfig(**TINY)
    work.mkdir()
    (work / "config.json").write_text((out / "config.json").read_text())
    build_shard(config, 0, work)  # as if an earlier run finished shard 0, then was interrupted in shard 1
    (work / (shard_name(1) + ".tmp")).write_text("partial line without newline")
    first = (work / shard_name(0)).stat().st_mtime_ns
    manifest = make_dataset(config, work, workers=1, show_progress=False)
    assert (work / shard_name(0)).stat().st_mtime_ns == first  # not rebuilt
    assert manifest["last_run"]["trajectories"] == 8  # shards 1 and 2 only
    assert _files(work) == _files(out)
    again = make_dataset(config, work, workers=1, show_progress=False)
    assert again["last_run"]["trajectories"] == 0 and again["complete"]


def test_other_settings_in_the_same_folder_are_refused(tiny: tuple[Path, dict]) -> None:
    out, _ = tiny
    with pytest.raises(ValueError, match="seed"):
        make_dataset(SynthConfig(**dict(TINY, seed=99)), out, workers=1, show_progress=False)


def test_bad_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="count"):
        SynthConfig(count=0)
    with pytest.raises(ValueError, match="unknown program source"):
        make_dataset(SynthConfig(count=4, sources="bogus"), tmp_path / "x", show_progress=False)
    with pytest.raises(FileNotFoundError, match="CRUXEVAL_PATH"):
        make_dataset(SynthConfig(count=4, cruxeval=str(tmp_path / "none.jsonl")), tmp_path / "y", show_progress=False)


@pytest.mark.slow
def test_synth_command_line(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    (tmp_path / "progs").mkdir()
    (tmp_path / "progs" / "p.py").write_text("def g(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n\nv = g(4)\nprint(v)\n")
    cmd = [sys.executable, "-m", "neural_debugger_cli", "tracegen", "synth", "--count", "6", "--out", str(out), "--workers", "1",
           "--seed", "1", "--sources", f"synthetic,files:{tmp_path / 'progs'}", "--max-steps", "10", "--per-program", "3", "--shard-size", "4"]
    run = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["trajectories"] == 6 and summary["complete"] is True
    assert "synth" in run.stderr and "traj" in run.stderr  # the progress bar
    assert sorted(p.name for p in out.glob("shard-*.jsonl")) == [shard_name(0), shard_name(1)]
    bad_cmd = [sys.executable, "-m", "neural_debugger_cli", "tracegen", "synth", "--count", "2", "--out", str(tmp_path / "bad"), "--sources", "nope"]
    bad = subprocess.run(bad_cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown program source" in bad.stderr


def test_hidden_call_posing_writes_cruxeval_input_trajectories_only(tmp_path: Path) -> None:
    config = SynthConfig(count=6, seed=5, shard_size=6, per_program=1, max_steps=3, posing="hidden-call")
    manifest = make_dataset(config, tmp_path / "hc", workers=1, show_progress=False)
    assert manifest["trajectories"] == 6 and manifest["inverse"] == 6 and manifest["forward"] == 0
    trajs = list(read_shard(tmp_path / "hc" / shard_name(0)))
    assert len({t.program for t in trajs}) == 6  # one per program with --per-program 1
    for t in trajs:
        assert t.meta["posing"] == "hidden-call" and t.direction == "inverse"
        start = t.initial.frames[0]
        assert len(t.initial.frames) == 1 and start.name == "<module>" and t.initial.return_value is not None
        assert f"{t.initial.return_value.name}(...)" in start.source and start.source in t.program
        assert t.steps[0].action.kind == "inv_step_call" and t.steps[0].state.frames[0].name == t.initial.return_value.name
        assert 1 <= len(t.steps) <= 3
    assert make_dataset(config, tmp_path / "hc", workers=1, show_progress=False)["last_run"]["trajectories"] == 0
    with pytest.raises(ValueError, match="posing"):
        make_dataset(SynthConfig(count=6, seed=5, shard_size=6, per_program=1, max_steps=3), tmp_path / "hc", workers=1,
                     show_progress=False)
    with pytest.raises(ValueError, match="unknown posing"):
        SynthConfig(count=2, posing="sideways")


def test_an_unposed_config_keeps_the_identity_of_older_datasets() -> None:
    assert "posing" not in SynthConfig(**TINY).identity()
    assert SynthConfig(**dict(TINY, posing="hidden-call")).identity()["posing"] == "hidden-call"
