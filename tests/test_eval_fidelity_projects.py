"""`eval fidelity` on multi-file programs: a subfolder with a main.py is one program with its modules."""
from __future__ import annotations

from pathlib import Path

from tests.parity import PROJECTS_DIR
from train.eval import fidelity as fd
from train.eval.cli import ModelSessions


def test_projects_load_as_programs_with_their_modules(tmp_path: Path) -> None:
    (tmp_path / "single.py").write_text("x = 1\n")
    programs = fd.load_programs(PROJECTS_DIR)
    assert {p.name for p in programs} == {f"{d.name}/" for d in PROJECTS_DIR.iterdir() if (d / "main.py").is_file()}
    package = next(p for p in programs if p.name == "package/")
    assert set(package.modules) == {"geometry/__init__.py", "geometry/area.py", "geometry/shapes.py"}
    assert fd.load_programs(tmp_path)[0].modules == {}


def test_the_oracle_agrees_with_the_recorder_on_projects_with_module_breakpoints() -> None:
    programs = fd.load_programs(PROJECTS_DIR)
    sessions = ModelSessions(None, "oracle", vllm_url=None, max_state_tokens=64, constrained=True, threads=None)
    report = fd.evaluate(programs, sessions, seed=3, scripts=3, max_steps=12, progress=False)
    rates = report.summary()["overall"]
    assert report.programs_used == len(programs) >= 5 and rates["stops"] >= 60
    assert rates["state"] == 1.0, [s for s in report.steps if not s.get("matched", True)][:3]
    assert not [s for s in report.steps if "error" in s]
