"""Static kinds of return values (`model.static.return_kinds`) and arguments (`model.static.param_kinds`): the rules, and recorded runs."""
from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest
import regex

from model.static.entry_locals import entry_locals, inverse_call_regex
from model.static.flow_regex import return_value_regex
from model.static.param_kinds import param_starts
from model.static.return_kinds import local_kinds, return_kinds, return_literals
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
    for source, name, value in _recorded_returns(seed):
        kinds = return_kinds(source)
        if name in kinds:
            checked += 1
            assert repr_fits(value, kinds[name]), (source, name, value)
    assert checked > 10


def _recorded_returns(seed: int) -> Iterator[tuple[str, str, str]]:
    """(source, function name, shown repr) of each return value a recorded run shows in its own file's frames."""
    for source, trace in recorded_programs(15, seed):
        for state in InverseChain(trace, max_states=400).states:
            rv = state.return_value
            if rv is not None and not any(f.file is not None for f in state.frames):
                yield source, rv.name.rsplit(".", 1)[-1], rv.value


def test_functions_returning_constants_return_those_or_none() -> None:
    program = ("def letter(score):\n    if score >= 90:\n        return 'A'\n    if score > 0:\n        return -1\n    return\n\n\n"
               "def g(x):\n    return x\n\n\ndef h():\n    yield 1\n    return 2\n\n\nclass A:\n    def m(self):\n        return 1\n\n\n"
               "class B:\n    def m(self):\n        return 2\n")
    assert return_literals(program) == {"letter": frozenset({"'A'", "-1", "None"})}  # not g, not a generator, not a name defined twice
    grammar = regex.compile(return_value_regex(program, ["letter", "g"]))
    assert grammar.fullmatch('letter"\'A\'"') and grammar.fullmatch('letter"None"')
    assert not grammar.fullmatch('letter"\'B\'"') and grammar.fullmatch('g"\'B\'"')


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_return_value_of_a_constant_returning_function_is_listed(seed: int) -> None:
    checked = 0
    for source, name, value in _recorded_returns(seed):
        literals = return_literals(source)
        if name in literals:
            checked += 1
            assert value in literals[name], (source, name, value)
    assert checked > 3


def test_a_functions_locals_take_the_kinds_of_their_bindings() -> None:
    program = ("def f(xs, n):\n    total = 0\n    names = []\n    for x in xs:\n        total += x\n        names.append(str(x))\n"
               "    label = ', '.join(names)\n    for i in range(n):\n        pass\n    y = n\n    a, b = 1, 2\n    return label\n")
    assert local_kinds(program) == {"f": {"total": frozenset({"int", "float"}), "names": frozenset({"list"}),
                                          "label": frozenset({"str"}), "i": frozenset({"int"})}}  # y, a, b: untyped
    assert local_kinds(program + "def f():\n    pass\n") == {}  # two functions named f: a frame's name is ambiguous
    shared = "def outer():\n    n = 0\n    def bump():\n        nonlocal n\n        n = 'x'\n    bump()\n    return n\n"
    assert "n" not in local_kinds(shared).get("outer", {})  # an inner function may rebind it
    nested = "def f():\n    def g():\n        x = 1\n        return x\n    return x\n"
    assert "f" not in return_kinds(nested) and "x" not in local_kinds(nested).get("f", {})  # g's x is not f's


def test_the_modules_globals_take_the_kinds_of_their_bindings() -> None:
    program = ("rows = [{'price': 2.5}]\ntotal = 0.0\nfor row in rows:\n    total += row['price']\nlabel = f'{total:.2f}'\n"
               "def count(xs):\n    return len(xs)\nn = count(rows)\nm = len(rows)\n")
    assert local_kinds(program)["<module>"] == {"rows": frozenset({"list"}), "total": frozenset({"float"}),
                                                "label": frozenset({"str"}), "n": frozenset({"int"}), "m": frozenset({"int"})}
    assert "m" not in local_kinds(program + "def g():\n    global m\n    m = 'x'\n")["<module>"]  # a function may rebind it
    assert "<module>" not in local_kinds(program + "globals()['m'] = 'x'\n")  # bound where no analysis sees


def test_the_step_grammar_types_a_functions_locals() -> None:
    from model.decode.constraints import state_constraint
    from protocol.debugger import Action, ActionKind

    program = "def run(items):\n    out = []\n    for it in items:\n        out.append(it)\n    return out\n\nres = run([1, 2])\n"
    previous = State(reason=StopReason.STEP, frames=[Frame(name="run", line=2, source="    out = []", locals={"items": "[1, 2]"}),
                                                     Frame(name="<module>", line=7, source="res = run([1, 2])", locals={})])
    constraint = state_constraint(program, previous, action=Action(kind=ActionKind.STEP_OVER), reprs=True)
    head = "<|reason_step|><|frame_sep|><module><|line_sep|>7{..}<|frame_sep|>run<|line_sep|>3"
    assert constraint.complete(head + '{"out":"[]",..}')
    assert not constraint.allows(head + '{"out":"None')  # out is a list wherever run shows it
    assert not constraint.allows(head + '{"out":"\'')


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_local_has_an_allowed_kind(seed: int) -> None:
    checked = 0
    for source, trace in recorded_programs(15, seed):
        kinds = local_kinds(source)
        for state in InverseChain(trace, max_states=400).states:
            for frame in state.frames:
                typed = kinds.get(frame.name, {}) if frame.file is None else {}
                for name, value in frame.locals.items():
                    if name in typed:
                        checked += 1
                        assert repr_fits(value, typed[name]), (source, frame.name, name, value, typed[name])
    assert checked > 50
