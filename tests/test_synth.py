"""The synthetic program generator: determinism, program shape, method coverage, that programs
run, and the CruxEval guard (normalized-source dedup)."""
from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
import textwrap

import pytest

from tracegen.dedupe import CruxEvalGuard, Deduper, default_cruxeval_path, normalize_source, source_key
from tracegen.synth import generate_program
from tracegen.synth.crux import MAX_CHARS, MIN_CHARS, generate_function
from tracegen.synth.methods import ALL_METHODS
from tracegen.synth.multi import generate_multi


def _programs(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [generate_program(rng).source for _ in range(n)]


def test_same_seed_same_programs_and_different_seed_different_programs() -> None:
    assert _programs(7, 50) == _programs(7, 50)
    assert _programs(7, 50) != _programs(8, 50)


def test_generator_uses_no_global_random_state() -> None:
    random.seed(1)
    a = _programs(3, 20)
    random.seed(2)
    random.random()
    assert _programs(3, 20) == a


def test_crux_programs_have_the_fixed_shape() -> None:
    rng = random.Random(11)
    for _ in range(300):
        fn = generate_function(rng)
        assert MIN_CHARS <= len(fn.function) <= MAX_CHARS
        assert fn.program == f"{fn.function}\n\nresult = f({fn.call[len('result = f('):-1]})\n"
        tree = ast.parse(fn.program)
        assert [type(n) for n in tree.body] == [ast.FunctionDef, ast.Assign]
        func, call = tree.body
        assert func.name == "f"
        assert isinstance(call, ast.Assign) and [t.id for t in call.targets] == ["result"]  # type: ignore[attr-defined]
        assert isinstance(call.value, ast.Call) and call.value.func.id == "f"  # type: ignore[attr-defined]
        for arg in call.value.args:
            ast.literal_eval(arg)  # inputs are plain literals
        assert not any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree))


def test_all_69_cruxeval_methods_are_generated() -> None:
    rng = random.Random(5)
    seen: set[tuple[str, str]] = set()
    for _ in range(1500):
        fn = generate_function(rng)
        seen |= fn.methods
        for _owner, method in fn.methods:  # every recorded method really is in the source
            assert f".{method}(" in fn.function or method == "maketrans"
    assert len(ALL_METHODS) == 69
    assert ALL_METHODS - seen == set()


def test_multi_programs_cover_the_features() -> None:
    rng = random.Random(9)
    features: set[str] = set()
    for _ in range(300):
        prog = generate_multi(rng)
        ast.parse(prog.source)
        features |= prog.features
    assert {"recursion", "class", "exception", "generator", "closure", "print", "calls", "module_code", "uncaught", "inheritance"} <= features


def test_generated_programs_run_in_a_child_process() -> None:
    """Run 400 programs in one child; crux programs must not raise, multi ones only if they meant to."""
    rng = random.Random(21)
    progs = []
    for _ in range(400):
        p = generate_program(rng)
        progs.append({"source": p.source, "may_raise": "uncaught" in p.tags})
    runner = textwrap.dedent(
        """
        import io, json, sys, contextlib
        progs = json.load(sys.stdin)
        bad = []
        for p in progs:
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(p["source"], "<prog>", "exec"), {"__name__": "__main__"})
            except Exception as e:
                if not p["may_raise"]:
                    bad.append([p["source"], repr(e)])
        print(json.dumps(bad))
        """
    )
    out = subprocess.run([sys.executable, "-c", runner], input=json.dumps(progs), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    bad = json.loads(out.stdout)
    assert len(bad) <= 4, bad[:3]  # the run filter removes these few; most programs must be valid


# ------------------------------------------------------------------ dedupe and the CruxEval guard
def test_normalize_ignores_names_comments_docstrings_but_not_constants() -> None:
    a = "def f(text):\n    '''doc'''\n    out = text.upper()  # shout\n    return out\n"
    b = "def g(s):\n    r = s.upper()\n\n    return r\n"
    c = "def g(s):\n    r = s.lower()\n    return r\n"
    assert normalize_source(a) == normalize_source(b)
    assert normalize_source(a) != normalize_source(c)
    assert source_key("x = 1") != source_key("x = 2")
    assert normalize_source("print(len([1]))") == "print(len([1]))"  # builtins keep their names


def test_deduper_drops_renamed_copies() -> None:
    d = Deduper()
    assert d.add("def f(a):\n    return a + 1\n\nresult = f(2)\n")
    assert not d.add("def h(zz):\n    # same\n    return zz + 1\n\nresult = h(2)\n")
    assert d.add("def f(a):\n    return a + 1\n\nresult = f(3)\n")


@pytest.fixture(scope="module")
def guard() -> CruxEvalGuard:
    assert default_cruxeval_path().is_file(), "the package ships tracegen/cruxeval/cruxeval.jsonl"
    return CruxEvalGuard()


def test_guard_catches_a_renamed_cruxeval_function(guard: CruxEvalGuard) -> None:
    rows = [json.loads(line) for line in default_cruxeval_path().read_text().splitlines() if line.strip()]
    assert guard.count == len(rows) >= 800
    rng = random.Random(0)
    for row in rng.sample(rows, 25):
        tree = ast.parse(row["code"])
        bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        bound |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
        code = row["code"].replace("def f(", "def solve(", 1)
        for name in sorted(bound):  # rename every name the function binds
            code = ast.unparse(_rename(ast.parse(code), name, f"{name}_renamed"))
        program = f'"""Inserted on purpose."""\n# a comment\n{code}\n\nresult = solve({row["input"]})\n'
        assert guard.contains(program), program


def _rename(tree: ast.AST, old: str, new: str) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = new
        elif isinstance(node, ast.arg) and node.arg == old:
            node.arg = new
    return tree


def test_no_generated_program_contains_a_cruxeval_function(guard: CruxEvalGuard) -> None:
    rng = random.Random(2024)
    hits = [p for p in (generate_program(rng).source for _ in range(3000)) if guard.contains(p)]
    assert hits == []


def test_guard_reports_a_missing_file_clearly(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(FileNotFoundError, match="CRUXEVAL_PATH"):
        CruxEvalGuard(tmp_path / "nope.jsonl")
