"""The packages depend one way: protocol <- tracegen <- model <- adapter, train (docs/ARCHITECTURE.md),
and no module of ours takes part in an import cycle.

Checked statically: every import statement of every module (lazy ones inside functions and
``TYPE_CHECKING`` ones included) is read with `ast`, so a forbidden import fails here even if no test
runs it, and a cycle cannot be hidden by moving an import into a function.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping
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


# --------------------------------------------------------------------------- the module graph


def module_name(path: Path, root: Path) -> str:
    """``model/backends/hf.py`` -> ``model.backends.hf``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_edges(source: str, name: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules of `modules` that the module `name` imports (itself left out).

    ``from a.b import c`` points at ``a.b.c`` when that is a module, else at ``a.b``; a relative import
    is resolved against the module's package.
    """

    def known(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if is_package else name.rpartition(".")[0]
    targets: set[str | None] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets |= {known(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets |= {known(f"{base}.{alias.name}") for alias in node.names}
    return {t for t in targets if t is not None and t != name}


def module_graph(root: Path, packages: tuple[str, ...] = OURS) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports, over every ``*.py`` of `packages` under `root`."""
    paths = {module_name(p, root): p for package in packages for p in sorted((root / package).rglob("*.py"))}
    names = set(paths)
    return {
        name: import_edges(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", names)
        for name, path in paths.items()
    }


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted: every cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(start: str) -> None:  # iterative, so a deep graph cannot hit the recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


# --------------------------------------------------------------------------- the checks


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_the_layers_below(package: str) -> None:
    assert (ROOT / package / "__init__.py").is_file()
    assert violations(package) == []


def test_no_package_below_imports_adapter_or_train() -> None:
    """Nothing imports adapter or train (the state comparison lives in protocol)."""
    for package in ("protocol", "tracegen", "model"):
        assert not [v for v in violations(package) if v.endswith(("imports adapter", "imports train"))]
    assert not [v for v in violations("train") if v.endswith("imports adapter")]
    assert not [v for v in violations("adapter") if v.endswith("imports train")]
    assert (ROOT / "protocol" / "compare.py").is_file()


def test_no_import_cycles() -> None:
    graph = module_graph(ROOT)
    assert len(graph) > 100 and "model.session" in graph and "model.backends.hf" in graph
    assert import_cycles(graph) == []


def test_the_check_sees_imports() -> None:
    """The scanner finds plain, from- and lazy (in-function) imports, and ignores other names."""
    source = "import os\nfrom adapter.compare import X\ndef f():\n    import adapter.demo\n    from . import loop\nimport modelling\n"
    assert imported_packages(source, "train") == {("adapter", 2), ("adapter", 4), ("train", 5)}


def test_the_cycle_check_finds_cycles(tmp_path: Path) -> None:
    """A two-module cycle made by a lazy import, a three-module one through a relative import and a
    package ``__init__``, and an acyclic module beside them: the check names exactly the two cycles."""
    files = {
        "model/__init__.py": "",
        "model/a.py": "from model.b import thing\n",
        "model/b.py": "def thing():\n    from model import a\n",
        "model/wing/__init__.py": "from .c import C\n",
        "model/wing/c.py": "from model.d import D\nC = 1\n",
        "model/d.py": "from model.wing import C\nimport os\nD = 2\n",
        "model/e.py": "from model.a import thing\nfrom model.wing.c import C\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    graph = module_graph(tmp_path, ("model",))
    assert graph["model.wing"] == {"model.wing.c"} and graph["model.e"] == {"model.a", "model.wing.c"}
    assert import_cycles(graph) == [["model.a", "model.b"], ["model.d", "model.wing", "model.wing.c"]]
