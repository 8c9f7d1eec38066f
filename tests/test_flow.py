"""Static control flow (model.static.flow): every real next stop is in the predicted set, the set is small,
the grammar built from it accepts the real stop and refuses others, and decoding stays inside it."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.flow_coverage import Coverage, check_program, scripts_for
from model.prompt import language as lang
from model.decode.constraints import state_constraint
from model.static.flow import Continue, FlowSet, Push, next_locations, program_flow
from model.static.flow_regex import flow_state_regex
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tracegen.fast import record_program

ROOT = Path(__file__).resolve().parent.parent

TRICKY = '''import functools


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        out = fn(*args)
        return out
    return wrapper


@deco
def double(x):
    return x * 2


def gen(n):
    i = 0
    while True:
        if i >= n:
            return
        yield i
        i += 1


def risky(v):
    try:
        if v > 1:
            raise ValueError("big")
        r = 10 // v
    except ZeroDivisionError:
        r = -1
    except ValueError:
        r = -2
    else:
        r += 1
    finally:
        print("done", v)
    return r


class Box:
    def __init__(self, v):
        self.v = v

    @property
    def twice(self):
        return self.v * 2

    def __eq__(self, other):
        return isinstance(other, Box) and self.v == other.v

    def __hash__(self):
        return hash(self.v)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def shape(p):
    match p:
        case (0, 0):
            return "origin"
        case (x, 0) if x > 0:
            return "x"
        case [x, y]:
            return "pt"
        case _:
            return "other"


total = 0
for k in gen(3):
    total += double(k)
vals = [risky(v) for v in (0, 1, 2)]
with Box(3) as bb:
    t = bb.twice
s = {Box(1), Box(1)}
order = sorted([3, 1, 2], key=lambda q: -q)
names = list(map(shape, [(0, 0), (1, 0), [2, 3], 5]))
g = gen(2)
first = next(g)
while True:
    total -= 1
    if total < 3:
        break
def rec(n):
    return 1 if n <= 1 else n * rec(n - 1)
f = rec(4)
x = sum(i * i for i in range(3))
i = 0
while i < 3: i += 1
print(total, vals, t, len(s), order, names, first, f, x)
rec(None)
'''


def _stop(*frames: tuple[str, int], reason: StopReason = StopReason.STEP) -> State:
    """A stop from (name, line) pairs, innermost first."""
    return State(reason=reason, frames=[Frame(name=n, line=line) for n, line in frames])


@pytest.mark.slow  # the slowest test of the default run (a few recorded scripts per example)
def test_every_recorded_stop_of_the_examples_and_a_tricky_program_is_in_the_set() -> None:
    """The superset property on real traces: examples/, tests/programs/ and a program with every construct."""
    cov = Coverage()
    rng = random.Random(0)
    sources = [(str(p), p.read_text()) for folder in ("examples", "tests/programs") for p in sorted((ROOT / folder).glob("*.py"))]
    for name, source in [*sources, ("tricky", TRICKY)]:
        check_program(source, rng, cov, per_program=2, max_steps=40, name=name)  # bench.flow_coverage runs more
    assert cov.steps > 1000 and cov.by_action["step_into"] > 400 and cov.by_action["step_over"] > 200
    assert not cov.misses, [(m["program"], m["action"], m["previous"], m["next"]) for m in cov.misses[:5]]
    # every recorded state, as the model writes it, is allowed by the session's whole decoding constraint
    assert cov.grammar_states == cov.steps and cov.entries_known > 50 and cov.kept_values > 1000
    assert not cov.grammar_misses, cov.grammar_misses[:3]
    # and it narrows: a step stop may be on a few lines, not on any of the program's lines
    assert cov.allowed_lines / cov.constrained_steps < 0.4 * cov.executable_lines / cov.constrained_steps


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_superset_on_synthetic_programs(seed: int) -> None:
    from tracegen.synth import generate_program

    source = generate_program(random.Random(seed)).source
    cov = Coverage()
    check_program(source, random.Random(seed), cov, per_program=3, max_steps=30)
    assert not cov.misses, [(m["action"], m["previous"], m["next"]) for m in cov.misses[:3]]


def test_the_grammar_accepts_every_recorded_stop_and_refuses_one_off_the_flow() -> None:
    trace = record_program(TRICKY)
    rng = random.Random(1)
    refused = 0
    for breakpoints, states, actions in scripts_for(trace, rng, 2, 40):
        for previous, action, state in zip(states, actions, states[1:]):
            flow = next_locations(TRICKY, previous, action, breakpoints)
            constraint = state_constraint(TRICKY, previous, action=action, breakpoints=breakpoints)
            text = lang.render_state(lang.canonical_state(state, TRICKY), previous).removesuffix(lang.STOP_TOKEN)
            if "update_wrapper" in text or "<|return_sep|>wraps" in text:
                continue  # a library function's return value: the base grammar only knows the program's names
            assert constraint.complete(text), (action, previous.location, text)
            allowed = flow.top_lines(state.reason)
            if state.reason is StopReason.STEP and allowed is not None and len(state.frames) == len(previous.frames):
                wrong = next((n for n in range(1, 200) if n not in allowed and n in lang.program_info(TRICKY).lines_of(state.frames[0].name)), None)
                if wrong is None:  # every line of that function is possible (a one-line lambda or generator expression)
                    continue
                moved = state.model_copy(deep=True)
                moved.frames[0].line = wrong
                off = lang.render_state(lang.canonical_state(moved, TRICKY), previous).removesuffix(lang.STOP_TOKEN)
                assert not constraint.complete(off)
                assert state_constraint(TRICKY, previous).complete(off)  # only the flow refuses it
                refused += 1
    assert refused > 50


def test_leaving_a_function_shows_its_return_value_and_leaving_a_generator_may_not() -> None:
    """After a step out of a function the caller's stop carries ``(return) f`` (recorded, and required by the
    grammar: a prediction cannot leave it out); after a generator's yield the consumer's stop may have the
    yielded value or none (recorded both ways), so there it stays optional."""
    program = "def f(a):\n    return a + 1\n\n\ndef g():\n    yield 1\n\n\nx = f(1)\nit = g()\ny = next(it)\nz = 0\n"
    trace = record_program(program)
    checked = {"function": 0, "generator": 0}
    for breakpoints, states, actions in scripts_for(trace, random.Random(0), 12, 20):
        for previous, action, state in zip(states, actions, states[1:]):
            if state.reason is not StopReason.STEP or len(state.frames) >= len(previous.frames) or not previous.frames:
                continue
            flow = next_locations(program, previous, action, breakpoints)
            constraint = state_constraint(program, previous, action=action, breakpoints=breakpoints)
            text = lang.render_state(lang.canonical_state(state, program), previous).removesuffix(lang.STOP_TOKEN)
            assert flow.allows(previous, state) and constraint.complete(text)
            without = state.model_copy(update={"return_value": None})
            bare = lang.render_state(lang.canonical_state(without, program), previous).removesuffix(lang.STOP_TOKEN)
            if previous.frames[0].name == "f":
                assert state.return_value is not None and state.return_value.value == "2"
                assert not flow.allows(previous, without) and not constraint.complete(bare)
                checked["function"] += 1
            else:
                assert previous.frames[0].name == "g" and flow.returned == frozenset() and flow.allows(previous, without)
                checked["generator"] += 1
    assert checked["function"] > 0 and checked["generator"] > 0


PROGRAM = """def f(a):
    b = a + 1
    if b > 2:
        b = 0
    return b


