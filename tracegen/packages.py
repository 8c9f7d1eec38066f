"""Real code from PyPI as training programs: a pinned list of pure-Python packages, installed into a
data folder, whose doctest examples become programs that run the package's own modules as user code.

``neural-debugger tracegen packages --out data/pkgs`` installs `PINNED` with pip (wheels only, no
dependencies resolved: the list is complete, every version pinned) into ``data/pkgs/site/`` and writes
``data/pkgs/manifest.json`` (name, version, licence as pinned and as the wheel declares it, split,
top-level import names, every ``.py`` file with its sha256). Nothing of the packages is imported or run
by this process: doctests are found by parsing the files (`package_programs`).

A program made from one doctest (``tracegen.sources.doctest_program``) imports what its examples use
from the module that holds the doctest; the module files that the program imports, followed through
the package's own imports (`import_closure`), are copied beside it as user modules (`ProgramSpec.modules`),
so stepIn enters the package's code and trajectories step across files. Programs whose closure is
longer than ``max_lines`` lines are left out.

Splits: packages marked ``dev`` (`DEV_PACKAGES`) are never training data; ``PackageSource(folder,
split="dev")`` draws only from them (the dev slice of real code, see docs/data.md).
"""
from __future__ import annotations

import ast
import doctest
import hashlib
import json
import random
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tracegen.programs import ProgramSpec, doctest_program, static_rejection

MANIFEST = "manifest.json"
SITE = "site"
SPLITS = ("train", "dev")


@dataclass(frozen=True)
class PackagePin:
    """One package of the list: its PyPI name and pinned version, the licence checked by hand, and the
    split it belongs to (``train`` or ``dev``: a dev package is never trained on)."""

    name: str
    version: str
    licence: str
    split: str = "train"


PINNED: tuple[PackagePin, ...] = (
    PackagePin("more-itertools", "11.2.1", "MIT"),
    PackagePin("toolz", "1.2.0", "BSD-3-Clause"),
    PackagePin("boltons", "26.2.0", "BSD-3-Clause"),
    PackagePin("sortedcontainers", "2.4.0", "Apache-2.0"),
    PackagePin("humanize", "4.17.0", "MIT"),
    PackagePin("tabulate", "0.10.0", "MIT"),
    PackagePin("natsort", "8.4.0", "MIT"),
    PackagePin("pyparsing", "3.3.3", "MIT"),
    PackagePin("webcolors", "25.10.0", "BSD-3-Clause"),
    PackagePin("multipledispatch", "1.0.0", "BSD-3-Clause"),
    PackagePin("python-dateutil", "2.9.0.post0", "Apache-2.0 OR BSD-3-Clause"),
    PackagePin("six", "1.17.0", "MIT"),  # python-dateutil's one dependency
    PackagePin("pyrsistent", "0.20.0", "MIT"),  # its C extension is not copied: the pure-Python code runs
    # the dev slice: never training data
    PackagePin("inflection", "0.5.1", "MIT", "dev"),
    PackagePin("semver", "3.1.2", "BSD-3-Clause", "dev"),
    PackagePin("ordered-set", "4.1.0", "MIT", "dev"),
)
DEV_PACKAGES = tuple(p.name for p in PINNED if p.split == "dev")


@dataclass
class InstalledPackage:
    """A manifest entry."""

    name: str
    version: str
    licence: str
    declared_licence: str
    split: str
    top_level: list[str]
    files: dict[str, str] = field(default_factory=dict)  # path under site/ -> sha256


# ------------------------------------------------------------------ installing
def install_packages(out: Path | str, pins: tuple[PackagePin, ...] = PINNED, pip_args: tuple[str, ...] = ()) -> list[InstalledPackage]:
    """pip-install `pins` (wheels only, no dependency resolution) into ``out/site`` and write
    ``out/manifest.json``; returns the manifest entries. Raises RuntimeError with pip's message on failure."""
    out = Path(out)
    site = out / SITE
    site.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--no-compile",
           "--only-binary=:all:", "--upgrade", "--target", str(site), *pip_args, *(f"{p.name}=={p.version}" for p in pins)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip install failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    entries = [_entry(site, pin) for pin in pins]
    (out / MANIFEST).write_text(json.dumps({"packages": [asdict(e) for e in entries]}, indent=2) + "\n", encoding="utf-8")
    return entries


