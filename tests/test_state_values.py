"""The one scanner of a state text's values (`model.prompt.state_values`): every local's and the return
value's JSON string, nothing else (not exception messages, stdout, file names), whole or cut off."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.decode.confidence import layout
from model.decode.repr_check import values_problem
from model.prompt import language as L
from model.prompt.state_values import scan_locals, value_strings
from model.prompt.value_chars import content_spans
from protocol.debugger import ExceptionInfo, Frame, ReturnValue, State, StopReason, normalize_repr
from tests.test_language import states

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # examples: the profile's (tests/conftest.py)


def _found(text: str, partial: bool = False) -> list[tuple[str | None, str]]:
    out = []
    for value in value_strings(text, partial=partial):
        start, end = value.body
        out.append((value.name(text), text[start:end]))
    return out


def test_locals_of_every_frame_and_the_return_value_only() -> None:
    state = State(
        reason=StopReason.STEP,
        frames=[Frame(name="f", line=3, locals={"x": "'a:\"b'", "y": "[1, 2]"}),
                Frame(name="<module>", line=9, locals={"n": "2"}, file="lib/m.py")],
        return_value=ReturnValue(name="g", value="{'k': 1}"),
        exception=ExceptionInfo(type="ValueError", message="'not a value'"),
        stdout='"printed"\n',
    )  # fmt: skip
    text = L.render_state(state)
    found = [(name, json.loads(f'"{body}"')) for name, body in _found(text)]
    assert found == [("n", "2"), ("x", "'a:\"b'"), ("y", "[1, 2]"), (None, "{'k': 1}")]  # outermost frame first


def test_a_delta_object_and_its_rest_marker() -> None:
    text = '<|reason_step|><|frame_sep|><module><|line_sep|>4{"a":"1",..}<|state_end|>'
    brace = text.index("{")
    scanned = scan_locals(text, brace)
    assert scanned.end == text.index("}") + 1 and scanned.rest == (text.index(".."), text.index("..") + 2)
    assert [v.name(text) for v in scanned.values] == ["a"]
    assert scan_locals('{..}', 0).rest == (1, 3) and scan_locals("{}", 0).end == 2


def test_cut_off_and_malformed_objects_give_what_could_be_read() -> None:
    text = '<|reason_step|><|frame_sep|><module><|line_sep|>4{"a":"1","b":"[1, '
    assert _found(text) == [("a", "1")]  # the open value only when asked for
    assert _found(text, partial=True) == [("a", "1"), ("b", "[1, ")]
    assert scan_locals('{"a":"1" "b":"2"}', 0).end is None  # pairs are separated by commas
    assert scan_locals('{"a":1}', 0).values == [] and scan_locals('{"a":1}', 0).end is None  # a value is a JSON string
    assert _found('<|return_sep|>f"\'ok') == [] and _found('<|return_sep|>f"\'ok', partial=True) == [(None, "'ok")]
    assert _found('<|line_sep|>3 x = "a"') == []  # a listing line, not locals


@SETTINGS
@given(states())
def test_every_rendered_value_is_found_once(state: State) -> None:
    text = L.render_state(state)
    expected = [(name, normalize_repr(value)) for frame in reversed(state.frames) for name, value in frame.locals.items()]
    if state.return_value is not None:
        expected.append((None, normalize_repr(state.return_value.value)))
    assert [(name, json.loads(f'"{body}"')) for name, body in _found(text)] == expected


@SETTINGS
@given(states(), st.data())
def test_a_prefix_gives_the_values_so_far_the_last_one_open(state: State, data: st.DataObject) -> None:
    text = L.render_state(state)
    whole = _found(text)
    cut = data.draw(st.integers(0, len(text)))
    found = _found(text[:cut], partial=True)
    assert len(found) <= len(whole)
    for (name, body), (whole_name, whole_body) in zip(found, whole):
        assert name == whole_name and whole_body.startswith(body)


def test_the_decoding_rules_and_the_tokenization_read_values_through_it() -> None:
    text = '<|reason_step|><|frame_sep|><module><|line_sep|>4{"s":"\'hi\'","t":"[1,,]"}<|return_sep|>f"\'ok\'"<|state_end|>'
    assert values_problem(text) is not None  # "[1,,]" is no repr
    assert values_problem(text.replace("[1,,]", "[1]")) is None
    spans = [text[a:b] for a, b in content_spans(text)]
    assert spans == ["hi", "ok"]  # string contents inside values: not the exception's, not a name
    shape = layout(text)
    assert list(shape.frames[0].values) == ["s", "t"] and shape.return_value is not None
