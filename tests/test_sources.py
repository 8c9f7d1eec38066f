"""Program sources (synthetic, files and folders, doctests) and the run filter, with the real recorder."""
from __future__ import annotations

import ast
import doctest
import random
from pathlib import Path

import pytest

from tracegen.dataset import record_filtered
from tracegen.sources import DoctestSource, FileSource, ProgramSpec, SyntheticSource, doctest_program, parse_sources, static_rejection
from tracegen.synth.filter import FilterPolicy, count_stops, rejection, same_run

POLICY = FilterPolicy()


def _spec(source: str, kind: str = "multi") -> ProgramSpec:
    return ProgramSpec(source, kind, "test")


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ------------------------------------------------------------------ sources
def test_synthetic_source_is_deterministic() -> None:
    a = [SyntheticSource().draw(random.Random(4)).source for _ in range(3)]
    src = SyntheticSource()
    rng1, rng2 = random.Random(4), random.Random(4)
    assert [src.draw(rng1) for _ in range(20)] == [src.draw(rng2) for _ in range(20)]
    assert len(set(a)) == 1


def test_file_source_keeps_usable_files_and_says_why_others_are_skipped(tmp_path: Path) -> None:
    _write(tmp_path, "good.py", "x = 1\ny = x + 1\nprint(y)\n")
    _write(tmp_path, "pkg/other.py", "def f(a):\n    return a * 2\n\nz = f(3)\n")
    _write(tmp_path, "asks.py", "name = input('name? ')\n")
    _write(tmp_path, "net.py", "import socket\ns = socket.socket()\n")
    _write(tmp_path, "net2.py", "from urllib.request import urlopen\n")
    _write(tmp_path, "broken.py", "def f(:\n")
    _write(tmp_path, ".hidden/skip.py", "x = 1\n")
    src = FileSource(tmp_path)
    assert sorted(Path(p.origin).name for p in src.programs) == ["good.py", "other.py"]
    reasons = {Path(k).name: v for k, v in src.skipped.items()}
    assert reasons["asks.py"] == "calls input()"
    assert reasons["net.py"] == "imports socket"
    assert reasons["net2.py"] == "imports urllib.request"
    assert reasons["broken.py"].startswith("does not parse")
    assert all(p.kind == "file" and p.path and Path(p.path).is_file() for p in src.programs)
    single = FileSource(tmp_path / "good.py")
    assert [p.source for p in single.programs] == ["x = 1\ny = x + 1\nprint(y)\n"]


def test_file_source_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        FileSource(tmp_path / "missing")
    _write(tmp_path, "only_input.py", "input()\n")
    with pytest.raises(ValueError, match="no usable Python files"):
        FileSource(tmp_path)


def test_static_rejection() -> None:
    assert static_rejection("print(1)\n") is None
    assert static_rejection("import asyncio\n") == "imports asyncio"
    assert static_rejection("x = (\n") is not None


def test_doctest_program_binds_values_and_catches_expected_exceptions() -> None:
    text = """
    >>> words = ['b', 'a']
    >>> sorted(words)
    ['a', 'b']
    >>> dedent('  x')
    'x'
    >>> print('hi')
    hi
    >>> int('z')
    Traceback (most recent call last):
    ValueError: invalid literal
    """
    test = doctest.DocTestParser().get_doctest(text, {}, "demo", "demo.py", 0)
    import textwrap

    program = doctest_program("textwrap", test, vars(textwrap))
    assert program is not None
    assert program.splitlines()[0] == "from textwrap import dedent"
    assert "out1 = sorted(words)" in program and "out2 = dedent('  x')" in program
    assert "print('hi')" in program and "except Exception as exc:" in program
    ast.parse(program)


def test_doctest_source_programs_record_and_pass_the_filter() -> None:
    src = DoctestSource(("textwrap", "statistics", "enum"))
    assert src.skipped["textwrap"] == "held out (a realworld evaluation module)"
    assert len(src.programs) >= 10
    assert all(p.kind == "doctest" and p.origin.startswith("doctest:") for p in src.programs)
    kept = 0
    for spec in src.programs[:6]:
        trace, reason = record_filtered(spec, POLICY)
        kept += trace is not None
        assert trace is not None or reason
    assert kept >= 2


def test_doctest_source_skips_c_modules_and_fails_without_programs() -> None:
    with pytest.raises(ValueError, match="no doctest programs"):
        DoctestSource(("math", "no_such_module_xyz"))


def test_parse_sources(tmp_path: Path) -> None:
    _write(tmp_path, "a.py", "x = 1\ny = 2\nz = 3\n")
    ws = parse_sources(f"synthetic@3,files:{tmp_path}@0.5,doctest:statistics")
    assert [s.name for s in ws.sources] == ["synthetic", f"files:{tmp_path}", "doctest:statistics"]
    assert ws.weights == [3.0, 0.5, 1.0]
    for bad, match in [("nope", "unknown program source"), ("files", "needs a path"), ("synthetic@x", "bad weight"),
                       ("synthetic@0", "positive"), ("", "no program sources")]:
        with pytest.raises(ValueError, match=match):
            parse_sources(bad)


