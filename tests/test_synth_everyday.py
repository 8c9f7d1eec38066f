"""The everyday generator (`tracegen.synth.everyday`): determinism by seed, 10-40 lines, every
feature across a sample, varied programs, and recorded programs that pass the filter (user objects
shown as debugpy shows them) and give trajectories."""
from __future__ import annotations

import ast
import random
from collections import Counter

from protocol.debugger import normalize_repr
from tracegen.dataset import record_filtered
from tracegen.dedupe import normalize_source
from tracegen.sampling import sample_trajectories
from tracegen.sources import EverydaySource, ProgramSpec, parse_sources
from tracegen.synth.everyday import MAX_LINES, MIN_LINES, generate_everyday
from tracegen.synth.filter import FilterPolicy, rejection

FEATURES = {
    "float", "none", "tuple", "unpack", "star_unpack", "set", "nested", "class", "method", "object", "dataclass",
    "namedtuple", "fstring", "format", "comprehension", "enumerate", "zip", "sorted_key", "min_max", "try", "finally",
    "raise", "math", "inf", "counter", "defaultdict", "deque", "helpers", "constant", "main", "parse", "str_methods", "bool",
}


def _programs(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [generate_everyday(rng).source for _ in range(n)]


def test_same_seed_same_programs_other_seed_other_programs() -> None:
    assert _programs(4, 30) == _programs(4, 30)
    assert _programs(4, 30) != _programs(5, 30)
    random.seed(1)
    first = _programs(9, 10)
    random.seed(2)
    assert _programs(9, 10) == first  # no global random state


def test_programs_parse_and_have_10_to_40_lines() -> None:
    for source in _programs(11, 200):
        ast.parse(source)
        assert MIN_LINES <= source.count("\n") <= MAX_LINES, source


def test_every_feature_appears_across_a_sample() -> None:
    rng = random.Random(3)
    seen: Counter[str] = Counter()
    for _ in range(400):
        seen.update(generate_everyday(rng).features)
    missing = FEATURES - set(seen)
    assert not missing, f"never generated: {sorted(missing)}"


def test_programs_are_varied_not_renamed_templates() -> None:
    sources = _programs(6, 300)
    shapes = {normalize_source(s) for s in sources}
    assert len(shapes) == len(sources)  # distinct even with every bound name made canonical
    openings = Counter(s.split("\n", 3)[0] for s in sources)
    assert openings.most_common(1)[0][1] < 0.25 * len(sources)


def test_recorded_programs_pass_the_filter_and_give_trajectories() -> None:
    source = EverydaySource()
    rng = random.Random(21)
    policy = FilterPolicy()
    kept, objects, floats = 0, 0, 0
    for _ in range(24):
        spec = source.draw(rng)
        assert spec.kind == "everyday" and spec.synthetic
        trace, reason = record_filtered(spec, policy)
        assert trace is not None, f"{reason}\n{spec.source}"
        kept += 1
        reprs = [v for table in trace.locals_table for v in table.values()]
        objects += any(normalize_repr(v).endswith(" object at 0x?>") and v.startswith("<__main__.") for v in reprs)
        floats += any("." in v and v.replace(".", "", 1).lstrip("-").isdigit() for v in reprs)
        assert sample_trajectories(trace, random.Random(0), 2, 16)
    assert kept == 24 and objects >= 1 and floats >= 12


def test_object_reprs_are_kept_for_everyday_and_still_refused_elsewhere() -> None:
    program = "class Box:\n    def __init__(self, n):\n        self.n = n\n\nb = Box(3)\nm = b.n + 1\nprint(m)\n"
    trace, reason = record_filtered(ProgramSpec(program, "everyday", "t"), FilterPolicy())
    assert trace is not None, reason
    assert rejection(trace, "multi") == "default object repr"


def test_parse_sources_knows_everyday() -> None:
    sources = parse_sources("synthetic@4,everyday@4")
    assert [s.name for s in sources.sources] == ["synthetic", "everyday"]
    rng = random.Random(0)
    kinds = {sources.draw(rng).kind for _ in range(40)}
    assert "everyday" in kinds
