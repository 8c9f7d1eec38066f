"""Unit tests of the adapter's pure parts: repr parsing, evaluate paths, executable lines, state comparison."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.breakpoints import executable_lines
from protocol.compare import ComparisonSummary, compare_states
from adapter.evaluate import EvaluateError, evaluate_path, parse_path
from adapter.variables import VariableStore, parse_repr
from protocol.debugger import ExceptionInfo, Frame, ReturnValue, State, StopReason


def _state(**top_locals: str) -> State:
    return State(reason=StopReason.STEP, frames=[
        Frame(name="f", line=3, locals=dict(top_locals)),
        Frame(name="<module>", line=9, locals={"g": "[10, 20]", "cfg": "{'a': {'b': (1, 2)}}"}),
    ])


def test_parse_repr_containers():
    assert [c.name for c in parse_repr("[1, [2, 3]]").children] == ["0", "1"]
    d = parse_repr("{'a': (1, 2), 3: 'x'}")
    assert d.mapping and [(c.name, c.value) for c in d.children] == [("'a'", "(1, 2)"), ("3", "'x'")]
    p = parse_repr("Point(x=1, y='é')")
    assert p.type_name == "Point" and [(c.name, c.value, c.accessor) for c in p.children] == [("x", "1", ".x"), ("y", "'é'", ".y")]
    assert [c.value for c in parse_repr("deque([1, 2])").children] == ["1", "2"]
    assert parse_repr("Counter({'a': 2})").mapping


@pytest.mark.parametrize("text", ["<foo.Bar object at 0x?>", "'[1, 2]'", "42", "[1, 2", "defaultdict(<class 'list'>, {})", "x" * 300_000, ""])
def test_parse_repr_leaves(text):
    assert not parse_repr(text).expandable


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.floats(allow_nan=False),
                    lambda kids: st.lists(kids, max_size=4) | st.tuples(kids, kids) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
                    max_leaves=12))
@settings(max_examples=150, deadline=None)
def test_parse_repr_children_are_reprs_of_the_parts(value):
    parsed = parse_repr(repr(value))
    if isinstance(value, (list, tuple)):
        assert [c.value for c in parsed.children] == [repr(v) for v in value]
    elif isinstance(value, dict):
        assert [(c.name, c.value) for c in parsed.children] == [(repr(k), repr(v)) for k, v in value.items()]
    else:
        assert not parsed.expandable


def test_variable_store_expands_lazily_with_evaluate_names():
    store = VariableStore()
    ref = store.add_scope([("d", "{'k': [1, P(x=5)]}", "d")], frame_index=0)
    (d,) = store.variables(ref)
    (k,) = store.variables(d["variablesReference"])
    assert k["evaluateName"] == "d['k']" and k["indexedVariables"] == 2
    items = store.variables(k["variablesReference"])
    assert items[1]["value"] == "P(x=5)" and items[1]["evaluateName"] == "d['k'][1]"
    assert store.variables(k["variablesReference"], start=1, count=1) == [items[1]]
    assert store.frame_of(ref) == 0 and store.frame_of(d["variablesReference"]) is None
    store.clear()
    assert ref not in store


def test_evaluate_paths():
    s = _state(d="{'k': [1, Point(x=5, y=6)], 2: 'two'}", n="3")
    assert evaluate_path(s, "n") == "3"
    assert evaluate_path(s, "d['k'][1].x") == "5"
    assert evaluate_path(s, "d['k'][-1]") == "Point(x=5, y=6)"
    assert evaluate_path(s, "d[2]") == "'two'"
    assert evaluate_path(s, "g[1]") == "20"  # a global, seen from a function frame
    assert evaluate_path(s, "cfg['a']['b'][0]") == "1"
    with pytest.raises(EvaluateError, match="not defined"):
        evaluate_path(s, "n", frame_index=1)  # the module frame does not see f's locals


@pytest.mark.parametrize("expression, message", [
    ("len(d)", "never runs code"), ("__import__('os').system('true')", "never runs code"), ("n + 1", "never runs code"),
    ("zz", "not defined"), ("d['nope']", "not in"), ("d['k'][7]", "out of range"), ("n.real", "no parts"),
    ("d[k]", "literal"), ("", "empty"), ("x = 1", "not a valid expression"),
])
def test_evaluate_refuses_everything_else(expression, message):
    with pytest.raises(EvaluateError, match=message):
        evaluate_path(_state(d="{'k': [1, 2]}", n="3"), expression)


def test_parse_path():
    assert parse_path("a.b[0]['k']")[0] == "a"
    assert len(parse_path("a.b[0]['k']")[1]) == 3


def test_executable_lines():
    source = 'def f(a):\n    """doc"""\n\n    # note\n    return a\n\nx = [\n    1,\n]\n'
    lines = executable_lines(source)
    assert {1, 5, 7}.issubset(lines)
    assert 3 not in lines and 4 not in lines
    assert executable_lines("def (:\n") == set()


def test_compare_states_fields_and_summary():
    real = State(reason=StopReason.STEP, frames=[Frame(name="f", line=2, locals={"a": "1", "it": "<it at 0x7f00>"}), Frame(name="<module>", line=5)],
                 return_value=ReturnValue(name="g", value="3"), stdout="hi\n")
    same = real.model_copy(deep=True)
    same.frames[0].locals["it"] = "<it at 0x1234>"  # addresses do not count
    assert compare_states(same, real).matched
    wrong = real.model_copy(deep=True)
    wrong.frames[0].locals["a"] = "2"
    wrong.frames[0].line = 3
    wrong.stdout = ""
    wrong.exception = ExceptionInfo(type="ValueError", message="x")
    diff = compare_states(wrong, real)
    assert diff.mismatched_fields() == ["location", "locals", "exception", "stdout"]
    assert diff.wrong_variables == ("a",) and diff.top_variables == 2
    summary = ComparisonSummary()
    for predicted in (same, wrong, wrong):
        summary.add(compare_states(predicted, real))
    data = summary.to_json()
    assert (data["stops"], data["matched"], data["firstDivergence"]) == (3, 1, 1)
    assert data["fieldMismatches"]["locals"] == 2 and data["fieldMismatches"]["reason"] == 0
    assert "1/3 stops matched" in summary.describe() and "stop 2" in summary.describe()
