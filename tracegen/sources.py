"""Where programs come from, behind one small interface.

A `ProgramSource` yields `ProgramSpec`s (a program's source plus where it came from) from a
seeded `random.Random`; the same generator state gives the same programs. Three kinds:

- `SyntheticSource`: the generator in `tracegen.synth` (kinds ``crux`` and ``multi``).
- `FileSource`: a user's ``.py`` file or every ``.py`` file under a folder (sorted), keeping
  those that parse and do not read ``input()`` or touch the network; drawn with replacement.
- `DoctestSource`: doctest examples of installed pure-Python modules (stdlib by default), each
  `doctest.DocTest` turned into a small standalone program that imports what it uses from the
  module and runs the examples (expressions are bound to variables so their values show up as
  locals; expected exceptions are caught and printed). Only the program's own frames are user
  code (justMyCode), so the module's code runs as library code.

`parse_sources("synthetic@8,files:examples,doctest:json,textwrap")` builds a weighted list from
the ``--sources`` option of ``tracegen synth``. ``packages:DIR`` (`tracegen.packages.PackageSource`) draws the
doctests of pinned PyPI packages with the packages' modules beside the program as user code.
"""
from __future__ import annotations

import doctest
import importlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from protocol.source_text import read_source
from tracegen.packages import PackageSource
from tracegen.programs import ProgramSpec, doctest_program, static_rejection
from tracegen.module_drivers import DEV_DRIVERS, TRAIN_DRIVERS
from tracegen.realworld import DRIVERS, build_program, module_copy
from tracegen.synth import generate_program

# The realworld evaluation's modules (tracegen/realworld.py) are not here and are refused (held out), and
# DEV_DOCTEST_MODULES are the stdlib part of the dev slice of real code: never training data.
DEFAULT_DOCTEST_MODULES: tuple[str, ...] = (
    "json", "statistics", "base64", "posixpath", "decimal", "_pydecimal", "collections", "functools", "itertools",
    "operator", "enum", "dataclasses", "pprint", "numbers", "contextlib", "typing", "inspect", "glob", "locale", "uu",
    "email.utils", "urllib.parse", "pathlib", "zipfile", "tarfile", "datetime", "random", "math", "pickletools",
)
DEV_DOCTEST_MODULES: tuple[str, ...] = ("difflib", "ipaddress")
HELD_OUT_MODULES = frozenset(DRIVERS)  # the realworld evaluation's modules
DEV_MODULES = frozenset(DEV_DOCTEST_MODULES) | frozenset(DEV_DRIVERS)  # never training user code


class ProgramSource(Protocol):
    """Anything that draws programs from a random generator."""

    name: str

    def draw(self, rng: random.Random) -> ProgramSpec:
        """One program (sources with a finite pool draw with replacement)."""
        ...


@dataclass
class SyntheticSource:
    """CruxEval-style functions (`crux_fraction` of them) and multi-function programs."""

    crux_fraction: float = 0.6
    name: str = "synthetic"

    def draw(self, rng: random.Random) -> ProgramSpec:
        state = rng.getrandbits(32)
        prog = generate_program(random.Random(state), self.crux_fraction)
        return ProgramSpec(prog.source, prog.kind, f"synthetic:{state:08x}", None, prog.tags)


@dataclass
class ProjectSource:
    """Multi-file programs (`tracegen.synth.project`): main plus 1-2 user modules; `long_fraction` of
    them with long modules (many functions never called)."""

    long_fraction: float = 0.3
    name: str = "project"

    def draw(self, rng: random.Random) -> ProgramSpec:
        from tracegen.synth.project import generate_project

        state = rng.getrandbits(32)
        sub = random.Random(state)
        prog = generate_project(sub, long_modules=sub.random() < self.long_fraction)
        return ProgramSpec(prog.source, prog.kind, f"project:{state:08x}", None, prog.tags, tuple(sorted(prog.modules.items())))


@dataclass
class LongSource:
    """Long single-file programs (`tracegen.synth.project.generate_long`): a few called functions
    among 150-600 lines of unused ones."""

    name: str = "long"

    def draw(self, rng: random.Random) -> ProgramSpec:
        from tracegen.synth.project import generate_long

        state = rng.getrandbits(32)
        prog = generate_long(random.Random(state))
        return ProgramSpec(prog.source, prog.kind, f"long:{state:08x}", None, prog.tags)


@dataclass
class EverydaySource:
    """Everyday programs (`tracegen.synth.everyday`): 10-40 lines over records with floats, None,
    tuples, sets, nested containers, user classes, dataclasses, ``math`` and ``collections``."""

    name: str = "everyday"

    def draw(self, rng: random.Random) -> ProgramSpec:
        from tracegen.synth.everyday import generate_everyday

        state = rng.getrandbits(32)
        prog = generate_everyday(random.Random(state))
        return ProgramSpec(prog.source, "everyday", f"everyday:{state:08x}", None, prog.features)


