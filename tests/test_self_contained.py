"""The repository carries what it needs: a clone with nothing beside it runs every command and test.

No tracked code or script may read the `shared` folder that sits beside the checkout on the
development machine (a user's clone has none); the CruxEval problems ship in the package
(`tracegen/cruxeval/`, MIT, with its licence) and are the default of every reader, which
`$CRUXEVAL_PATH` overrides.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tracegen.dedupe import BUNDLED_CRUXEVAL, CRUXEVAL_ENV, default_cruxeval_path

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).with_name("neural-debugger")
CODE_SUFFIXES = {".py", ".sh", ".js", ".mjs", ".cjs", ".ts", ".toml", ".cfg", ".ini", ".yml", ".yaml"}
CODE_NAMES = {"Makefile", "run"}  # run: .ci/run
SHARED = "shared"  # spelled apart so this file does not match its own patterns
PATTERNS = [
    re.compile(r"\.\./" + SHARED + r"\b"),  # the folder beside the checkout, also after $REPO/
    re.compile(r"/work/" + SHARED + r"\b"),
    re.compile(r"parents?(\[\d+\])?\s*/\s*['\"]" + SHARED + r"['\"]"),  # ROOT.parent / <that folder name>
]


def tracked_code_files() -> list[Path]:
    """Every tracked file that is code or a script (docs excluded); all files under the root without git."""
    if (ROOT / ".git").exists():
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
        paths = [ROOT / n for n in names]
    else:
        paths = [p for p in ROOT.rglob("*") if ".venv" not in p.parts and "node_modules" not in p.parts]
    this = Path(__file__).resolve()  # spells the patterns out to test them
    return sorted(p for p in paths if p.is_file() and (p.suffix in CODE_SUFFIXES or p.name in CODE_NAMES) and p.resolve() != this)


def shared_references(text: str) -> list[str]:
    return [m.group(0) for pattern in PATTERNS for m in pattern.finditer(text)]


def test_the_patterns_catch_every_spelling() -> None:
    for line in ('p = ROOT.parent / "' + SHARED + '" / "cruxeval"', "x = REPO_ROOT.parents[1] / '" + SHARED + "'",
                 'for c in "$REPO/../' + SHARED + '/cruxeval/x"; do', "open('/work/" + SHARED + "/DESIGN.md')"):  # fmt: skip
        assert shared_references(line), line
    assert shared_references("tests shared by the session; shared_prefix; a shared/dap copy") == []


def test_no_tracked_code_reads_the_folder_beside_the_checkout() -> None:
    files = tracked_code_files()
    assert len(files) > 50 and ROOT / "tracegen" / "dedupe.py" in files
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if shared_references(line)
    ]
    assert offenders == []


def test_cruxeval_ships_in_the_package_with_its_licence(monkeypatch: pytest.MonkeyPatch) -> None:
    assert BUNDLED_CRUXEVAL.parent == ROOT / "tracegen" / "cruxeval"
    rows = [json.loads(line) for line in BUNDLED_CRUXEVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) == 800 and all({"code", "input", "output", "id"} <= set(r) for r in rows)
    licence = (BUNDLED_CRUXEVAL.parent / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "Meta" in licence
    monkeypatch.delenv(CRUXEVAL_ENV, raising=False)
    assert default_cruxeval_path() == BUNDLED_CRUXEVAL
    monkeypatch.setenv(CRUXEVAL_ENV, "/somewhere/else.jsonl")
    assert default_cruxeval_path() == Path("/somewhere/else.jsonl")


def _eval_oracle(tmp_path: Path, out: str, env: dict[str, str], *extra: str) -> dict:
    done = subprocess.run(
        [str(EXE), "eval", "cruxeval", "--backend", "oracle", "--out", out, "--no-progress", *extra],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / out / "summary.json").read_text())


def test_eval_cruxeval_defaults_to_the_shipped_problems_and_the_variable_overrides(tmp_path: Path) -> None:
    """Run from a folder outside the repository: no --problems, then $CRUXEVAL_PATH naming two problems."""
    env = {k: v for k, v in os.environ.items() if k != CRUXEVAL_ENV}
    summary = _eval_oracle(tmp_path, "default", env, "--limit", "1")
    assert Path(summary["problems"]) == BUNDLED_CRUXEVAL and summary["n"] == 1 and summary["passed"] == 1
    two = tmp_path / "two.jsonl"
    two.write_text("".join(BUNDLED_CRUXEVAL.read_text(encoding="utf-8").splitlines(keepends=True)[3:5]), encoding="utf-8")
    summary = _eval_oracle(tmp_path, "override", {**env, CRUXEVAL_ENV: str(two)})
    assert Path(summary["problems"]) == two and summary["n"] == 2
