"""Every evaluation set, held out of training data: a program that matches one is never recorded.

The evaluation sets (see docs/data.md):

- CruxEval (``tracegen/cruxeval/cruxeval.jsonl`` or ``$CRUXEVAL_PATH``): a program holding one of its
  functions (normalised, `tracegen.dedupe.function_keys`) is dropped;
- the realworld set (`tracegen.realworld.DRIVERS`): its standard-library modules are never training user
  code, by name (`tracegen.sources.HELD_OUT_MODULES`, which the doctest sources refuse) and by normalised source (a module copy,
  vendored or not, of one of them is dropped), and its driver programs are held out; the same for its dev slice
  (`tracegen.module_drivers.DEV_DRIVERS`), which is not evaluation but must not be trained on either;
- the everyday set (``tracegen/everyday/**/*.py``, picked up when present) and ``examples/``: whole
  programs by normalised source, and each of their functions;
- the synthetic seeds that ``make results`` evaluates on (`HELD_OUT_SEEDS`: next-state and fidelity on
  seed 12345): the first `SYNTHETIC_DRAWS` programs drawn for shard 0 of those seeds (more than those sets
  use), by normalised source.

`HeldOut.rejection(spec)` says why a program is held out (a counter key for the dataset's stats) or None.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tracegen.dedupe import CruxEvalGuard, function_keys, source_key
from tracegen.module_drivers import DEV_DRIVERS
from tracegen.realworld import DRIVERS, build_program, module_copy, stdlib_source
from tracegen.shards import shard_rng
from tracegen.sources import ProgramSpec, parse_sources

REPO = Path(__file__).resolve().parent.parent
EVERYDAY_DIR = Path(__file__).resolve().parent / "everyday"
EXAMPLES_DIR = REPO / "examples"
HELD_OUT_SEEDS = (12345,)  # `make results`: tracegen synth --seed 12345 (heldout-synth, heldout-next-state)
SYNTHETIC_DRAWS = 400  # those sets keep 60 and 50 programs of shard 0; this many draws cover them with room


@dataclass
class EvalSet:
    """One evaluation set's normalised programs, functions and modules."""

    name: str
    programs: set[str] = field(default_factory=set)  # source keys of whole programs
    functions: set[str] = field(default_factory=set)  # keys of single functions
    modules: set[str] = field(default_factory=set)  # source keys of module files


def python_files(folder: Path) -> list[Path]:
    """The ``.py`` files under `folder` (none if it does not exist), sorted."""
    return sorted(folder.rglob("*.py")) if folder.is_dir() else []


def program_set(name: str, folder: Path) -> EvalSet:
    """Programs written as files (examples/, the everyday set): their keys and their functions' keys."""
    found = EvalSet(name)
    for path in python_files(folder):
        text = path.read_text(encoding="utf-8", errors="replace")
        found.programs.add(source_key(text))
        found.functions |= function_keys(text)
    return found


def realworld_set(name: str = "realworld", drivers: Mapping[str, str] = DRIVERS) -> EvalSet:
    """The realworld modules (as read, and as the set copies them) and the programs built from them."""
    found = EvalSet(name)
    for module, driver in sorted(drivers.items()):
        try:
            source = stdlib_source(module)
        except OSError:
            continue
        found.modules |= {source_key(source), source_key(module_copy(source))}
        program = build_program(module, driver)
        found.programs |= {source_key(program.single), source_key(program.main), source_key(driver)}
    return found


@lru_cache(maxsize=8)
def synthetic_keys(seed: int, draws: int = SYNTHETIC_DRAWS) -> frozenset[str]:
    """Keys of the first `draws` programs that ``tracegen synth --seed SEED`` (default sources) draws for
    shard 0, in the order `tracegen.dataset.build_shard` draws them. Cached: it is a pure function."""
    sources = parse_sources("synthetic")
    rng = shard_rng(seed, 0)
    keys = set()
    for _ in range(draws):
        keys.add(source_key(sources.draw(rng).all_source))
        rng.getrandbits(64)  # the program seed build_shard draws after each program
    return frozenset(keys)


class HeldOut:
    """All evaluation sets; `rejection(spec)` says whether a training program touches one."""

    def __init__(self, cruxeval: Path | str | None = None, everyday: Path = EVERYDAY_DIR, examples: Path = EXAMPLES_DIR,
                 seeds: tuple[int, ...] = HELD_OUT_SEEDS, only_cruxeval: bool = False) -> None:
        self.cruxeval = CruxEvalGuard(cruxeval)
        self.sets: list[EvalSet] = []
        if only_cruxeval:
            return
        self.sets = [realworld_set(), realworld_set("realworld dev", DEV_DRIVERS), program_set("everyday", everyday),
                     program_set("examples", examples)]
        synthetic = EvalSet("synthetic seeds")
        for seed in seeds:
            synthetic.programs |= synthetic_keys(seed)
        self.sets.append(synthetic)

    @classmethod
    def for_dataset(cls, seed: int, cruxeval: Path | str | None = None) -> HeldOut:
        """The filter for ``tracegen synth --seed SEED``: everything for training data; for a held-out seed
        (that dataset *is* an evaluation set) only CruxEval, so the evaluation sets stay as they were made."""
        return cls(cruxeval, only_cruxeval=seed in HELD_OUT_SEEDS)

    def describe(self) -> dict[str, dict[str, int]]:
        """How much each set holds (for manifests and reports)."""
        out = {s.name: {"programs": len(s.programs), "functions": len(s.functions), "modules": len(s.modules)} for s in self.sets}
        out["cruxeval"] = {"programs": self.cruxeval.count, "functions": len(self.cruxeval.keys), "modules": 0}
        return out

    def rejection(self, spec: ProgramSpec) -> str | None:
        """``cruxeval function``, ``held out: <set> program|function|module``, or None."""
        if self.cruxeval.contains(spec.all_source):
            return "cruxeval function"
        program = source_key(spec.all_source)
        sources = [spec.source, *(text for _, text in spec.modules)]
        functions: set[str] = set()
        for text in sources:
            functions |= function_keys(text)
        module_keys = {source_key(text) for _, text in spec.modules}
        for held in self.sets:
            if program in held.programs or source_key(spec.source) in held.programs:
                return f"held out: {held.name} program"
            if not module_keys.isdisjoint(held.modules | held.programs):
                return f"held out: {held.name} module"
            if not functions.isdisjoint(held.functions):
                return f"held out: {held.name} function"
        return None


__all__ = ["HeldOut", "EvalSet", "HELD_OUT_SEEDS", "SYNTHETIC_DRAWS", "synthetic_keys", "program_set", "realworld_set"]
