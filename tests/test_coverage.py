"""Type coverage (`tracegen.coverage`): reprs classified by type, locals read at each stop, and the
share of real code's locals whose type a generator produces."""
from __future__ import annotations

from collections import Counter

import pytest

from tracegen.coverage import coverage, markdown, measure_generator, report, repr_type, stop_locals
from tracegen.fast import record_program


@pytest.mark.parametrize(("text", "kind"), [
    ("1", "int"), ("-2.5", "float"), ("1e-05", "float"), ("-inf", "float"), ("nan", "float"), ("None", "None"),
    ("True", "bool"), ("'a'", "str"), ("b'x'", "bytes"), ("(1+2j)", "complex"), ("[1, 2]", "list"), ("(1,)", "tuple"),
    ("{1: 2}", "dict"), ("set()", "set"), ("{1, 2}", "set"), ("frozenset({1})", "frozenset"), ("[[1], 2]", "nested"),
    ("((1, 2), 3)", "nested"), ("{'a': [1]}", "nested"), ("<__main__.Item object at 0x7f3a>", "object"),
    ("[<__main__.Item object at 0x?>]", "objects in a container"), ("Item(name='a', price=0.5)", "record"),
    ("Counter({'a': 1})", "Counter"), ("defaultdict(<class 'list'>, {'a': [1]})", "defaultdict"),
    ("deque([1], maxlen=3)", "deque"), ("Fraction(1, 3)", "other call"), ("<list_iterator object at 0x1>", "iterator/opaque"),
    ("<function f at 0x1>", "function/class"), ("[1, ...]", "cut"), ("dict_keys([1])", "dict view"), ("range(0, 3)", "range"),
])
def test_repr_type(text: str, kind: str) -> None:
    assert repr_type(text) == kind


def test_stop_locals_reads_the_top_frame_at_each_line_stop() -> None:
    trace = record_program("def f(a):\n    b = a * 0.5\n    return b\n\nx = f(3)\ny = None\n")
    kinds = Counter(repr_type(r) for r in stop_locals(trace))
    assert kinds["float"] >= 2 and kinds["int"] >= 2 and kinds["None"] == 0  # y is never shown: the program ends


def test_coverage_is_the_share_of_real_locals_whose_type_is_produced() -> None:
    real = Counter({"int": 6, "float": 3, "object": 1})
    assert coverage(real, {"int"}) == 0.6
    assert coverage(real, {"int", "float", "object"}) == 1.0
    assert coverage(Counter(), {"int"}) == 0.0


def test_a_generator_sample_and_the_report() -> None:
    gen = measure_generator("everyday", 3, seed=1)
    assert gen.programs == 3 and gen.total > 0 and "float" in (gen.types or {})
    real = measure_generator("synthetic", 2, seed=1)  # stands in for real code here: any tally works
    result = report({"some code": real}, [gen])
    text = markdown(result)
    assert "| coverage of | locals | `everyday` |" in text and "| all real code |" in text