def _dist_info(site: Path, pin: PackagePin) -> Path:
    want = pin.name.replace("-", "_").lower()
    for info in site.glob("*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].rpartition("-")
        if name.replace("-", "_").lower() == want and version == pin.version:
            return info
    raise RuntimeError(f"{pin.name}=={pin.version} is not installed under {site}")


def _entry(site: Path, pin: PackagePin) -> InstalledPackage:
    info = _dist_info(site, pin)
    metadata = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
    declared = _declared_licence(metadata)
    files: dict[str, str] = {}
    for line in (info / "RECORD").read_text(encoding="utf-8").splitlines():
        path = line.split(",", 1)[0]
        if path.endswith(".py") and not path.startswith(("..", "/")) and (site / path).is_file():
            files[path] = hashlib.sha256((site / path).read_bytes()).hexdigest()
    top = sorted({p.split("/", 1)[0].removesuffix(".py") for p in files})
    return InstalledPackage(pin.name, pin.version, pin.licence, declared, pin.split, top, dict(sorted(files.items())))


def _declared_licence(metadata: str) -> str:
    """The wheel's own licence statement: License-Expression, else the License classifiers, else License."""
    fields: dict[str, list[str]] = {}
    for line in metadata.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields.setdefault(key, []).append(value.strip())
    if fields.get("License-Expression"):
        return fields["License-Expression"][0]
    classifiers = [c.rsplit(" :: ", 1)[-1] for c in fields.get("Classifier", []) if c.startswith("License ::")]
    return "; ".join(classifiers) or (fields.get("License") or ["unknown"])[0][:80]


def read_manifest(folder: Path | str) -> list[InstalledPackage]:
    """The manifest written by `install_packages` (FileNotFoundError with the command to run if missing)."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"no package manifest at {path}: run `neural-debugger tracegen packages --out {folder}` first")
    return [InstalledPackage(**entry) for entry in json.loads(path.read_text(encoding="utf-8"))["packages"]]


# ------------------------------------------------------------------ from files to programs
def module_name(path: str) -> str:
    """``more_itertools/more.py`` -> ``more_itertools.more``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_file(site: Path, name: str) -> str | None:
    base = name.replace(".", "/")
    for rel in (f"{base}.py", f"{base}/__init__.py"):
        if (site / rel).is_file():
            return rel
    return None


def _imported_modules(tree: ast.Module, current: str, is_package: bool) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved against `current`),
    with ``from X import Y`` also giving ``X.Y`` (Y may be a submodule)."""
    names: set[str] = set()
    package = current if is_package else current.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                if node.level - 1 >= len(parts):
                    continue
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return {n for n in names if n}


@dataclass
class _SiteFiles:
    """The files under `site` and the modules each imports, read once."""

    site: Path
    read: dict[str, tuple[str, set[str]]] = field(default_factory=dict)

    def get(self, rel: str, name: str) -> tuple[str, set[str]]:
        if rel not in self.read:
            text = (self.site / rel).read_text(encoding="utf-8")
            try:
                imports = _imported_modules(ast.parse(text), name, rel.endswith("__init__.py"))
            except SyntaxError:
                imports = set()
            self.read[rel] = (text, imports)
        return self.read[rel]


def import_closure(site: Path | _SiteFiles, program: str) -> dict[str, str]:
    """``{relative path: source}`` of every file under `site` that `program` imports, followed through
    those files' own imports (parent packages' ``__init__.py`` included)."""
    files_under = site if isinstance(site, _SiteFiles) else _SiteFiles(site)
    todo = sorted(_imported_modules(ast.parse(program), "", False))
    files: dict[str, str] = {}
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in seen:
                continue
            seen.add(prefix)
            rel = _module_file(files_under.site, prefix)
            if rel is None:
                continue
            files[rel], imports = files_under.get(rel, prefix)
            todo.extend(sorted(imports - seen))
    return dict(sorted(files.items()))


def file_doctests(source: str, module: str, filename: str) -> list[doctest.DocTest]:
    """The doctests in a file's docstrings (module, classes, functions, methods), found by parsing only
    (nothing is imported); examples marked ``+SKIP`` are left out."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    parser = doctest.DocTestParser()
    tests: list[doctest.DocTest] = []

    def visit(node: ast.AST, qualname: str) -> None:
        doc = ast.get_docstring(node, clean=True) if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if doc and ">>>" in doc:
            try:
                examples = [e for e in parser.get_examples(doc, qualname) if not e.options.get(doctest.SKIP)]
            except ValueError:
                examples = []
            if examples:
                tests.append(doctest.DocTest(examples, {}, qualname, filename, getattr(node, "lineno", 0), doc))
        for child in getattr(node, "body", []):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{qualname}.{child.name}")

    visit(tree, module)
    return tests


