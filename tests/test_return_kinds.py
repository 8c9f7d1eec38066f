"""Static kinds of return values (`model.static.return_kinds`) and arguments (`model.static.param_kinds`): the rules, and recorded runs."""
from __future__ import annotations

import ast

import pytest
import regex

from model.static.entry_locals import entry_locals, inverse_call_regex
from model.static.flow_regex import return_value_regex
from model.static.param_kinds import param_starts
from model.static.return_kinds import return_kinds
from model.prompt import language as lang
from model.static.value_kinds import kinds_value_regex, repr_fits, repr_kind, starts_value_regex, starts_with_attribute
from protocol.debugger import Frame, ReturnValue, State, StopReason
from tests.recorded import recorded_programs
from tracegen.trees import InverseChain


def _kinds(program: str, name: str = "f") -> set[str] | None:
    found = return_kinds(program).get(name)
    return None if found is None else set(found) - {"None"}


@pytest.mark.parametrize(("program", "expected"), [
    ("def f(s):\n    r = ''\n    for c in s:\n        r += c\n    return r\n", {"str"}),
    ("def f(xs):\n    return len(xs) > 2\n", {"bool"}),
    ("def f(xs):\n    return [x for x in xs]\n", {"list"}),
    ("def f(a):\n    if a:\n        return 'x'\n    return 1\n", {"str", "int"}),
    ("def f(s):\n    return ''.join(reversed(s)).upper()\n", {"str"}),
    ("def f(s):\n    return s.split()\n", None),  # s may be anything
    ("def f(n):\n    return n * 2\n", None),
    ("def f():\n    n = 4\n    return n / 2\n", {"float"}),
    ("def f(d):\n    out = {}\n    for i in range(3):\n        out[i] = i\n    return out\n", {"dict"}),
    ("def g():\n    return 'a'\n\ndef f():\n    return g() + 'b'\n", {"str"}),
    ("def f(x):\n    return f(x - 1) if x else 0\n", None),  # recursion: not typed
    ("def f(n):\n    for i in range(n):\n        yield i\n", None),  # a generator
    ("len = 3\n\ndef f(x):\n    return len(x)\n", None),  # a rebound builtin
    ("import os\n\ndef f(x):\n    r = ''\n    r += x\n    return r\n", None),  # not closed: x may define __radd__
    ("def f(x):\n    r = ''\n    r += x\n    return r\n", {"str"}),
])  # fmt: skip
def test_rules(program: str, expected: set[str] | None) -> None:
    assert _kinds(program) == expected


def test_falling_off_the_end_and_exceptions_show_none() -> None:
    assert return_kinds("def f(a):\n    if a:\n        return 'x'\n")["f"] == {"str", "None"}
    assert "None" in return_kinds("def f():\n    return 'x'\n")["f"]  # a frame left by an exception shows None


def test_value_regex_by_kind() -> None:
    assert repr_fits("'a'", {"str"}) and repr_fits('"it\'s"', {"str"}) and not repr_fits("False", {"str"})
    assert repr_fits("-3", {"int"}) and repr_fits("set()", {"set"}) and repr_fits("{1}", {"set"}) and not repr_fits("[1]", {"set"})
    assert regex.fullmatch(kinds_value_regex({"list", "None"}), '"None"') and not regex.fullmatch(kinds_value_regex({"list"}), '"None"')
    assert repr_kind("'a'") == "str" and repr_kind("<object at 0x?>") is None and repr_kind("nan") == "float"


def test_a_bytearray_start_holds_a_bytes_literal() -> None:
    """``xs.insert`` allows a list or a bytearray; a bytearray's repr is ``bytearray(b'...')``, never ``bytearray(1, 2)``."""
    pattern = regex.compile(starts_value_regex(starts_with_attribute("insert")))
    assert pattern.fullmatch(lang.json_string("[1, 2]")) and pattern.fullmatch(lang.json_string("bytearray(b'ab')"))
    assert pattern.fullmatch(lang.json_string('bytearray(b"it\'s")'))
    assert not pattern.fullmatch(lang.json_string("bytearray(1, 2)")) and not pattern.fullmatch(lang.json_string("bytearray({})"))


def test_the_return_value_grammar_narrows_only_typed_functions() -> None:
    program = "def f(s):\n    return '!' + s\n\ndef g(x):\n    return x\n\nresult = f(g('a'))\n"
    pattern = regex.compile(return_value_regex(program, ["<module>", "f", "g"]))
    assert pattern.fullmatch('f"\'A!\'"') and not pattern.fullmatch('f"False"') and pattern.fullmatch('f"None"')
    assert pattern.fullmatch('g"False"') and pattern.fullmatch('g.f"\'A\'"')


def _params(source: str) -> dict[str, tuple[str, ...]]:
    return param_starts(next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)))


def test_parameters_certainly_used_narrow_their_values() -> None:
    starts = _params("def f(text, xs, d):\n    a = text.upper()\n    for k in d.items():\n        pass\n    return len(xs)\n")
    assert "'" in starts["text"] and r"\[" not in starts["text"]
    assert starts["d"] == (r"\{",)
    assert r"\[" in starts["xs"] and "-?[0-9]" not in starts["xs"]


@pytest.mark.parametrize("source", [
    "def f(xs):\n    if xs:\n        return 0\n    xs.append(1)\n",  # after a statement that may return
    "def f(xs):\n    xs = list(xs)\n    xs.append(1)\n",  # rebound first
    "def f(a, b):\n    return a and b.upper()\n",  # b only if a is true
    "def f(s):\n    try:\n        s.upper()\n    except AttributeError:\n        pass\n",  # a failure may be caught
    "def f(s):\n    return [c.upper() for c in s] if s else s.lower()\n",  # a branch
])  # fmt: skip
def test_uses_that_may_not_run_say_nothing(source: str) -> None:
    assert _params(source).get("b" if "b." in source else "s" if "(s)" in source else "xs") is None


def test_the_inverse_call_grammar_types_arguments_only_after_a_normal_return() -> None:
    program = "def f(text):\n    return text.upper()\n\nresult = f(...)\n"

    def later(value: str) -> State:
        frame = Frame(name="<module>", line=4, source="result = f(...)")
        return State(reason=StopReason.STEP, frames=[frame], return_value=ReturnValue(name="f", value=value))

    entry = '<|reason_step|><|frame_sep|><module><|line_sep|>4{..}<|call_sep|>f<|line_sep|>2{"text":"VALUE"}'
    typed = regex.compile(inverse_call_regex(program, later("'AB'"), include_end=False) or "")
    assert typed.fullmatch(entry.replace("VALUE", "'ab'")) and not typed.fullmatch(entry.replace("VALUE", "[1]"))
    untyped = regex.compile(inverse_call_regex(program, later("None"), include_end=False) or "")  # maybe left by an exception
    assert untyped.fullmatch(entry.replace("VALUE", "[1]"))
    assert not entry_locals("class A:\n    pass\n\n" + program)[("f", 5)].starts  # not closed: no starts


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_return_value_has_an_allowed_kind(seed: int) -> None:
    checked = 0
    for source, trace in recorded_programs(15, seed):
        kinds = return_kinds(source)
        for state in InverseChain(trace, max_states=400).states:
            rv = state.return_value
            if rv is None or any(f.file is not None for f in state.frames) or rv.name.rsplit(".", 1)[-1] not in kinds:
                continue
            checked += 1
            assert repr_fits(rv.value, kinds[rv.name.rsplit(".", 1)[-1]]), (source, rv)
    assert checked > 10
