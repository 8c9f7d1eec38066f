"""The everyday evaluation set (tracegen/everyday/): 24+ hand-written programs of 10-40 lines, each
recorded by the fast recorder to a normal end, with the values users' code holds (floats, None,
tuples, user objects, dataclasses, collections)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from protocol.debugger import Ending, normalize_repr
from tracegen.fast import record_program
from tracegen.synth.filter import FilterPolicy, count_stops, rejection

EVERYDAY = Path(__file__).resolve().parent.parent / "tracegen" / "everyday"
PROGRAMS = sorted(EVERYDAY.glob("*.py"))


def test_the_set_has_24_programs_of_10_to_40_lines() -> None:
    assert len(PROGRAMS) >= 24
    for path in PROGRAMS:
        text = path.read_text(encoding="utf-8")
        ast.parse(text)
        assert 10 <= text.count("\n") <= 40, path.name


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_each_program_records_and_ends_normally(path: Path) -> None:
    trace = record_program(path=path)
    assert trace.end.ending is Ending.NORMAL, (path.name, trace.end)
    assert rejection(trace, "everyday", FilterPolicy()) is None
    assert count_stops(trace) >= 8


def test_the_set_holds_everyday_values() -> None:
    reprs = set()
    for path in PROGRAMS:
        trace = record_program(path=path)
        reprs |= {normalize_repr(v) for table in trace.locals_table for v in table.values()}
    assert any(r.startswith("<__main__.") and r.endswith(" object at 0x?>") for r in reprs)  # user objects
    for start in ("None", "(", "{", "Counter(", "deque(", "defaultdict(", "Point(", "City("):
        assert any(r.startswith(start) for r in reprs), start
    assert any(re.search(r"\d\.\d{13,}", r) for r in reprs)  # a float's real repr, 0.30000000000000004-like
    assert any(re.fullmatch(r"\d(\.\d+)?e-\d\d", r) for r in reprs)  # 1e-05