# ------------------------------------------------------------------ the run filter (real recorder)
def test_filter_keeps_a_good_program_and_counts_its_stops() -> None:
    trace, reason = record_filtered(_spec("def f(x):\n    y = x + 1\n    return y\n\nresult = f(2)\n", "crux"), POLICY)
    assert reason is None and trace is not None
    assert count_stops(trace) == 4  # line events: def (1), result = (5), y = (2), return (3)


@pytest.mark.parametrize(
    ("source", "kind", "reason"),
    [
        ("while True:\n    pass\n", "multi", "never ended"),
        ("def f(x):\n    return x[5]\n\nresult = f([1])\n", "crux", "crux function raised"),
        ("x = 1\n", "multi", "too few stops"),
        ("big = 'a' * 1000\nb = 1\nc = 2\n", "multi", "repr too long"),
        ("class C:\n    pass\n\nc = C()\nd = 1\ne = 2\n", "multi", "default object repr"),
        ("import sys\nprint('x')\nsys.exit(3)\n", "multi", "exit code not zero"),
        ("for i in range(400):\n    pass\n", "multi", "too many stops"),
    ],
)
def test_filter_rejections(source: str, kind: str, reason: str) -> None:
    trace, why = record_filtered(_spec(source, kind), POLICY)
    assert trace is None
    assert why is not None and why.startswith(reason), why


def test_uncaught_exception_is_kept_for_multi_programs() -> None:
    source = "def check(v):\n    if v < 0:\n        raise ValueError('neg')\n    return v\n\na = check(1)\nb = check(-1)\n"
    trace, reason = record_filtered(_spec(source), POLICY)
    assert reason is None and trace is not None and trace.end.how == "uncaught"


def test_nondeterministic_file_is_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path, "rnd.py", "import random\nx = random.random()\ny = random.random()\nz = x + y\n")
    spec = ProgramSpec(path.read_text(), "file", str(path), str(path))
    trace, reason = record_filtered(spec, POLICY)
    assert trace is None and reason == "not deterministic"
    steady = _write(tmp_path, "steady.py", "x = 1\ny = x * 2\nz = [x, y]\n")
    assert record_filtered(ProgramSpec(steady.read_text(), "file", str(steady), str(steady)), POLICY)[1] is None


def test_same_run_compares_recordings() -> None:
    from tracegen.fast import record_program

    a = record_program("x = [1]\ny = 2\nz = y\n")
    b = record_program("x = [1]\ny = 2\nz = y\n")
    c = record_program("x = [1]\ny = 3\nz = y\n")
    assert same_run(a, b) and not same_run(a, c)
    assert rejection(a, "multi", FilterPolicy(min_stops=1)) is None


def test_default_doctest_modules_hold_no_evaluation_or_dev_module() -> None:
    from tracegen.realworld import DRIVERS
    from tracegen.sources import DEFAULT_DOCTEST_MODULES, DEV_DOCTEST_MODULES

    assert not set(DEFAULT_DOCTEST_MODULES) & set(DRIVERS)
    assert not set(DEFAULT_DOCTEST_MODULES) & set(DEV_DOCTEST_MODULES)
    with pytest.raises(ValueError, match="no doctest programs"):
        DoctestSource(("difflib",))  # a dev module is refused for training
    dev = DoctestSource(split="dev")
    assert {p.origin.split(":")[1].split(".")[0] for p in dev.programs} <= set(DEV_DOCTEST_MODULES)


def test_dev_slice_driver_modules_are_refused_for_training() -> None:
    source = DoctestSource(("getopt", "statistics"))
    assert source.skipped == {"getopt": "in the dev slice"}


def test_driven_modules_come_as_long_files_and_projects_with_wider_bounds() -> None:
    from tracegen.module_drivers import TRAIN_DRIVERS
    from tracegen.synth.filter import bounds_for

    source = parse_sources("realworld-train").sources[0]
    assert len(source.programs) == 2 * len(TRAIN_DRIVERS)
    project = next(p for p in source.programs if p.origin == "driven-project:posixpath")
    assert project.source.startswith("import posixpath_impl\n") and [m for m, _ in project.modules] == ["posixpath_impl.py"]
    long_file = next(p for p in source.programs if p.origin == "driven-long:posixpath")
    assert not long_file.modules and "# --- driver (appended) ---" in long_file.source
    trace, reason = record_filtered(project, POLICY)
    assert reason is None, reason
    assert any(info.file == "posixpath_impl.py" and info.name == "normpath" for info in trace.frames.values())
    wide = bounds_for("driven", POLICY)
    assert wide.max_stops == 10 * POLICY.max_stops and wide.max_repr >= 1000 and bounds_for("crux", POLICY) == POLICY


def test_doctest_user_mode_steps_into_the_module_copy() -> None:
    src = parse_sources("doctest-user:statistics").sources[0]
    assert src.name == "doctest-user:statistics"
    spec = next(p for p in src.programs if p.origin == "doctest-user:statistics.median")
    assert spec.source.startswith("from statistics_impl import median\n")
    assert [path for path, _ in spec.modules] == ["statistics_impl.py"]
    trace, reason = record_filtered(spec, POLICY)
    assert reason is None, reason
    assert any(info.file == "statistics_impl.py" and info.name == "median" for info in trace.frames.values())
    with pytest.raises(ValueError, match="no doctest programs"):
        DoctestSource(("_pydecimal",), user_code=True)  # 6000+ lines: too long to copy
