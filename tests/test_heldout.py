"""The held-out filter (tracegen/heldout.py): no training program touches an evaluation set. The last
test makes a small real-code dataset with the real recorder and checks every program against every set."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_packages import _install
from tracegen.dataset import SynthConfig, make_dataset, read_shard
from tracegen.shards import shard_rng
from tracegen.dedupe import function_keys, source_key
from tracegen.heldout import EXAMPLES_DIR, HELD_OUT_SEEDS, HeldOut
from tracegen.realworld import module_copy, stdlib_source
from tracegen.sources import ProgramSpec, parse_sources

EVERYDAY = '''TAX = 0.2


def total(rows):
    s = 0.0
    for row in rows:
        s += row["price"] * (1 + TAX)
    return s


print(total([{"price": 1.5}]))
'''


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> HeldOut:
    everyday = tmp_path_factory.mktemp("everyday")
    (everyday / "prices.py").write_text(EVERYDAY)
    return HeldOut(everyday=everyday)


def _spec(source: str, modules: tuple[tuple[str, str], ...] = ()) -> ProgramSpec:
    return ProgramSpec(source, "package", "test", None, frozenset(), modules)


def test_every_evaluation_set_is_held_out(held: HeldOut) -> None:
    crux = json.loads(Path(held.cruxeval.path).read_text().splitlines()[0])["code"]
    assert held.rejection(_spec(crux + "\nprint(f(1))\n")) == "cruxeval function"
    example = (EXAMPLES_DIR / "loops.py").read_text()
    assert held.rejection(_spec("# renamed\n" + example)) == "held out: examples program"
    renamed = EVERYDAY.replace("total", "grand_total").replace("rows", "items")
    assert held.rejection(_spec(renamed)) == "held out: everyday program"
    helper = EVERYDAY.split("\n\nprint")[0].replace("TAX = 0.2\n", "")
    assert held.rejection(_spec("from helpers import total\nx = total([])\n", (("helpers.py", helper),))) == "held out: everyday function"
    copy = module_copy(stdlib_source("textwrap"))
    assert held.rejection(_spec("import tw\nx = tw.dedent(' a')\n", (("tw.py", copy),))) == "held out: realworld module"
    getopt_copy = module_copy(stdlib_source("getopt"))
    assert held.rejection(_spec("import go\nx = go.getopt([], '')\n", (("go.py", getopt_copy),))) == "held out: realworld dev module"
    assert held.rejection(_spec("x = 1\ny = [x, 2.5, None]\n")) is None


def test_the_make_results_synthetic_programs_are_held_out(held: HeldOut) -> None:
    sources = parse_sources("synthetic")
    rng = shard_rng(HELD_OUT_SEEDS[0], 0)
    first = sources.draw(rng)
    assert held.rejection(first) == "held out: synthetic seeds program"
    # the evaluation sets themselves are made with only the CruxEval guard, as before
    assert HeldOut.for_dataset(HELD_OUT_SEEDS[0]).rejection(first) is None
    assert HeldOut.for_dataset(HELD_OUT_SEEDS[0]).sets == []


@pytest.mark.slow
def test_a_real_code_dataset_overlaps_no_evaluation_set(tmp_path: Path, held: HeldOut) -> None:
    _install(tmp_path / "pkgs")
    config = SynthConfig(count=24, seed=3, sources=f"packages:{tmp_path / 'pkgs'}@2,doctest-user:statistics@1,doctest@1,synthetic@1",
                         per_program=2, shard_size=24)
    manifest = make_dataset(config, tmp_path / "out", show_progress=False)
    assert manifest["trajectories"] == 24
    assert {"package", "doctest-user"} <= set(manifest["kinds"])
    evaluated = HeldOut()  # the repository's own sets (everyday/ when present)
    sets = held.sets + evaluated.sets
    for traj in read_shard(tmp_path / "out" / "shard-00000.jsonl"):
        texts = [traj.program, *traj.modules.values()]
        keys = {source_key(t) for t in texts} | {source_key("\n".join(texts))}
        functions = set().union(*(function_keys(t) for t in texts))
        for s in sets:
            assert keys.isdisjoint(s.programs | s.modules), (s.name, traj.meta["origin"])
            assert functions.isdisjoint(s.functions), (s.name, traj.meta["origin"])
        assert functions.isdisjoint(held.cruxeval.keys)
        assert not any(path.removesuffix("_impl.py") in ("textwrap", "heapq", "bisect") for path in traj.modules)