class FileSource:
    """A ``.py`` file, or every ``.py`` file under a folder, that passes `static_rejection`."""

    def __init__(self, path: str | Path) -> None:
        root = Path(path)
        if not root.exists():
            raise FileNotFoundError(f"no such file or folder: {root}")
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*.py") if not any(part.startswith(".") for part in p.parts))
        self.name = f"files:{path}"
        self.programs: list[ProgramSpec] = []
        self.skipped: dict[str, str] = {}
        for file in files:
            try:
                text = read_source(file)
            except (OSError, UnicodeDecodeError, SyntaxError) as exc:
                self.skipped[str(file)] = f"unreadable: {exc}"
                continue
            reason = static_rejection(text)
            if reason:
                self.skipped[str(file)] = reason
                continue
            self.programs.append(ProgramSpec(text, "file", str(file), str(file.resolve())))
        if not self.programs:
            raise ValueError(f"no usable Python files under {root} (skipped: {len(self.skipped)})")

    def draw(self, rng: random.Random) -> ProgramSpec:
        return rng.choice(self.programs)


def user_module_program(module_name: str, program: str) -> tuple[str, str]:
    """`program` (made by `doctest_program` for `module_name`) rewritten to import the module's copy
    beside it, ``<module>_impl.py`` (named apart so the standard library's module is not shadowed);
    returns (program, the copy's file name)."""
    alias = f"{module_name}_impl"
    lines = program.split("\n")
    for i, line in enumerate(lines[:2]):
        if line == f"import {module_name}":
            lines[i] = f"import {alias} as {module_name}"
        elif line.startswith(f"from {module_name} import "):
            lines[i] = f"from {alias} import " + line[len(f"from {module_name} import "):]
    return "\n".join(lines), f"{alias}.py"


class DoctestSource:
    """Programs made from the doctests of importable pure-Python modules (the realworld evaluation's
    modules refused). `user_code`: the module's file (one ``.py`` file of at most `max_lines` lines) is
    copied beside the program as user code, so stepping enters it. `split` ``dev`` draws only from
    `DEV_DOCTEST_MODULES`, which ``train`` refuses."""

    def __init__(self, modules: tuple[str, ...] | list[str] | None = None, max_examples: int = 25, user_code: bool = False,
                 split: str = "train", max_lines: int = 3000) -> None:
        if split not in ("train", "dev"):
            raise ValueError(f"unknown doctest split {split!r}: choose train or dev")
        default = DEFAULT_DOCTEST_MODULES if split == "train" else DEV_DOCTEST_MODULES
        modules = tuple(modules) if modules else default
        self.name = ("doctest-user" if user_code else "doctest") + (":" + "+".join(modules) if modules != default else "") + (":dev" if split == "dev" else "")
        self.programs: list[ProgramSpec] = []
        self.skipped: dict[str, str] = {}
        finder = doctest.DocTestFinder(exclude_empty=True)
        for name in modules:
            if name in HELD_OUT_MODULES:
                self.skipped[name] = "held out (a realworld evaluation module)"
                continue
            if split == "train" and name in DEV_MODULES:
                self.skipped[name] = "in the dev slice"
                continue
            if split == "dev" and name not in DEV_DOCTEST_MODULES:
                self.skipped[name] = "not in the dev slice"
                continue
            try:
                module = importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 - any import failure just skips the module
                self.skipped[name] = f"cannot import: {exc}"
                continue
            file = str(getattr(module, "__file__", "") or "")
            if not file.endswith(".py"):
                self.skipped[name] = "not a pure-Python module"
                continue
            copy: tuple[tuple[str, str], ...] = ()
            if user_code:
                text = read_source(file)
                if "." in name or file.endswith("__init__.py") or text.count("\n") > max_lines:
                    self.skipped[name] = f"not a single module file of at most {max_lines} lines"
                    continue
                copy = ((f"{name}_impl.py", module_copy(text)),)
            try:
                tests = finder.find(module, name)
            except Exception as exc:  # noqa: BLE001
                self.skipped[name] = f"doctest finder failed: {exc}"
                continue
            for test in sorted(tests, key=lambda t: t.name):
                if not 0 < len(test.examples) <= max_examples:
                    continue
                source = doctest_program(name, test, vars(module))
                if source is None or static_rejection(source):
                    continue
                if user_code:
                    source, _ = user_module_program(name, source)
                    if not any(f"{name}_impl" in line for line in source.split("\n")[:2]):
                        continue  # the examples use nothing of the module: nothing to step into
                kind = "doctest-user" if user_code else "doctest"
                self.programs.append(ProgramSpec(source, kind, f"{kind}:{test.name}", None, frozenset(), copy))
        if not self.programs:
            raise ValueError(f"no doctest programs found in modules {', '.join(modules)}")

    def draw(self, rng: random.Random) -> ProgramSpec:
        return rng.choice(self.programs)


