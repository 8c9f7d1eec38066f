"""Multi-file parity: both recorders show the same stops on programs that import their own modules.

The projects are ``tests/programs/projects/<name>/`` (``main.py`` and sibling modules or a
package). Their debugpy goldens (``tests/golden/projects/``, recorded by ``python -m
tests.regen_golden``) hold frames of other files with paths relative to the program's folder, and
sessions with breakpoints in those files. The fast recorder must agree stop by stop, and the
``tracegen record`` CLI must print the same ``[name, line, file]`` stacks with both recorders.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from protocol.debugger import State
from tests.parity import (
    ROOT,
    Project,
    ProjectGolden,
    Script,
    contract_lines,
    load_project_goldens,
    project_scripts,
    projects,
    relative_states,
    state_differences,
)


def fast_project_sessions(project: Project, scripts: list[Script]) -> list[list[State]]:
    """The fast recorder's states for each script, the project run from a temp copy (like the goldens)."""
    from tracegen.fast import record_program, replay

    with tempfile.TemporaryDirectory(prefix="parity_") as folder:
        main = project.write(Path(folder))
        trace = record_program(path=main)
        return [relative_states(replay(trace, list(s.actions), list(s.breakpoints)), Path(folder)) for s in scripts]


@pytest.fixture(scope="module")
def goldens() -> list[ProjectGolden]:
    found = load_project_goldens()
    if not found:
        pytest.fail("no project goldens in tests/golden/projects/: run `nice -n 10 .venv/bin/python -m tests.regen_golden`")
    return found


def test_project_goldens_are_fresh_and_cover_other_files(goldens: list[ProjectGolden]) -> None:
    by_name = {g.project.name: g for g in goldens}
    for project in projects():
        golden = by_name.get(project.name)
        assert golden is not None, f"{project.name}: no golden (run tests.regen_golden)"
        assert golden.project == project, f"{project.name}: its files changed since the golden was recorded"
        assert [s for s, _ in golden.sessions] == project_scripts(project), f"{project.name}: scripts changed"
    states = [st for g in goldens for _, sts in g.sessions for st in sts]
    files = {f.file for st in states for f in st.frames if f.file}
    assert len(files) >= 5 and all(not Path(f).is_absolute() for f in files), files
    assert any("/" in f for f in files)  # a module of a package
    # a breakpoint in another file stops there
    assert any(st.reason.value == "breakpoint" and st.top is not None and st.top.file for st in states)


def test_fast_recorder_matches_debugpy_on_projects(goldens: list[ProjectGolden]) -> None:
    problems = []
    for golden in goldens:
        scripts = [s for s, _ in golden.sessions]
        for (script, real), fast in zip(golden.sessions, fast_project_sessions(golden.project, scripts)):
            diffs = state_differences(fast, real)
            if contract_lines(fast, script.actions) != contract_lines(real, script.actions):
                diffs.append("contract lines differ")
            problems += [f"{golden.project.name} {script.to_json()}: {d}" for d in diffs]
    assert not problems, "\n".join(problems[:10])


def test_cli_prints_other_files_the_same_for_both_recorders(tmp_path: Path) -> None:
    """`tracegen record main.py --bp 'pricing.py:12,report.py:3,8'`: `[name, line, file]` stacks, both recorders alike."""
    project = next(p for p in projects() if p.name == "project_siblings")
    main = project.write(tmp_path)
    out = {}
    for recorder in ("fast", "debugpy"):
        done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "record", str(main),
                               "--actions", "next,continue,stepOut,stepIn,stepIn,continue", "--bp", "pricing.py:12,report.py:3,8",
                               "--recorder", recorder], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        out[recorder] = done.stdout
    records = [json.loads(line) for line in out["fast"].splitlines()]
    stacks = [r["stack"] for r in records if "stack" in r]
    assert ["total_value", 12, "pricing.py"] in [s[0] for s in stacks]
    assert any(s[0][2:] == ["report.py"] and s[0][1] == 3 for s in stacks)
    assert out["fast"] == out["debugpy"]


def test_cli_refuses_a_breakpoint_in_a_missing_file(tmp_path: Path) -> None:
    program = tmp_path / "main.py"
    program.write_text("x = 1\n")
    done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "record", str(program), "--bp", "nope.py:3"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "nope.py" in done.stderr
    done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "record", str(program), "--bp", "a.py:x"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "FILE:LINE" in done.stderr


@pytest.mark.slow
def test_live_parity_projects(tmp_path: Path) -> None:
    """Every project script recorded live by debugpy (slow) against the fast recorder."""
    from tracegen.debugpy_recorder import record_debugpy

    problems = []
    for project in projects():
        folder = tmp_path / project.name
        main = project.write(folder)
        scripts = project_scripts(project)
        fast = fast_project_sessions(project, scripts)
        for script, states in zip(scripts, fast):
            real = relative_states(record_debugpy(main, list(script.actions), list(script.breakpoints), run_timeout=20), folder)
            problems += [f"{project.name} {script.to_json()}: {d}" for d in state_differences(states, real)]
    assert not problems, "\n".join(problems[:10])
