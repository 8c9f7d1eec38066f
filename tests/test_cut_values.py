"""Predictions cut by the token budget: runaway repetitions found and trimmed, open reprs closed."""
from __future__ import annotations

import io
import json
import tokenize

from hypothesis import given, settings
from hypothesis import strategies as st

from model.decode.cut_values import runaway, trim_runaway, value_closer


def test_a_repeating_tail_is_a_runaway_from_where_it_began() -> None:
    text = '{"t":"\'12' + "0" * 300
    found = runaway(text)
    assert found is not None and found.period == 1 and found.start == text.index("0")
    assert trim_runaway(text) == '{"t":"\'1200'


def test_the_earliest_repetition_counts_when_one_drifts_into_another() -> None:
    text = "{\"d\":\"{'a': 1, '" + "left-" * 40 + "\\\\res" + "-\\\\n" * 20
    found = runaway(text)
    assert found is not None and found.period == 5 and text[found.start:].startswith("left-left-")
    assert trim_runaway(text).endswith("'a': 1, 'left-left-")


def test_short_repeats_and_ordinary_values_are_not_runaways() -> None:
    assert runaway('{"x":"[0, 0, 0, 0, 0, 0, 0, 0]","y":"\'aaaa\'"}') is None
    assert runaway(json.dumps({"s": repr("the quick brown fox jumps over the lazy dog " * 2)})) is None
    assert runaway("") is None
    text = "[1, 2, 3]"
    assert trim_runaway(text) == text


@st.composite
def values(draw: st.DrawFn) -> object:
    leaves = st.one_of(st.integers(), st.text(max_size=6), st.booleans(), st.none(), st.floats(allow_nan=False))
    return draw(st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=3), inner, max_size=3)), max_leaves=10))


def _tokenizes(source: str) -> bool:
    try:
        list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return True


@settings(max_examples=60, deadline=None)
@given(values(), st.data())
def test_value_closer_closes_every_cut_of_a_repr(value: object, data: st.DataObject) -> None:
    """Whatever prefix of a state's value string is cut off, the closer leaves balanced brackets and quotes."""
    head = '{"x":'
    text = head + json.dumps(repr(value))
    cut = data.draw(st.integers(min_value=len(head) + 1, max_value=len(text) - 1))
    closer = value_closer(text[:cut])
    if not closer:  # cut inside an escape: nothing closes it; close_text backs off to a shorter cut
        return
    closed = json.loads(text[:cut] + closer + "}")["x"]
    assert _tokenizes(closed), (closed, closer)


def test_value_closer_examples() -> None:
    assert value_closer('{"x":"[1]"') == ""
    assert value_closer('{"x":"[1, \'a') == "']\""
    assert value_closer('{"x":"\\"ab') == '\\""'  # a repr quoted with " is closed with an escaped quote


def test_a_tail_repeating_inside_one_value_is_seen_as_it_is_decoded() -> None:
    from model.decode.cut_values import repeating_tail, tail_runaway

    text = '{"x":"[3, ' + "0, " * 40
    assert repeating_tail(text.encode())
    assert not repeating_tail(text[:60].encode())  # too short to tell
    found = tail_runaway(text)
    assert found is not None and found.period == 3 and text[found.start:].startswith(", 0, 0")
    assert found.cut(text) == '{"x":"[3, 0, 0'
    # a deep recursion repeats whole frames (quotes, the frame marker): real, not a runaway
    frames = "".join('<f>{"n":"1"}' for _ in range(20))
    assert not repeating_tail(frames.encode()) and tail_runaway(frames) is None
    ordinary = json.dumps({"s": repr("the quick brown fox jumps over the lazy dog, " * 3)})
    assert not repeating_tail(ordinary[:-2].encode())
