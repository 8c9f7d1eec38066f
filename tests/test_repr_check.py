"""Impossible reprs (model.decode.repr_check): judged right, never flagged on real values, never decoded."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.prompt import language as lang
from model.decode.repr_check import CheckedConstraint, repr_problem, values_problem
from model.decode.repr_grammar import ReprChecker

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("text", ["{'1': 1, '1': 1}", "{1, 1}", "", "  ", "[1, 2", "[1, 2]]", "(1]", "'abc", "{'a': [1, {2: 3, 2: 4}]}",
                                  "1.5.0", "1e5e5", "1_000", "12j3", "1e", "[-120\\", "(8)", "[(8)]"])  # fmt: skip
def test_impossible_reprs_are_refused(text: str) -> None:
    assert repr_problem(text) is not None


@pytest.mark.parametrize("text", ["{'1': 1, 1: 1}", "{'a': {'a': 1}}", "'a]'", '"it\'s"', "[...]", "{1: 2, ...}", "<class 'int'>",
                                  "Point(x=1, y=2)", "deque([1, 2])", "frozenset({1, 2})", "'a\\'b'", "2.5e-07", "1e+16", "(1+2j)",
                                  "-2.5j", "array([1., 2.])", "-0.0", "(8,)", "(-0-1j)", "(nan+infj)", "()"])  # fmt: skip
def test_possible_reprs_pass(text: str) -> None:
    assert repr_problem(text) is None


def test_prefixes_are_judged_as_they_grow() -> None:
    assert repr_problem("[1, {2: 3", partial=True) is None
    assert repr_problem("[1, {2: 3, 2:", partial=True) is not None  # the repeated key, as soon as it is written
    assert repr_problem("[1, 2)", partial=True) is not None


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=4)
    | st.frozensets(st.integers(), max_size=3),
    max_leaves=12,
)  # fmt: skip


@given(_values)
def test_no_real_builtin_repr_is_flagged(value: object) -> None:
    text = repr(value)
    assert repr_problem(text) is None
    assert all(repr_problem(text[:cut], partial=True) is None for cut in range(len(text)))


_broken = st.sampled_from(list("[](){},:'\" -.0123456789eja<>\\=") + [", ", ": ", "...", "None", "x"])


@given(st.lists(_values, min_size=1, max_size=3), st.lists(st.tuples(st.integers(0, 200), _broken), max_size=3), st.randoms())
def test_the_remembering_checker_answers_as_the_grammar_does(values: list[object], edits: list[tuple[int, str]], rng: random.Random) -> None:
    """Texts that grow a token at a time (reprs, some broken by an edit), asked in order and again out of order, whole and
    as starts: `ReprChecker` (which reads only what a text adds to a start it accepted) says what `grammar_problem` says."""
    texts = []
    for value in values:
        text = repr(value)
        for at, piece in edits:
            text = text[: at % (len(text) + 1)] + piece + text[at % (len(text) + 1):]
        texts.append(text)
    asked = [(text[:cut], True) for text in texts for cut in range(0, len(text) + 1, rng.choice([1, 2, 3]))]
    asked += [(text[:cut], False) for text in texts for cut in range(len(text) + 1)]
    asked += rng.sample(asked, len(asked))
    for size in (1, 2, 16, 512):  # small ones forget often
        checker = ReprChecker(size=size)
        for text, partial in asked:
            assert checker.problem(text, partial=partial) == repr_problem(text, partial=partial), (text, partial, size)


def test_no_recorded_state_is_flagged() -> None:
    """Every local and return value the recorder shows for the examples passes, whole and as it is written."""
    from bench.flow_coverage import scripts_for
    from tracegen.fast import record_program

    rng = random.Random(0)
    checked = 0
    for path in sorted((ROOT / "examples").glob("*.py")):
        source = path.read_text()
        if "__repr__" in source:
            continue
        for _, states, _ in scripts_for(record_program(source), rng, 1, 30):
            for previous, state in zip(states, states[1:]):
                text = lang.render_state(lang.canonical_state(state, source), previous)
                assert values_problem(text) is None, text
                assert all(values_problem(text[:cut], partial=True) is None for cut in range(0, len(text), 3)), text
                checked += 1
    assert checked > 100


def test_state_texts_with_an_impossible_value_are_refused() -> None:
    head = '<|reason_step|><|call_sep|><module><|line_sep|>1{"d":"'
    assert values_problem(head + "{'1': 1, '1': 1}\"}") is not None
    assert values_problem(head + "{'1': 1, '2': 1}\"}") is None
    assert values_problem(head + "[1, 2", partial=True) is None
    assert values_problem(head + "[1, 2\"", partial=True) is not None  # closing the string leaves the list open
    assert values_problem(head + "[-120\\\\\"}") is not None  # an escaped backslash after a value (not a cut escape)
    assert values_problem(head + "[-120\\", partial=True) is None  # a cut escape: judged once written
    assert values_problem('<|reason_step|><|call_sep|><module><|line_sep|>1{}<|return_sep|>f"(1, 2]"') is not None
    assert values_problem('<|reason_step|><|call_sep|><module><|line_sep|>1{}<|exception_sep|>E"(1, 2]"') is None  # a message is free text


def test_decoding_with_the_check_never_writes_an_impossible_value(tiny_checkpoint: Path) -> None:
    """An untrained model writes any characters; under the check every value it finishes is a possible repr."""
    from model.backends.hf import HFBackend
    from model.decode.constraints import state_constraint
    from protocol.debugger import Action, ActionKind
    from model.session import NeuralDebugger, entry_state

    program = "d = {'1': 1}\nxs = [1, 2]\nprint(d, xs)\n"
    backend = HFBackend(tiny_checkpoint, seed=0)
    session = NeuralDebugger(backend, backend.tokenizer, program)
    start = session.start()
    prompt = session._prompt_ids(Action(kind=ActionKind.STEP_INTO))
    constraint = state_constraint(program, start, reprs=True)
    assert isinstance(constraint, CheckedConstraint)
    for temperature in (0.0, 1.0, 1.5):
        gen = backend.generate(prompt, max_tokens=160, temperature=temperature, stop_ids=[session.stop_id], constraint=constraint)
        text = backend.tokenizer.decode(gen.token_ids, skip_special_tokens=False)
        assert values_problem(text, partial=gen.finish_reason != "stop") is None, text
    assert entry_state(program).frames[0].line == 1
    session.close()
