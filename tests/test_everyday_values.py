"""The model can write every value of everyday code: each repr in recorded everyday programs (the
generator's and the everyday set's) is accepted by the decoding grammar (`model.decode.repr_grammar`), a state
holding it renders and parses back (`model.prompt.language`), and the shipped tokenizer encodes the rendered
text without loss."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from model.prompt.language import canonical_state, parse_state, render_state
from model.paths import DEFAULT_CHECKPOINT
from model.decode.repr_grammar import grammar_problem
from tracegen.dataset import record_filtered
from tracegen.fast import record_program
from tracegen.sampling import sample_trajectories
from tracegen.sources import EverydaySource
from tracegen.synth.filter import FilterPolicy

EVERYDAY = Path(__file__).resolve().parent.parent / "tracegen" / "everyday"


def _traces():  # noqa: ANN202 - a list of (program, ProgramTrace)
    source, rng = EverydaySource(), random.Random(8)
    traces = []
    for _ in range(10):
        spec = source.draw(rng)
        trace, reason = record_filtered(spec, FilterPolicy())
        assert trace is not None, reason
        traces.append(trace)
    traces += [record_program(path=p) for p in sorted(EVERYDAY.glob("*.py"))]
    return traces


def test_every_everyday_value_is_grammatical_renders_parses_and_tokenizes() -> None:
    if not (DEFAULT_CHECKPOINT / "tokenizer.json").exists():
        pytest.skip("no shipped tokenizer")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(DEFAULT_CHECKPOINT))
    values = 0
    for trace in _traces():
        for traj in sample_trajectories(trace, random.Random(0), 3, 24):
            previous = None
            for state in [traj.initial, *(step.state for step in traj.steps)]:
                for frame in state.frames:
                    for name, value in frame.locals.items():
                        assert grammar_problem(value) is None, (name, value, grammar_problem(value))
                        values += 1
                if state.return_value is not None:
                    assert grammar_problem(state.return_value.value) is None, state.return_value
                text = render_state(state, previous)
                assert tok.decode(tok.encode(text, add_special_tokens=False)) == text
                assert parse_state(text, previous, traj.program) == canonical_state(state, traj.program)
                previous = state
    assert values > 500


@pytest.mark.parametrize("text", [
    "0.30000000000000004", "1e-05", "1.6e-05", "1e+16", "-inf", "inf", "nan", "-0.0", "(1+2j)",
    "((0.1, 2.5), 4)", "('a',)", "()", "[('tea', 3.5), ('cake', 2.25)]", "{'range': (0.1, 2.5), 'n': 3}",
    "<__main__.Cart object at 0x?>", "[<__main__.Task object at 0x?>, <__main__.Task object at 0x?>]",
    "deque([0.5, 1.25], maxlen=3)", "deque([])", "Counter({'fruit': 2, 'dairy': 1})", "Counter()",
    "defaultdict(<class 'list'>, {'a': ['x']})", "defaultdict(<class 'float'>, {})",
    "Item(name='milk', price=0.99, qty=2)", "Order(id=1, customer='kim', items=[('tea', 3.5)], paid=False)",
    "frozenset({'a', 'b'})", "set()", "{'c', 'a'}", "None",
])
def test_everyday_reprs_and_every_prefix_are_grammatical(text: str) -> None:
    assert grammar_problem(text) is None
    for end in range(1, len(text)):
        assert grammar_problem(text[:end], partial=True) is None, text[:end]
