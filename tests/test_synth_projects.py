"""`tracegen synth` multi-file programs and long modules (tracegen/synth/project.py, sources project/long).

Projects are main.py plus 1-2 user modules (sometimes in a package); long modules and long files
hide the few called functions among many unused ones. Recorded trajectories carry the modules'
sources and frames of those files with their relative paths; the fast recorder agrees with real
debugpy on a generated project.
"""
from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from pathlib import Path

from protocol.debugger import Action, Trajectory
from tests.parity import ROOT, relative_states, state_differences
from tracegen.fast import record_program, replay
from tracegen.sources import parse_sources
from tracegen.synth.project import generate_long, generate_project


def _called(source: str) -> set[str]:
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}


def test_projects_are_deterministic_and_import_their_modules() -> None:
    for seed in range(30):
        a, b = generate_project(random.Random(seed)), generate_project(random.Random(seed))
        assert a == b
        assert a.modules and all(rel.endswith(".py") for rel in a.modules)
        for text in (a.source, *a.modules.values()):
            ast.parse(text)
        imported = {n.module or "" for n in ast.walk(ast.parse(a.source)) if isinstance(n, ast.ImportFrom)}
        imported |= {alias.name for n in ast.walk(ast.parse(a.source)) if isinstance(n, ast.Import) for alias in n.names}
        dotted = {rel[:-3].replace("/", ".") for rel in a.modules if not rel.endswith("__init__.py")}
        assert dotted <= imported, (dotted, imported)


def test_long_modules_hide_a_few_called_functions_among_many() -> None:
    project = generate_project(random.Random(7), long_modules=True)
    longest = max(project.modules.values(), key=len)
    defined = [n.name for n in ast.parse(longest).body if isinstance(n, ast.FunctionDef)]
    assert len(longest.splitlines()) >= 150 and len(defined) >= 10
    used = _called(project.source) | {name for text in project.modules.values() for name in _called(text)}
    assert len([d for d in defined if d in used]) <= len(defined) // 3
    single = generate_long(random.Random(7))
    assert not single.modules and len(single.source.splitlines()) >= 150


def test_recorded_project_frames_carry_relative_files_and_the_trace_keeps_sources() -> None:
    found = 0
    for seed in range(6):
        project = generate_project(random.Random(seed))
        trace = record_program(project.source, modules=project.modules)
        files = {f.file for f in trace.frames.values() if f.file and not f.lib}
        assert files <= set(project.modules), files
        found += bool(files)
        states = replay(trace, [Action.parse("stepIn")] * 40)
        for state in states:
            for frame in state.frames:
                if frame.file and frame.line > 0:
                    assert frame.source and frame.source in project.modules[frame.file]
    assert found >= 5


def test_synth_writes_trajectories_with_modules(tmp_path: Path) -> None:
    out = tmp_path / "data"
    done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "synth", "--count", "24", "--out", str(out),
                           "--sources", "project:0.5,long", "--per-program", "4", "--no-progress", "--seed", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["trajectories"] == 24 and set(summary["kinds"]) <= {"project", "long"}
    trajs = [Trajectory.model_validate_json(line) for line in (out / "shard-00000.jsonl").read_text().splitlines()]
    other = [t for t in trajs if any(f.file for s in t.states for f in s.frames)]
    assert other, "no trajectory enters a module"
    for t in other:
        for state in t.states:
            for frame in state.frames:
                assert frame.file is None or frame.file in t.modules
    assert max(len(t.program.splitlines()) + sum(len(m.splitlines()) for m in t.modules.values()) for t in trajs) >= 150


def test_parse_sources_knows_project_and_long() -> None:
    sources = parse_sources("project:0.2@2,long")
    assert [s.name for s in sources.sources] == ["project", "long"]
    for bad in ("project:2", "project:x"):
        try:
            parse_sources(bad)
        except ValueError as exc:
            assert "LONG_FRACTION" in str(exc)
        else:
            raise AssertionError(bad)


def test_fast_recorder_matches_debugpy_on_a_generated_project(tmp_path: Path) -> None:
    from tracegen.debugpy_recorder import record_debugpy

    project = generate_project(random.Random(2))
    (tmp_path / "main.py").write_text(project.source)
    for rel, text in project.modules.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    actions = [Action.parse(a) for a in ["stepIn"] * 8 + ["stepOut", "next", "stepIn", "stepIn", "stepOut", "continue"]]
    module = next(rel for rel in project.modules if not rel.endswith("__init__.py"))
    breakpoints = [(module, 2)]
    real = relative_states(record_debugpy(tmp_path / "main.py", actions, breakpoints), tmp_path)
    fast = replay(record_program(project.source, modules=project.modules), actions, breakpoints)
    assert not state_differences(fast, real)


def test_trajectories_of_projects_have_module_breakpoints_that_render_and_parse_back() -> None:
    from model.prompt import language as L
    from tracegen.sampling import sample_trajectories

    with_bp = hits = 0
    for seed in range(8):
        project = generate_project(random.Random(seed))
        trace = record_program(project.source, modules=project.modules)
        for traj in sample_trajectories(trace, random.Random(seed), 6, 30, inverse_fraction=0.0):
            if not traj.file_breakpoints:
                continue
            with_bp += 1
            assert all(file in traj.modules for file, _ in traj.file_breakpoints)
            hits += any(s.reason.value == "breakpoint" and s.top is not None and s.top.file for s in traj.states)
            text = L.render_text(L.render_trajectory(traj))
            breakpoints, pairs = L.parse_session(text, traj.program, traj.modules)
            assert sorted(map(str, breakpoints)) == sorted(map(str, [*traj.breakpoints, *traj.file_breakpoints]))
            assert [s for _, s in pairs] == [L.canonical_state(s, traj.program, traj.modules) for s in traj.states]
    assert with_bp >= 3 and hits >= 1


def test_files_source_run_in_place_gives_relative_module_frames(tmp_path: Path) -> None:
    """`--sources files:main.py` of a user's project: frames of its modules carry relative paths and
    the trajectories carry the modules' sources (no absolute paths in the data)."""
    out = tmp_path / "data"
    main = ROOT / "tests" / "programs" / "projects" / "siblings" / "main.py"
    done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "synth", "--count", "4", "--out", str(out),
                           "--sources", f"files:{main}", "--per-program", "4", "--no-progress", "--seed", "2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    trajs = [Trajectory.model_validate_json(line) for line in (out / "shard-00000.jsonl").read_text().splitlines()]
    files = {f.file for t in trajs for s in t.states for f in s.frames if f.file}
    assert files and files <= {"pricing.py", "report.py"}
    assert all(set(t.modules) == {"pricing.py", "report.py"} for t in trajs)


def test_synth_stops_with_a_message_when_a_files_source_runs_out(tmp_path: Path) -> None:
    program = tmp_path / "one.py"
    program.write_text("x = 1\ny = x + 1\nz = y * 2\n")
    done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "synth", "--count", "12", "--out",
                           str(tmp_path / "data"), "--sources", f"files:{program}", "--per-program", "2", "--no-progress"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no new program" in done.stderr