x = f(1)
for i in range(2):
    x += i
y = x
"""


@pytest.mark.parametrize(("stack", "action", "same_frame", "other"), [
    ((("<module>", 8),), ActionKind.STEP_OVER, {9}, set()),  # the call runs to completion
    ((("<module>", 8),), ActionKind.STEP_INTO, {9}, {("f", 2)}),  # the first body line of f (or on, if f is not entered)
    ((("f", 3), ("<module>", 8)), ActionKind.STEP_OVER, {4, 5}, {("<module>", 8), ("<module>", 9)}),  # a branch; or f raised
    ((("<module>", 9),), ActionKind.STEP_OVER, {10, 11}, set()),  # into the loop or past it
    ((("<module>", 10),), ActionKind.STEP_OVER, {9}, set()),  # back to the header
    ((("f", 5), ("<module>", 8)), ActionKind.STEP_INTO, set(), {("<module>", 8)}),  # the return stop on the calling line
    ((("f", 5), ("<module>", 8)), ActionKind.STEP_OVER, set(), {("<module>", 8), ("<module>", 9)}),  # the caller goes on
    ((("f", 2), ("<module>", 8)), ActionKind.STEP_RETURN, set(), {("<module>", 8)}),
])  # fmt: skip
def test_the_sets_are_the_control_flow_successors(stack: tuple, action: ActionKind, same_frame: set[int], other: set) -> None:
    """The top frame moves only along its control flow; other stops are the caller's or a callee's first line."""
    previous = _stop(*stack)
    flow = next_locations(PROGRAM, previous, Action(kind=action))
    depth = len(stack) - 1
    moved = {line for shape in flow.step if isinstance(shape, Continue) and shape.depth == depth for line in shape.lines}
    assert moved == same_frame
    others = {(n, line) for n, line in _top_stops(flow, previous) if (n, line) not in {(stack[0][0], m) for m in moved}}
    assert other <= others and len(others) <= len(other) + 1, others  # at most the callee's entry besides


def _top_stops(flow: FlowSet, previous: State) -> set[tuple[str, int]]:
    old = list(reversed(previous.frames))
    out: set[tuple[str, int]] = set()
    for shape in flow.step:
        if isinstance(shape, Continue):
            out |= {(old[shape.depth].name, line) for line in shape.lines}
        elif isinstance(shape, Push):
            out |= {(name, line) for name, lines in shape.frames for line in lines}
    return out


def test_exit_and_breakpoints() -> None:
    assert not next_locations(PROGRAM, _stop(("<module>", 9)), Action(kind=ActionKind.STEP_OVER)).exit
    assert next_locations(PROGRAM, _stop(("<module>", 11)), Action(kind=ActionKind.STEP_OVER)).exit
    run = next_locations(PROGRAM, _stop(("<module>", 8)), Action(kind=ActionKind.CONTINUE), breakpoints=[4, 10])
    assert run.exit and run.step == [] and run.top_lines(StopReason.BREAKPOINT) == {4, 10}
    to_line = next_locations(PROGRAM, _stop(("<module>", 8)), Action(kind=ActionKind.BREAKPOINT, line=11))
    assert to_line.top_lines(StopReason.BREAKPOINT) == {11}
    after_exception = next_locations(PROGRAM, _stop(("f", 2), ("<module>", 8), reason=StopReason.EXCEPTION), Action(kind=ActionKind.STEP_INTO))
    assert after_exception.exit and not after_exception.step and not after_exception.breakpoint


@pytest.mark.parametrize("program", ["x = (", "import threading\nx = 1\n", "async def f():\n    pass\nx = 1\n"])
def test_what_it_cannot_follow_is_unconstrained(program: str) -> None:
    flow = next_locations(program, _stop(("<module>", 1)), Action(kind=ActionKind.STEP_INTO))
    assert flow.unconstrained and flow.why
    assert flow_state_regex(program, _stop(("<module>", 1)), flow) == lang.state_regex(program, _stop(("<module>", 1)))


def test_unknown_frames_and_inverse_actions_are_unconstrained() -> None:
    assert next_locations(PROGRAM, _stop(("nosuch", 3)), Action(kind=ActionKind.STEP_INTO)).unconstrained
    assert next_locations(PROGRAM, _stop(("<module>", 8)), Action(kind=ActionKind.INV_STEP_INTO)).unconstrained
    assert isinstance(FlowSet.anything("x"), FlowSet)


def test_a_tiny_model_session_only_stops_where_control_can_go(tiny_checkpoint: Path) -> None:
    """An untrained model wanders anywhere; with the flow constraint every stop is a possible one."""
    from model.session import NeuralDebugger

    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, max_state_tokens=96, retry_temperature=None)
    state = session.start()
    steps = 0
    for kind in [ActionKind.STEP_INTO, ActionKind.STEP_OVER] * 4:
        if state.finished:
            break
        action = Action(kind=kind)
        flow = next_locations(PROGRAM, state, action, [])
        nxt = session.step(action)
        if session.note is None:  # a prediction (not the stay-put fallback)
            assert flow.allows(state, nxt), (state.location, kind, nxt.location)
            steps += 1
        state = nxt
    assert steps >= 1
    session.close()


def test_a_stop_after_leaving_a_frame_names_the_function_that_returned() -> None:
    """The return value at a stop back in a caller is the left frame's (shown qualified for a method); a function that
    library code may call (a sort key) may return into a library frame first, and a class body into its metaclass, so
    there the name stays open."""
    program = ("class Box:\n    def __init__(self, v):\n        self.v = v\n\n    def twice(self):\n        return self.v * 2\n\n\n"
               "def key(b):\n    return -b.v\n\n\nb = Box(3)\nt = b.twice()\ns = sorted([b], key=key)\n")
    trace = record_program(program)
    seen: dict[str, int] = {}
    for breakpoints, states, actions in scripts_for(trace, random.Random(0), 12, 30):
        for previous, action, state in zip(states, actions, states[1:]):
            if state.return_value is None or len(state.frames) >= len(previous.frames) or not previous.frames:
                continue
            constraint = state_constraint(program, previous, action=action, breakpoints=breakpoints)
            text = lang.render_state(lang.canonical_state(state, program), previous).removesuffix(lang.STOP_TOKEN)
            assert constraint.complete(text)
            left = previous.frames[len(previous.frames) - len(state.frames) - 1].name
            another = "twice" if left in ("key", "Box") else "key"  # another function of the program
            renamed = state.model_copy(update={"return_value": state.return_value.model_copy(update={"name": another})})
            other = lang.render_state(lang.canonical_state(renamed, program), previous).removesuffix(lang.STOP_TOKEN)
            assert constraint.complete(other) == (left in ("key", "Box")), (left, text)
            if left in ("__init__", "twice"):  # a method of one class: debugpy qualifies it by its instance's class
                bare = state.model_copy(update={"return_value": state.return_value.model_copy(update={"name": left})})
                assert not constraint.complete(lang.render_state(lang.canonical_state(bare, program), previous).removesuffix(lang.STOP_TOKEN))
            seen[left] = seen.get(left, 0) + 1
    assert {"__init__", "twice", "key"} <= set(seen), seen


def test_a_stop_on_in_the_same_frame_shows_only_what_its_line_can_have_called() -> None:
    """Without imports no library code written in Python runs: after a line that calls nothing, no return value; after
    one that calls f, only f's. With an import, library functions may return into the frame: any name."""
    program = "def f(a):\n    return a + 1\n\n\ndef g():\n    return 0\n\n\nx = 1\ny = f(x)\nz = y\n"
    after_call = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=11, locals={"y": "2"})],
                       return_value=ReturnValue(name="f", value="2"))

    def allowed(source: str, line: int, state: State) -> bool:
        previous = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line)])
        constraint = state_constraint(source, previous, action=Action(kind=ActionKind.STEP_OVER), breakpoints=[])
        return constraint.complete(lang.render_state(lang.canonical_state(state, source), previous).removesuffix(lang.STOP_TOKEN))

    assert allowed(program, 10, after_call)
    assert not allowed(program, 10, after_call.model_copy(update={"return_value": ReturnValue(name="g", value="2")}))
    quiet = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=10, locals={"x": "1"})], return_value=ReturnValue(name="f", value="2"))
    assert not allowed(program, 9, quiet)
    assert allowed(program, 9, quiet.model_copy(update={"return_value": None}))
    imported = "import math\n" + program.replace("x = 1", "x = math.floor(1.5)")  # lines shift by one
    library = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=11, locals={"x": "1"})], return_value=ReturnValue(name="floor", value="1"))
    assert allowed(imported, 10, library)


LIBRARY_BASE = '''from html.parser import HTMLParser


class Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


p = Collector()
p.feed('<p>Hi <b>x</b></p>')
tags = p.tags
'''


def test_methods_of_a_class_with_a_library_base_may_be_called_back_by_the_library() -> None:
    """``HTMLParser.feed`` calls the subclass's ``handle_starttag``: each recorded stop (the callback's frame, the return
    of ``Collector.feed`` after it) is in the set and in the whole decoding constraint, and its stacks are chains of calls."""
    cov = Coverage()
    check_program(LIBRARY_BASE, random.Random(0), cov, per_program=4, max_steps=40, name="library base")
    assert cov.steps > 40
    assert not cov.misses, [(m["action"], m["previous"], m["next"]) for m in cov.misses[:3]]
    assert not cov.grammar_misses and not cov.chain_misses, (cov.grammar_misses[:2], cov.chain_misses[:2])
    flow = program_flow(LIBRARY_BASE)
    assert ("handle_starttag", frozenset({10})) in flow.escaping
    assert ("__init__", frozenset({6})) in flow.escaping  # every method of the class
