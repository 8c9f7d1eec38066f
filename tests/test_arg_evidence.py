"""Soft evidence of argument kinds from how a function body uses its parameters (`model.decode.arg_evidence`)."""
from __future__ import annotations

import ast

import pytest

from model.prompt import language as lang
from model.decode.arg_evidence import Use, function_uses, program_uses, uses_at, violations
from model.prompt.language import ActionKind
from tests.recorded import recorded_programs
from tracegen.trees import InverseChain


def _uses(source: str) -> tuple[Use, ...]:
    return function_uses(next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)))


def _contradicted(source: str, **values: str) -> int:
    return violations(_uses(source), values)


@pytest.mark.parametrize(("source", "good", "bad"), [
    ("def f(text, suffix):\n    if text:\n        return text.endswith(suffix)\n    return False\n", {"suffix": "'a'"}, {"suffix": "3"}),
    ("def f(items):\n    return '-'.join(items)\n", {"items": "['a', 'b']"}, {"items": "[1, 2]"}),
    ("def f(n):\n    out = []\n    for i in range(n):\n        out.append(i)\n    return out\n", {"n": "3"}, {"n": "'3'"}),
    ("def f(x):\n    return x + 'a'\n", {"x": "'b'"}, {"x": "1"}),
    ("def f(xs, k):\n    if k:\n        xs.insert(k, 0)\n    return xs\n", {"xs": "[1]", "k": "1"}, {"xs": "[1]", "k": "'a'"}),
    ("def f(s, c):\n    return c in s\n", {"s": "'abc'"}, {"s": "12"}),
    ("def f(words):\n    for w in words:\n        if w.isupper():\n            return w\n", {"words": "['A']"}, {"words": "[1]"}),
    ("def f(text):\n    text = text.lower()\n    return text\n", {"text": "'A'"}, {"text": "[1]"}),  # read before the rebinding
    ("def f(d):\n    return dict.fromkeys(d)\n", {"d": "'ab'"}, {"d": "5"}),
    ("def f(a, b):\n    return a[b:]\n", {"b": "2"}, {"b": "'x'"}),
    ("def f(text, suffix, num):\n    tail = str(num)\n    return text.endswith(suffix + tail)\n", {"suffix": "'a'"}, {"suffix": "1"}),  # a fixed local's kind
    ("def f(s, c, i):\n    m = s.rindex(c)\n    return m >= i\n", {"i": "2"}, {"i": "'2'"}),
])  # fmt: skip
def test_uses_tell_kinds(source: str, good: dict[str, str], bad: dict[str, str]) -> None:
    assert _contradicted(source, **good) == 0
    assert _contradicted(source, **bad) >= 1


@pytest.mark.parametrize(("source", "values"), [
    ("def f(x):\n    if isinstance(x, str):\n        return x.upper()\n    return x + 1\n", {"x": "3"}),  # a type test: no evidence
    ("def f(x):\n    try:\n        return x.upper()\n    except AttributeError:\n        return x\n", {"x": "3"}),  # caught
    ("def f(x):\n    x = len(x)\n    return x + 1\n", {"x": "'ab'"}),  # the use after the rebinding is of another value
    ("def f(x):\n    return g(x)\n", {"x": "3"}),  # a call of the program's own function says nothing
    ("def f(x):\n    return x * 2\n", {"x": "'a'"}),  # str, list and int all multiply
    ("def f(x):\n    return x.upper()\n", {"x": "<object at 0x?>"}),  # not a literal: nothing to contradict
    ("def f(n):\n    for n in str(n):\n        if n not in '012':\n            return False\n    return True\n", {"n": "14"}),  # reused as a loop variable
    ("def f(a, b):\n    t = 1\n    t = 'x'\n    return a + t\n", {"a": "'y'"}),  # a local bound twice has no fixed kind
])  # fmt: skip
def test_no_evidence_where_the_use_proves_nothing(source: str, values: dict[str, str]) -> None:
    assert _contradicted(source, **values) == 0


def test_each_contradicted_use_counts_once() -> None:
    source = "def f(a, b):\n    a.upper()\n    a.upper()\n    return b.split(a)\n"
    assert _contradicted(source, a="1", b="'x'") == 2  # a.upper() (once) and b.split(a)
    assert _contradicted(source, a="'-'", b="'x'") == 0


def test_programs_that_are_not_closed_give_no_evidence() -> None:
    program = "def f(text):\n    return text.upper()\n"
    assert uses_at(program, "f", 2)
    assert uses_at("import os\n" + program, "f", 3) == ()
    assert program_uses("def f(:\n") == {}
    docstring = 'def f(text):\n    """Doc."""\n    return text.upper()\n'
    assert uses_at(docstring, "f", 3) == uses_at(docstring, "f", 2)  # a first stop after the docstring


@pytest.mark.parametrize("seed", [0, 1])
def test_recorded_arguments_contradict_no_use(seed: int) -> None:
    """Every call that returned normally in a recording: its real arguments contradict none of the uses (measured: 0 of
    788 first stops over four seeds, 243 of them with evidence)."""
    checked = 0
    for source, trace in recorded_programs(15, seed):
        chain = InverseChain(trace, max_states=300)
        for k in range(len(chain)):
            j = chain.inverse(k, ActionKind.INV_STEP_CALL)
            if j is None or chain.states[k].return_value is None:
                continue
            top = chain.states[j].top
            uses = uses_at(source, top.name, top.line) if top is not None and top.file is None else ()
            if uses:
                checked += 1
                assert violations(uses, top.locals) == 0, (source, top.locals, uses, lang.render_state(chain.states[j], None))
    assert checked > 20