def top_level_names(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level (definitions, assignments, imports), also inside top-level
    ``if``/``try`` blocks."""
    names: set[str] = set()

    def scan(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            elif isinstance(node, ast.If):
                scan(node.body)
                scan(node.orelse)
            elif isinstance(node, ast.Try):
                scan(node.body)
                for handler in node.handlers:
                    scan(handler.body)
                scan(node.orelse)

    scan(tree.body)
    return names


@dataclass
class PackagePrograms:
    """What one package gave: its programs and why the other doctests were left out (reason -> count)."""

    package: str
    programs: list[ProgramSpec] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def package_programs(site: Path, package: InstalledPackage, max_examples: int = 25, max_lines: int = 8000) -> PackagePrograms:
    """One program per doctest of `package`'s files, each with its import closure as user modules."""
    result = PackagePrograms(package.name)
    site_files = _SiteFiles(site)
    for rel in package.files:
        text = (site / rel).read_text(encoding="utf-8", errors="replace")
        module = module_name(rel)
        try:
            names = dict.fromkeys(top_level_names(ast.parse(text)))
        except SyntaxError:
            result.skip("module does not parse")
            continue
        for test in file_doctests(text, module, rel):
            if len(test.examples) > max_examples:
                result.skip("too many examples")
                continue
            source = doctest_program(module, test, names)
            if source is None:
                result.skip("examples do not parse")
                continue
            reason = static_rejection(source)
            if reason:
                result.skip(reason)
                continue
            try:
                modules = import_closure(site_files, source)
            except (SyntaxError, UnicodeDecodeError):
                result.skip("a module does not parse")
                continue
            if not any(path.split("/", 1)[0].removesuffix(".py") in package.top_level for path in modules):
                result.skip("uses nothing of the package")
                continue
            if sum(t.count("\n") for t in modules.values()) > max_lines:
                result.skip(f"modules longer than {max_lines} lines")
                continue
            result.programs.append(ProgramSpec(source, "package", f"package:{package.name}=={package.version}:{test.name}",
                                               None, frozenset({"package"}), tuple(modules.items())))
    return result


class PackageSource:
    """Programs made from the doctests of the packages installed in `folder` (see `install_packages`),
    restricted to one split; drawn with replacement."""

    def __init__(self, folder: Path | str, split: str = "train", max_lines: int = 8000) -> None:
        if split not in SPLITS:
            raise ValueError(f"unknown package split {split!r}: choose one of {', '.join(SPLITS)}")
        folder = Path(folder)
        self.name = f"packages:{folder}" + (f":{split}" if split != "train" else "")
        self.split = split
        site = folder / SITE
        self.per_package: list[PackagePrograms] = []
        self.programs: list[ProgramSpec] = []
        for package in read_manifest(folder):
            if package.split != split:
                continue
            made = package_programs(site, package, max_lines=max_lines)
            self.per_package.append(made)
            self.programs.extend(made.programs)
        if not self.programs:
            raise ValueError(f"no {split} programs in the packages under {folder}")

    def draw(self, rng: random.Random) -> ProgramSpec:
        return rng.choice(self.programs)


__all__ = ["PINNED", "DEV_PACKAGES", "PackagePin", "InstalledPackage", "install_packages", "read_manifest", "import_closure",
           "file_doctests", "package_programs", "PackageSource", "PackagePrograms", "module_name", "top_level_names"]
