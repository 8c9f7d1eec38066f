"""A function's first stop shows its parameters (and free variables): the constraint holds on recorded runs."""
from __future__ import annotations

import pytest
import regex

from model.prompt import language as lang
from model.decode.constraints import InverseCallConstraint, state_constraint
from model.static.entry_locals import EntryLocals, entry_locals, entry_locals_regex, inverse_call_regex
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.recorded import recorded_programs
from tracegen.trees import InverseChain

SIGNATURES = '''\
import functools

class Box:
    def __init__(self, size, *items, _tag=None, **opts):
        self.size = size

    @classmethod
    def make(cls, n):
        return cls(n)

def apply(fn, xs, key=len):
    return [fn(x) for x in xs]

def outer(a):
    b = 2
    def inner(c):
        return a + b + c
    return inner(1)

def gen(n):
    for i in range(n):
        yield i

def typed(x: int, factory: type):
    return x
'''


def _spec(program: str, name: str) -> EntryLocals:
    found = [spec for (n, _), spec in entry_locals(program).items() if n == name]
    assert len(found) == 1, (name, found)
    return found[0]


def test_parameters_in_debugpys_order_with_what_may_be_hidden_optional() -> None:
    init = _spec(SIGNATURES, "__init__")
    assert init.names == ("items", "opts", "self", "size", "_tag")  # plain names sorted, then _x
    assert init.required == {"items", "opts", "self", "size", "_tag"}
    make = _spec(SIGNATURES, "make")
    assert make.names == ("cls", "n") and make.required == {"n"}  # a classmethod's class is hidden
    apply = _spec(SIGNATURES, "apply")
    assert apply.required == {"xs"}  # fn is called, key defaults to a function
    inner = _spec(SIGNATURES, "inner")
    assert inner.names == ("a", "b", "c") and inner.required == {"c"}  # free variables may be hidden or unbound
    assert _spec(SIGNATURES, "typed").required == {"x"}


def test_generators_have_no_spec() -> None:
    assert not [k for k in entry_locals(SIGNATURES) if k[0] == "gen"]  # a new frame on its first line may be a resumption


def test_regex_requires_required_keys_in_order() -> None:
    pattern = regex.compile(entry_locals_regex(EntryLocals(("a", "b", "c"), frozenset({"a", "c"}))))
    assert pattern.fullmatch('{"a":"1","c":"2"}') and pattern.fullmatch('{"a":"1","b":"[]","c":"2"}')
    assert not pattern.fullmatch('{"a":"1"}') and not pattern.fullmatch('{"c":"2","a":"1"}')
    assert not pattern.fullmatch('{"a":"1","c":"2","d":"3"}')


def test_programs_that_cannot_be_analysed_have_no_specs() -> None:
    assert entry_locals("def f(:\n") == {}
    assert inverse_call_regex("def f(:\n", State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=1, source="")])) is None


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_first_stop_of_a_new_call_fits(seed: int) -> None:
    checked = 0
    for source, trace in recorded_programs(15, seed):
        specs = entry_locals(source)
        chain = InverseChain(trace, max_states=400)
        for previous, state in zip(chain.states, chain.states[1:]):
            if state.finished or not state.frames:
                continue
            new, old = list(reversed(state.frames)), list(reversed(previous.frames))
            top = new[-1]
            if lang._continues(new, old, len(new) - 1) or (top.name, top.line) not in specs:
                continue
            checked += 1
            assert specs[(top.name, top.line)].allows(list(top.locals)), (source, top)
    assert checked > 20


@pytest.mark.parametrize("seed", [0, 1])
def test_the_inverse_call_grammar_accepts_every_recorded_answer(seed: int) -> None:
    checked = 0
    for source, trace in recorded_programs(15, seed):
        chain = InverseChain(trace, max_states=300)
        for k in range(len(chain)):
            j = chain.inverse(k, ActionKind.INV_STEP_CALL)
            if j is None:
                continue
            later, earlier = chain.states[k], chain.states[j]
            pattern = inverse_call_regex(source, later)
            if pattern is None:
                continue
            checked += 1
            text = lang.render_state(earlier, later)
            assert regex.fullmatch(pattern, text, regex.DOTALL), (source, text)
    assert checked > 20


def test_a_session_asks_for_the_narrowed_grammar_only_for_inv_step_call() -> None:
    program = "def f(a, b):\n    return a + b\n\nresult = f(1, 2)\n"
    later = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=4, source="result = f(1, 2)")],
                  return_value=ReturnValue(name="f", value="3"))
    narrowed = state_constraint(program, later, action=Action(kind=ActionKind.INV_STEP_CALL))
    assert isinstance(narrowed, InverseCallConstraint)
    entry = '<|reason_step|><|frame_sep|><module><|line_sep|>4{..}<|call_sep|>f<|line_sep|>2{"a":"1","b":"2"}'
    assert narrowed.complete(entry)
    assert not narrowed.complete(entry.replace('"b":"2"', '"c":"2"'))
    assert not narrowed.complete('<|reason_step|><|frame_sep|><module><|line_sep|>4{..}')
    plain = state_constraint(program, later, action=Action(kind=ActionKind.INV_STEP_INTO))
    assert not isinstance(plain, InverseCallConstraint) and plain.complete('<|reason_step|><|frame_sep|><module><|line_sep|>4{..}')
