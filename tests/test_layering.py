"""The packages depend one way: protocol <- tracegen <- model <- adapter, train (docs/ARCHITECTURE.md).

Checked statically: every import statement of every module of a package (lazy ones inside
functions included) is read with `ast`, so a forbidden import fails here even if no test runs it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = ("protocol", "tracegen", "model", "adapter", "train")
# package -> the packages of ours it may import (itself included)
ALLOWED: dict[str, set[str]] = {
    "protocol": {"protocol"},
    "tracegen": {"protocol", "tracegen"},
    "model": {"protocol", "tracegen", "model"},
    "adapter": {"protocol", "tracegen", "model", "adapter"},
    "train": {"protocol", "tracegen", "model", "train"},
}


def imported_packages(source: str, own: str) -> set[tuple[str, int]]:
    """(top-level package of ours, line) for each import in `source`; relative imports count as `own`."""
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [own] if node.level else [node.module or ""]
        else:
            continue
        found |= {(name.split(".")[0], node.lineno) for name in names if name.split(".")[0] in OURS}
    return found


def violations(package: str) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for name, line in sorted(imported_packages(path.read_text(encoding="utf-8"), package))
        if name not in ALLOWED[package]
    ]


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_the_layers_below(package: str) -> None:
    assert (ROOT / package / "__init__.py").is_file()
    assert violations(package) == []


def test_no_package_below_imports_adapter() -> None:
    """train, model, tracegen and protocol never import adapter (the state comparison lives in protocol)."""
    for package in ("protocol", "tracegen", "model", "train"):
        assert not [v for v in violations(package) if v.endswith("imports adapter")]
    assert (ROOT / "protocol" / "compare.py").is_file()


def test_the_check_sees_imports() -> None:
    """The scanner finds plain, from- and lazy (in-function) imports, and ignores other names."""
    source = "import os\nfrom adapter.compare import X\ndef f():\n    import adapter.demo\n    from . import loop\nimport modelling\n"
    assert imported_packages(source, "train") == {("adapter", 2), ("adapter", 4), ("train", 5)}
