"""A comprehension frame's ``.0``: its iterator's kind, read from the source and the shown values (model.static.comprehension_entry)."""
from __future__ import annotations

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.comprehension_entry import comprehension_entries
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.recorded import recorded_programs
from tracegen.fast import record_program, replay_to_end

PROGRAM = """\
samples = [3, 8, 1]
word = "abc"
seen = {"a": 1}
big = [x for x in samples if x > 2]
joined = "".join(c for c in word)
pairs = {k: v for k, v in seen.items()}
folded = [x for x in [3, 8]]
zipped = [a for a, b in zip(samples, word)]


def scale(values, k):
    return [v * k for v in values]


scaled = scale(samples, 2)
"""


def _at(line: int, name: str = "<module>", **shown: str) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name=name, line=line, locals=dict(shown))])


def test_the_iterator_kind_of_each_comprehension() -> None:
    shown = {"samples": "[3, 8, 1]", "word": "'abc'", "seen": "{'a': 1}"}
    expect = {4: ("<listcomp>", "<list_iterator object at 0x?>", True), 5: ("<genexpr>", "<str_ascii_iterator object at 0x?>", False),
              6: ("<dictcomp>", "<dict_itemiterator object at 0x?>", True), 7: ("<listcomp>", "<tuple_iterator object at 0x?>", True),
              8: ("<listcomp>", "<zip object at 0x?>", True)}  # fmt: skip
    for line, (name, text, complete) in expect.items():
        known = comprehension_entries(PROGRAM, _at(line, **shown))[name]
        assert known.values == {".0": text} and known.complete is complete, line
    closure = comprehension_entries(PROGRAM, State(reason=StopReason.STEP, frames=[
        Frame(name="scale", line=12, locals={"values": "[3, 8, 1]", "k": "2"}), Frame(name="<module>", line=15)]))["<listcomp>"]
    assert closure.values == {".0": "<list_iterator object at 0x?>"} and not closure.complete  # k is a free variable: shown too
    assert comprehension_entries(PROGRAM, _at(4, samples="<object at 0x?>")) == {}
    assert comprehension_entries(PROGRAM + "zip = list\n", _at(8)) == {}  # zip rebound


def test_the_step_into_writes_it() -> None:
    previous = _at(4, samples="[3, 8, 1]", word="'abc'")
    constraint = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.STEP_INTO), reprs=True)
    head = "<|reason_step|><|frame_sep|><module><|line_sep|>4{..}<|call_sep|><listcomp><|line_sep|>4"
    assert constraint.complete(head + '{".0":"<list_iterator object at 0x?>"}')
    assert not constraint.allows(head + '{".0":"<tuple')


def test_every_recorded_entry_is_allowed() -> None:
    checked = 0
    for source in [PROGRAM, *(s for s, _ in recorded_programs(40, 14))]:
        states = [lang.canonical_state(s, source) for s in replay_to_end(record_program(source), [Action(kind=ActionKind.STEP_INTO)] * 150)]
        for previous, state in zip(states, states[1:]):
            if previous.finished or state.finished or len(state.frames) != len(previous.frames) + 1:
                continue
            known = comprehension_entries(source, previous).get(state.frames[0].name)
            if known is None:
                continue
            assert all(state.frames[0].locals.get(k) == v for k, v in known.values.items()), (source, state.frames[0])
            if known.complete:
                assert known.locals_text() == lang.json_locals(state.frames[0].locals, delta=False)
            checked += 1
    assert checked >= 5
