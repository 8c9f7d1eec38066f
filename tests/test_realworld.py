"""The real-world evaluation corpus: standard-library modules with a driver, as long files and projects,
recorded by the fast recorder to a normal exit, the module's code stepped into as user code."""
from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from protocol.debugger import Action, ActionKind
from tracegen.module_drivers import DEV_DRIVERS, TRAIN_DRIVERS
from tracegen.realworld import DRIVERS, build_program, module_copy, write_corpus

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_module_copy_drops_main_block_and_accelerators():
    source = "import os\ntry:\n    from _heapq import *\nexcept ImportError:\n    pass\ndef f():\n    return 1\nif __name__ == '__main__':\n    f()\n"
    kept = module_copy(source)
    assert "_heapq" not in kept and "__main__" not in kept and "def f():" in kept
    ast.parse(kept)


@pytest.mark.parametrize("module", sorted(DRIVERS))
def test_every_program_parses_and_the_project_qualifies_names(module):
    program = build_program(module, DRIVERS[module])
    ast.parse(program.single)
    main = ast.parse(program.main)
    impl = f"{module}_impl"
    assert isinstance(main.body[0], ast.Import) and main.body[0].names[0].name == impl
    assert f"{impl}." in program.main
    assert program.lines >= 60


def test_long_file_and_project_record_to_a_normal_exit_entering_module_code(tmp_path):
    from model.static.user_modules import collect_user_modules
    from tracegen.fast import record_program, replay_to_end

    write_corpus(tmp_path, ["heapq", "colorsys"])
    single = (tmp_path / "long" / "heapq_long.py").read_text()
    states = replay_to_end(record_program(single), [Action(kind=ActionKind.STEP_INTO)] * 3, [], True)
    assert states[-1].exit_code == 0
    main_path = tmp_path / "projects" / "colorsys" / "main.py"
    modules = collect_user_modules(main_path.read_text(), main_path).sources
    assert list(modules) == ["colorsys_impl.py"]
    trace = record_program(main_path.read_text(), modules=modules)
    states = replay_to_end(trace, [Action(kind=ActionKind.STEP_INTO)] * 3, [], True)
    assert any(f.file == "colorsys_impl.py" for s in states for f in s.frames)
    assert states[-1].exit_code == 0


def test_cli_writes_the_corpus_and_refuses_unknown_modules(tmp_path):
    cmd = [sys.executable, "-m", "neural_debugger_cli", "tracegen", "realworld", "--out", str(tmp_path / "rw"), "--modules", "bisect,keyword"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "rw" / "long").iterdir()) == ["bisect_long.py", "keyword_long.py"]
    bad = subprocess.run(cmd[:-1] + ["nope"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 2 and "no driver for 'nope'" in bad.stderr


def test_evaluation_dev_and_training_drivers_use_disjoint_modules():
    assert not set(DRIVERS) & set(DEV_DRIVERS)
    assert not set(DRIVERS) & set(TRAIN_DRIVERS)
    assert not set(DEV_DRIVERS) & set(TRAIN_DRIVERS)


@pytest.mark.parametrize("module", sorted(DEV_DRIVERS) + sorted(TRAIN_DRIVERS))
def test_dev_and_training_programs_run_to_a_normal_exit(module, tmp_path):
    driver = DEV_DRIVERS.get(module) or TRAIN_DRIVERS[module]
    program = build_program(module, driver)
    (tmp_path / "long.py").write_text(program.single)
    (tmp_path / "main.py").write_text(program.main)
    (tmp_path / program.impl_file).write_text(program.impl)
    for script in ("long.py", "main.py"):
        done = subprocess.run([sys.executable, "-W", "ignore", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-400:]


def test_a_name_defined_in_a_fallback_block_is_qualified():
    program = build_program("ntpath", "norm = normpath('C:/a/../b')\n")  # normpath: try/except ImportError
    assert "ntpath_impl.normpath(" in program.main


def test_cli_writes_the_dev_slice(tmp_path):
    cmd = [sys.executable, "-m", "neural_debugger_cli", "tracegen", "realworld", "--split", "dev", "--out", str(tmp_path / "rw"), "--modules", "getopt"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "rw" / "projects" / "getopt" / "getopt_impl.py").is_file()
    bad = subprocess.run(cmd[:-1] + ["bisect"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 2 and "no driver for 'bisect'" in bad.stderr  # a test module is not in the dev split
    split = subprocess.run(cmd[:5] + ["--split", "train", "--out", str(tmp_path / "x")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert split.returncode == 2 and "unknown split" in split.stderr
