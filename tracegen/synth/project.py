"""Multi-file programs and long modules: the model must find the code it needs.

`generate_project(rng)` draws a *project*: ``main.py`` plus 1-2 user modules (sometimes inside a
package with an ``__init__.py``). It is a `multi` program (tracegen/synth/multi.py) whose
definitions move into the modules: main imports them (``from helpers import fact, Stack`` or
``import helpers`` with qualified uses) and keeps the module-level code, so stepping in goes to
another file, an exception raised in a module is caught in main, a class lives elsewhere. Each
module has a little module-level code of its own (a constant, a list built at import).

With `long_modules`, every module is padded with many functions that are never called (CruxEval-
style functions renamed, 150-600 lines per module): the model must find the few called ones.
`generate_long(rng)` is the single-file variant: one long program whose few called functions sit
among many unused ones.

A `SynthProject` holds the main source and ``{relative path: source}`` of the modules; nothing
here runs code.
"""
from __future__ import annotations

import ast
import io
import random
import tokenize
from dataclasses import dataclass, field

from tracegen.synth.crux import generate_function
from tracegen.synth.multi import Names, Part, choose_parts

MODULE_NAMES = ("helpers", "shapes", "utils", "store", "mathx", "tools", "core", "logic", "models", "ops")
PACKAGE_NAMES = ("lib", "app", "pkg", "project", "engine")
MAIN = "main.py"


@dataclass(frozen=True)
class SynthProject:
    """A generated program with its user modules: main's source, ``{relative path: source}``, its
    kind (``project`` or ``long``) and the features it exercises."""

    source: str
    modules: dict[str, str] = field(default_factory=dict)
    kind: str = "project"
    tags: frozenset[str] = field(default_factory=frozenset)

    @property
    def lines(self) -> int:
        return sum(len(t.splitlines()) for t in (self.source, *self.modules.values()))


def _parts(rng: random.Random, names: Names, uncaught_rate: float = 0.1) -> list[Part]:
    parts = choose_parts(rng, names, uncaught_rate)
    return [p for p in parts if p.defs] + [p for p in parts if not p.defs]


def _defined(source: str) -> list[str]:
    """Top-level function and class names of a piece of source."""
    tree = ast.parse(source)
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _filler(rng: random.Random, names: Names, lines: int) -> list[str]:
    """Functions never called, about `lines` lines in all (CruxEval-style functions, renamed)."""
    out: list[str] = []
    total = 0
    while total < lines:
        fn = generate_function(rng)
        name = names.get("unused", "spare", "extra", "other", "legacy", "old", "alt", "backup", "variant", "draft")
        text = fn.function.replace("def f(", f"def {name}(", 1)
        out.append(text)
        total += len(text.splitlines()) + 2
    return out


def _module_prelude(rng: random.Random, names: Names) -> list[str]:
    """A little module-level code run at import: a constant, sometimes a list built in a loop."""
    const = names.get("LIMIT", "SCALE", "BASE", "FACTOR", "OFFSET").upper()
    lines = [f"{const} = {rng.randint(1, 9)}"]
    if rng.random() < 0.5:
        table = names.get("TABLE", "CACHE", "SEEDS").upper()
        lines += [f"{table} = []", f"for _i in range({rng.randint(2, 4)}):", f"    {table}.append(_i * {const})"]
    return lines


def generate_project(rng: random.Random, *, long_modules: bool = False) -> SynthProject:
    """main.py importing 1-2 user modules (sometimes in a package) that hold the definitions."""
    names = Names(rng)
    names.taken.update(MODULE_NAMES + PACKAGE_NAMES)
    parts = _parts(rng, names)
    with_defs = [p for p in parts if p.defs] or parts
    n_modules = 1 if len(with_defs) == 1 or rng.random() < 0.4 else 2
    module_names = rng.sample(MODULE_NAMES, n_modules)
    package = rng.choice(PACKAGE_NAMES) if rng.random() < 0.3 else None
    groups: list[list[Part]] = [[] for _ in range(n_modules)]
    for k, part in enumerate(p for p in parts if p.defs):
        groups[k % n_modules].append(part)
    modules: dict[str, str] = {}
    imports: list[str] = []
    rewrites: list[tuple[str, str]] = []
    features = {f for p in parts for f in p.features} | {"modules"}
    for name, group in zip(module_names, groups):
        defs = [d for p in group for d in p.defs]
        if not defs:
            continue
        body = _module_prelude(rng, names) + [""] + ["\n\n".join(defs)]
        if long_modules:
            filler = _filler(rng, names, rng.randint(150, 600))
            cut = rng.randint(0, len(filler))
            body = _module_prelude(rng, names) + ["", "\n\n\n".join(filler[:cut] + defs + filler[cut:])]
            features.add("long")
        text = "\n".join(body).rstrip() + "\n"
        dotted = f"{package}.{name}" if package else name
        rel = f"{package}/{name}.py" if package else f"{name}.py"
        modules[rel] = text
        defined = _defined("\n\n".join(defs))
        if rng.random() < 0.5:
            imports.append(f"from {dotted} import {', '.join(defined)}")
        else:
            alias = name if not package or rng.random() < 0.5 else f"{name}_mod"
            imports.append(f"import {dotted}" + (f" as {alias}" if package else ""))
            qualifier = alias if package else dotted
            rewrites += [(d, f"{qualifier}.{d}") for d in defined]
            features.add("qualified")
    if package:
        init = f"{package}/__init__.py"
        modules[init] = rng.choice(["", f"VERSION = {rng.randint(1, 5)}\n", "NAMES = []\nNAMES.append('x')\n"])
        features.add("package")
    main_lines = [line for p in parts for line in p.main]
    main = "\n".join(imports) + "\n\n" + "\n".join(_qualify(line, rewrites) for line in main_lines) + "\n"
    if any("print(" in line for line in main_lines):
        features.add("print")
    return SynthProject(main, modules, "long" if long_modules else "project", frozenset(features))


def _qualify(line: str, rewrites: list[tuple[str, str]]) -> str:
    """Rewrite uses of imported names as module attributes (``fact(3)`` -> ``helpers.fact(3)``), token by
    token (an attribute ``x.fact`` and text inside strings stay as they are)."""
    if not rewrites:
        return line
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line
    return _replace_names(line, tokens, dict(rewrites))


def _replace_names(line: str, tokens: list[tokenize.TokenInfo], mapping: dict[str, str]) -> str:
    """The line with each mapped NAME token replaced in place (columns kept, so spacing is unchanged)."""
    out = []
    last = 0
    previous = None
    for tok in tokens:
        if tok.start[0] != 1:
            break
        if tok.type == tokenize.NAME and tok.string in mapping and not (previous is not None and previous.string == "."):
            start, end = tok.start[1], tok.end[1]
            out.append(line[last:start])
            out.append(mapping[tok.string])
            last = end
        previous = tok
    out.append(line[last:])
    return "".join(out)


def generate_long(rng: random.Random) -> SynthProject:
    """One long single-file program: a `multi` program's definitions among 150-600 lines of unused functions."""
    names = Names(rng)
    parts = _parts(rng, names)
    defs = [d for p in parts for d in p.defs]
    filler = _filler(rng, names, rng.randint(150, 600))
    pieces = filler + defs
    rng.shuffle(pieces)
    main = [line for p in parts for line in p.main]
    source = "\n\n\n".join(pieces) + "\n\n\n" + "\n".join(main) + "\n"
    features = {f for p in parts for f in p.features} | {"long"}
    return SynthProject(source, {}, "long", frozenset(features))