class DrivenModuleSource:
    """Standard-library modules run by a short driver (`tracegen.module_drivers.TRAIN_DRIVERS`), the kind of
    the realworld evaluation built from other modules: half the draws a long file (the module with the
    driver appended), half ``main.py`` importing ``<module>_impl.py`` as user code."""

    name: str = "realworld-train"

    def __init__(self) -> None:
        self.programs: list[ProgramSpec] = []
        for module, driver in sorted(TRAIN_DRIVERS.items()):
            program = build_program(module, driver)
            self.programs.append(ProgramSpec(program.single, "driven", f"driven-long:{module}"))
            self.programs.append(ProgramSpec(program.main, "driven", f"driven-project:{module}", None, frozenset(),
                                             ((program.impl_file, program.impl),)))  # fmt: skip

    def draw(self, rng: random.Random) -> ProgramSpec:
        return rng.choice(self.programs)


@dataclass
class WeightedSources:
    """Several sources, each drawn with probability proportional to its weight."""

    sources: list[ProgramSource]
    weights: list[float]

    def draw(self, rng: random.Random) -> ProgramSpec:
        source = rng.choices(self.sources, weights=self.weights)[0] if len(self.sources) > 1 else self.sources[0]
        return source.draw(rng)

    def describe(self) -> list[dict[str, object]]:
        return [{"name": s.name, "weight": w, "programs": len(getattr(s, "programs", [])) or None} for s, w in zip(self.sources, self.weights)]


def parse_sources(spec: str) -> WeightedSources:
    """Parse ``kind[:arg][@weight]`` items separated by commas: ``synthetic``, ``project`` or
    ``project:LONG_FRACTION`` (multi-file programs), ``long`` (long single files), ``everyday``
    (everyday Python: floats, None, tuples, classes, collections), ``files:PATH``,
    ``doctest`` or ``doctest:mod1+mod2`` (modules joined by ``+``), ``doctest-user[:mods]`` (the same with
    each module copied beside the program as user code), ``doctest::dev`` / ``doctest-user::dev`` (the dev
    slice's modules), ``realworld-train`` (standard-library modules run by a driver, `DrivenModuleSource`),
    ``packages:DIR`` or ``packages:DIR:dev``
    (doctests of the PyPI packages installed in DIR, `tracegen.packages`). Default weight 1."""
    sources: list[ProgramSource] = []
    weights: list[float] = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        item, _, weight_text = item.partition("@")
        try:
            weight = float(weight_text) if weight_text else 1.0
        except ValueError:
            raise ValueError(f"bad weight in source {item}@{weight_text!r}: expected a number") from None
        if weight <= 0:
            raise ValueError(f"source weight must be positive: {item}@{weight_text}")
        kind, _, arg = item.partition(":")
        if kind == "synthetic":
            sources.append(SyntheticSource(float(arg)) if arg else SyntheticSource())
        elif kind == "files":
            if not arg:
                raise ValueError("files source needs a path: files:PATH")
            sources.append(FileSource(arg))
        elif kind in ("doctest", "doctest-user"):
            names, _, split = arg.partition(":")
            sources.append(DoctestSource(tuple(names.split("+")) if names else None, user_code=kind == "doctest-user", split=split or "train"))
        elif kind == "project":
            try:
                fraction = float(arg) if arg else 0.3
            except ValueError:
                raise ValueError(f"project:LONG_FRACTION needs a number between 0 and 1, not {arg!r}") from None
            if not 0 <= fraction <= 1:
                raise ValueError(f"project:LONG_FRACTION must be between 0 and 1, not {arg}")
            sources.append(ProjectSource(fraction))
        elif kind == "long":
            sources.append(LongSource())
        elif kind == "everyday":
            sources.append(EverydaySource())
        elif kind == "realworld-train":
            sources.append(DrivenModuleSource())
        elif kind == "packages":
            folder, _, split = arg.partition(":")
            if not folder:
                raise ValueError("packages source needs the folder `tracegen packages` installed into: packages:DIR[:dev]")
            sources.append(PackageSource(folder, split or "train"))
        else:
            raise ValueError(f"unknown program source {kind!r}; expected synthetic, project[:LONG_FRACTION], long, everyday, "
                             "files:PATH, doctest[:mod+mod][:dev], doctest-user[:mod+mod][:dev], realworld-train or packages:DIR[:dev]")
        weights.append(weight)
    if not sources:
        raise ValueError("no program sources given")
    return WeightedSources(sources, weights)


def iter_programs(sources: WeightedSources, rng: random.Random) -> Iterator[ProgramSpec]:
    """An endless stream of programs drawn from `sources`."""
    while True:
        yield sources.draw(rng)


__all__ = [
    "ProgramSpec", "ProgramSource", "SyntheticSource", "ProjectSource", "LongSource", "EverydaySource", "FileSource", "DoctestSource",
    "DrivenModuleSource",
    "WeightedSources", "parse_sources", "iter_programs", "static_rejection", "doctest_program", "user_module_program",
    "DEFAULT_DOCTEST_MODULES", "DEV_DOCTEST_MODULES", "DEV_MODULES", "HELD_OUT_MODULES",
]
