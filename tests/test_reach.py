"""A coarse action's fine steps (model.static.reach): which step a Continue / Step Out takes at each stop, the narrowing
to entering a call where the line certainly calls, checked on real recorded steps, and a session that takes them."""
from __future__ import annotations

from pathlib import Path

from model.budget import StepBudget
from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.session import NeuralDebugger
from model.static.flow import next_locations
from model.static.reach import (back_on_calling_line, certain_calls, entering, fine_step, no_target_ahead, reaching_functions,
                                returned_call, without_recalled_top, without_returned_call, without_unreachable_breakpoints)  # fmt: skip
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.sample_programs import CHECK_RUN_SCENARIO
from tracegen.fast import record_program, replay_to_end

ROOT = Path(__file__).resolve().parent.parent
INTO, OVER = ActionKind.STEP_INTO, ActionKind.STEP_OVER

PROGRAM = CHECK_RUN_SCENARIO


def _stop(*frames: tuple[str, int], returned: bool = False) -> State:
    """A step stop from (name, line) pairs, innermost first (`returned`: just back from a call, its value pending)."""
    return State(reason=StopReason.STEP, frames=[Frame(name=n, line=line) for n, line in frames],
                 return_value=ReturnValue(name="check", value="2") if returned else None)


def test_the_functions_that_reach_a_breakpoint_are_found_through_the_calls() -> None:
    assert reaching_functions(PROGRAM, frozenset({4})) == {"check", "run", "<module>"}
    assert reaching_functions(PROGRAM, frozenset({7})) == {"run", "<module>"}
    assert reaching_functions(PROGRAM, frozenset()) == frozenset()
    assert reaching_functions("def f(:\n", frozenset({1})) is None


def test_a_continue_steps_over_what_cannot_reach_and_into_what_certainly_calls() -> None:
    bp = {4}
    assert fine_step(PROGRAM, _stop(("<module>", 1)), bp).kind is OVER  # a def line
    assert fine_step(PROGRAM, _stop(("<module>", 12)), bp) == fine_step(PROGRAM, _stop(("run", 9), ("<module>", 12)), bp)
    assert fine_step(PROGRAM, _stop(("run", 9), ("<module>", 12)), bp).kind is INTO
    assert fine_step(PROGRAM, _stop(("run", 9), ("<module>", 12)), bp).enter
    assert fine_step(PROGRAM, _stop(("run", 8), ("<module>", 12)), bp).kind is OVER
    assert fine_step(PROGRAM, _stop(("check", 2), ("run", 9), ("<module>", 12)), bp).kind is OVER
    # a return to the calling line: the call already ran, so the step into it is not narrowed
    back = fine_step(PROGRAM, _stop(("run", 9), ("<module>", 12), returned=True), bp)
    assert back.kind is INTO and not back.enter
    # no breakpoint reachable: every line stepped over, the calls run inside the steps
    assert fine_step(PROGRAM, _stop(("run", 9), ("<module>", 12)), set()).kind is OVER
    # leaving a frame: into (the calling line) for Step Out, over for a Continue whose caller cannot reach a target
    assert fine_step(PROGRAM, _stop(("run", 10), ("<module>", 12)), set(), step_out=True).kind is INTO
    assert fine_step(PROGRAM, _stop(("run", 10), ("<module>", 12)), set()).kind is OVER
    # what the analysis cannot place: the plain fine step
    assert fine_step(PROGRAM, _stop(("nowhere", 3)), bp) == fine_step("import threading\n", _stop(("<module>", 1)), bp)
    assert fine_step(PROGRAM, _stop(("nowhere", 3)), bp).kind is INTO and not fine_step(PROGRAM, _stop(("nowhere", 3)), bp).enter


def test_no_target_ahead_when_no_frame_the_action_runs_on_can_reach_a_breakpoint() -> None:
    inside_check = _stop(("check", 2), ("run", 9), ("<module>", 12))
    # a breakpoint in check (line 4): check holds it, run and the module call check again: nothing is settled
    assert not no_target_ahead(PROGRAM, inside_check, {4}) and not no_target_ahead(PROGRAM, inside_check, {4}, step_out=True)
    # a breakpoint in run (line 8): check cannot reach it, so its Step Out lands in run; a Continue can still stop there
    assert no_target_ahead(PROGRAM, inside_check, {8}, step_out=True)
    assert not no_target_ahead(PROGRAM, inside_check, {8})
    # a breakpoint on the last module line: no function reaches it, the module frame does
    assert no_target_ahead(PROGRAM, _stop(("run", 9), ("<module>", 12)), {13}, step_out=True)
    assert not no_target_ahead(PROGRAM, _stop(("run", 9), ("<module>", 12)), {13})
    # no breakpoint at all: every Continue and Step Out is settled
    assert no_target_ahead(PROGRAM, inside_check, set()) and no_target_ahead(PROGRAM, _stop(("<module>", 1)), set())
    # what the analysis cannot place, or a finished program: not settled
    assert not no_target_ahead(PROGRAM, _stop(("nowhere", 3)), set())
    assert not no_target_ahead("def f(:\n", _stop(("<module>", 1)), set())
    assert not no_target_ahead(PROGRAM, State(reason=StopReason.EXITED), set())


def test_auto_coarse_steps_jump_when_nothing_can_be_reached(tiny_checkpoint: Path) -> None:
    """coarse_steps="auto": a Continue with no breakpoint ahead is one prediction; with one ahead, fine steps."""
    def session(breakpoints: list[int]) -> NeuralDebugger:
        s = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, "prog.py", breakpoints=breakpoints, max_state_tokens=48,
                                           budget=StepBudget(seconds=None, tokens=400), coarse_steps="auto")  # fmt: skip
        s.start_from(State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=12)]))
        return s

    settled = session([])
    settled.step(Action(kind=ActionKind.CONTINUE))
    assert [h.action.kind for h in settled.history] == [ActionKind.CONTINUE]
    ahead = session([4])
    ahead.step(Action(kind=ActionKind.CONTINUE))
    assert ahead.history[0].action.kind is INTO  # a fine step, as coarse_steps="fine" takes


def test_only_calls_that_run_whenever_the_line_runs_are_certain() -> None:
    source = """\
def f(x):
    return x

def g(x):
    return x

h = f
a = f(1) + g(2)
b = f(1) if a else g(2)
c = a and f(1) or g(2)
for i in f([1]):
    pass
d = h(3)
e = [f(i) for i in range(2)]
k = (lambda: f(1))()
obj = str(a).upper()
while f(0):
    pass
"""
    assert certain_calls(source, 8) == {"f", "g"}
    assert certain_calls(source, 9) == set()  # the branches of an if-expression
    assert certain_calls(source, 10) == set()  # `a and f(1)`: f only when a is true; g only sometimes
    assert certain_calls(source, 11) == set()  # a for header: its iterable once, then the line again per item
    assert certain_calls(source, 13) == set()  # h is bound by an assignment: it could be anything
    assert certain_calls(source, 14) == {"range"}  # the comprehension's calls run inside it, not for sure
    assert certain_calls(source, 15) == set()
    assert certain_calls(source, 16) == {"str"}  # builtins are names too; fine_step keeps only user functions
    assert certain_calls(source, 17) == {"f"}


def test_entering_is_true_of_every_recorded_step_into_where_it_narrows() -> None:
    """On real traces (the fast recorder, which reproduces debugpy's stops): wherever `fine_step` narrows a Step Into
    to entering a call, the real next stop is among those `entering` keeps. Every line a target, so every call counts."""
    checked = 0
    sources = [(ROOT / "bench" / "programs" / name).read_text() for name in ("bank.py", "cart.py", "fib.py", "grades.py", "queue_sim.py")]
    for source in [PROGRAM, *sources]:
        trace = record_program(source)
        targets = set(lang.program_info(source).lines or ())
        states = replay_to_end(trace, [Action(kind=INTO)] * 120)
        for previous, state in zip(states, states[1:]):
            if state.finished or not fine_step(source, previous, targets).enter:
                continue
            flow = next_locations(source, previous, Action(kind=INTO), sorted(targets))
            assert entering(flow, len(previous.frames)).allows(previous, state), (previous.frames, state.frames)
            checked += 1
    assert checked > 15


def test_the_entering_constraint_refuses_a_stop_that_stays_in_the_frame() -> None:
    # back on line 9 after a call (a line event there enters check() anyway: tests/test_first_call.py)
    previous = _stop(("run", 9), ("<module>", 12), returned=True)
    into = Action(kind=INTO)
    entered = State(reason=StopReason.STEP, frames=[Frame(name="check", line=2, locals={"v": "1"}),
                                                    Frame(name="run", line=9), Frame(name="<module>", line=12)])
    stayed = State(reason=StopReason.STEP, frames=[Frame(name="run", line=8), Frame(name="<module>", line=12)])
    plain = state_constraint(PROGRAM, previous, action=into, breakpoints=[4])
    narrowed = state_constraint(PROGRAM, previous, action=into, breakpoints=[4], enter=True)

    def text(state: State) -> str:  # as the model writes it: the stop token ends the generation, outside the text
        return lang.render_state(state, previous).removesuffix(lang.STOP_TOKEN)

    assert plain.complete(text(entered)) and plain.complete(text(stayed))
    assert narrowed.complete(text(entered))
    assert not narrowed.allows(text(stayed))


def test_a_session_continue_takes_the_fine_steps_the_source_picks(tiny_checkpoint: Path) -> None:
    """Even an untrained model enters run() on line 12: the narrowing, not the weights, decides that."""
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, "prog.py", breakpoints=[4], max_state_tokens=48,
                                             budget=StepBudget(seconds=None, tokens=200), coarse_steps="fine")  # fmt: skip
    session.start_from(State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=12)]))
    session.step(Action(kind=ActionKind.CONTINUE))
    first = session.history[0]
    assert first.action.kind is INTO
    assert [f.name for f in first.state.frames][-2:] == ["run", "<module>"] or first.state.reason is StopReason.EXCEPTION
    # the plain Step Into after it is not narrowed: its constraint is the one a session without fine steps builds
    session.step(Action(kind=INTO))
    assert session._enter_call is False


def test_a_stop_back_on_the_calling_line_is_told_from_a_line_event_after_step_over() -> None:
    inside = _stop(("check", 4), ("run", 9), ("<module>", 12))
    assert back_on_calling_line(inside, _stop(("run", 9), ("<module>", 12), returned=True))
    # Step Over onto the next line shows the stepped-over call's value too, but the line runs: a breakpoint there hits
    assert not back_on_calling_line(_stop(("run", 9), ("<module>", 12)), _stop(("run", 8), ("<module>", 12), returned=True))
    assert not back_on_calling_line(inside, _stop(("run", 8), ("<module>", 12)))  # Step Over from a last line: the next line


def test_no_target_ahead_is_never_wrong_on_recorded_runs() -> None:
    """On real traces (the fast recorder reproduces debugpy's stops): wherever `no_target_ahead` settles a Continue or a
    Step Out, the real one stops on no breakpoint. Every stop of an all-Step-Into walk, with seeded breakpoint sets."""
    import random

    from tracegen.fast import ReplaySession

    rng = random.Random(0)
    settled = {False: 0, True: 0}
    sources = [PROGRAM, *((ROOT / "bench" / "programs").glob("*.py"))]
    for source in [s if isinstance(s, str) else s.read_text() for s in sources]:
        trace = record_program(source)
        executable = sorted(lang.program_info(source).lines or ())
        walk = replay_to_end(trace, [Action(kind=INTO)] * 60)
        for _ in range(3):
            targets = rng.sample(executable, k=min(len(executable), rng.randint(1, 3)))
            for k, state in enumerate(walk):
                if state.finished:
                    continue
                for step_out in (False, True):
                    if not no_target_ahead(source, state, targets, step_out=step_out):
                        continue
                    session = ReplaySession(trace, [])
                    session.start()
                    for _ in range(k):
                        session.step(Action(kind=INTO))
                    session.set_breakpoints(targets)
                    after = session.step(Action(kind=ActionKind.STEP_RETURN if step_out else ActionKind.CONTINUE))
                    assert after.reason is not StopReason.BREAKPOINT, (source.splitlines()[0], state.frames, targets, step_out)
                    settled[step_out] += 1
    assert settled[False] > 100 and settled[True] > 100


# `trace` is called once on line 9, after `double` (called in a comprehension on line 8: any number of times)
RETURNED = """\
def double(v):
    return v * 2

def trace(m):
    return m[0] + m[1]

grid = [1, 2]
twice = [double(v) for v in grid]
print(grid, trace(grid))
print(len(twice))
"""


def test_a_call_that_came_back_is_not_started_again_by_its_line() -> None:
    back = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=9)], return_value=ReturnValue(name="trace", value="3"))
    inside = _stop(("trace", 5), ("<module>", 9))
    assert returned_call(inside, OVER, back) == "trace"
    assert returned_call(inside, ActionKind.CONTINUE, back) is None  # a Continue stops on line events only
    assert returned_call(_stop(("<module>", 8)), OVER, back) is None  # Step Over onto the line: a line event
    into = Action(kind=INTO)
    flow = next_locations(RETURNED, back, into)
    assert flow.allows(back, _stop(("trace", 5), ("<module>", 9)))
    narrowed = without_returned_call(flow, RETURNED, back, "trace")
    assert not narrowed.allows(back, _stop(("trace", 5), ("<module>", 9)))
    assert narrowed.allows(back, _stop(("<module>", 10)))
    # a function a comprehension calls may be called again by the rest of its line
    comp = State(reason=StopReason.STEP, frames=[Frame(name="<listcomp>", line=8), Frame(name="<module>", line=8)],
                 return_value=ReturnValue(name="double", value="2"))
    assert without_returned_call(next_locations(RETURNED, comp, into), RETURNED, comp, "double") == next_locations(RETURNED, comp, into)
    # and the grammar: the session's spec refuses the call started again
    again = lang.render_state(_stop(("trace", 5), ("<module>", 9)), back).removesuffix(lang.STOP_TOKEN)
    assert state_constraint(RETURNED, back, action=into).complete(again)
    assert not state_constraint(RETURNED, back, action=into, returned="trace").allows(again)


CLASSES = """\
from dataclasses import dataclass

@dataclass
class Point:
    x: int
    y: int = 0

class Bag:
    size = 2

    def total(self):
        return self.size

p = Point(1)
print(p, Bag().total())
"""


def test_a_class_statement_runs_its_body_once() -> None:
    over, into = Action(kind=OVER), Action(kind=INTO)
    last = _stop(("Point", 6), ("<module>", 4))  # the body's last line; after it the decorator runs (line 3)
    flow = next_locations(CLASSES, last, over)
    assert flow.allows(last, _stop(("Point", 3), ("<module>", 4)))  # the line starts the class body: once
    cut = without_recalled_top(flow, CLASSES, last, OVER)
    assert not cut.allows(last, _stop(("Point", 3), ("<module>", 4))) and cut.allows(last, _stop(("<module>", 3)))
    back = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=8)], return_value=ReturnValue(name="Bag", value="None"))
    assert not without_returned_call(next_locations(CLASSES, back, into), CLASSES, back, "Bag").allows(back, _stop(("Bag", 8), ("<module>", 8)))


def test_a_returned_call_is_never_started_again_on_recorded_runs() -> None:
    """On real traces: every recorded Step Into from a step's stop back on its calling line lies in the narrowed flow
    (generators resumed, functions library code calls and lines that call twice keep their shapes)."""
    from tracegen.synth import generate_program
    import random

    rng = random.Random(3)
    sources = [RETURNED, PROGRAM, CLASSES, *(p.read_text() for p in sorted((ROOT / "bench" / "programs").glob("*.py"))),
               *(p.read_text() for p in sorted((ROOT / "examples").glob("*.py"))), *(generate_program(rng).source for _ in range(40))]
    narrowed = 0
    for source in sources:
        trace = record_program(source)
        for script in ([INTO] * 150, [INTO, INTO, OVER] * 50):
            states = replay_to_end(trace, [Action(kind=k) for k in script])
            for i in range(len(states) - 2):  # states[i + 1] after script[i]
                before, previous, state = states[i], states[i + 1], states[i + 2]
                returned = returned_call(before, script[i], previous)
                if returned is None or state.finished or script[i + 1] is not INTO:
                    continue
                flow = next_locations(source, previous, Action(kind=INTO))
                cut = without_returned_call(flow, source, previous, returned)
                assert cut.allows(previous, state), (source.splitlines()[:3], previous.frames, state.frames)
                narrowed += cut != flow
    assert narrowed > 20


def test_a_continue_with_no_breakpoint_ahead_is_not_offered_one() -> None:
    """The jump's grammar (session and evaluation alike) leaves out breakpoint stops `no_target_ahead` rules out."""
    cont = Action(kind=ActionKind.CONTINUE)
    hit = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="double", line=2, locals={"v": "1"}),
                                                      Frame(name="<listcomp>", line=8), Frame(name="<module>", line=8)])

    def text(state: State, previous: State) -> str:
        return lang.render_state(state, previous).removesuffix(lang.STOP_TOKEN)

    before, after = _stop(("<module>", 8)), _stop(("<module>", 9))
    assert state_constraint(RETURNED, before, action=cont, breakpoints=[2]).complete(text(hit, before))
    assert not state_constraint(RETURNED, after, action=cont, breakpoints=[2]).allows(text(hit, after)[:40])
    flow = next_locations(RETURNED, after, cont, [2])
    assert flow.breakpoint and not without_unreachable_breakpoints(flow, RETURNED, after, ActionKind.CONTINUE, [2]).breakpoint
    # a step runs a part of what a Continue would: no breakpoint for it either; a run to a line keeps its shapes
    step = next_locations(RETURNED, after, Action(kind=OVER), [2])
    assert step.breakpoint and not without_unreachable_breakpoints(step, RETURNED, after, OVER, [2]).breakpoint
    run_to = next_locations(RETURNED, after, Action(kind=ActionKind.BREAKPOINT, line=2), [2])
    assert without_unreachable_breakpoints(run_to, RETURNED, after, ActionKind.BREAKPOINT, [2]) == run_to


def test_a_step_out_of_a_generator_may_run_its_consumer_on_to_a_breakpoint() -> None:
    """Leaving a generator at a yield runs the loop that consumes it: a breakpoint there is ahead (a recorded Step Out
    from `adjacent` stopped on line 5's breakpoint)."""
    source = "def adjacent(items):\n    for i in range(len(items) - 1):\n        yield items[i], items[i + 1]\n\nfor a, b in adjacent([1, 4, 2]):\n    print(b - a)\n"
    inside = _stop(("adjacent", 2), ("<module>", 5))
    assert not no_target_ahead(source, inside, [6], step_out=True)
    assert no_target_ahead(PROGRAM, _stop(("check", 2), ("run", 9), ("<module>", 12)), [10], step_out=True)  # a plain function
    trace = record_program(source)
    from tracegen.fast import ReplaySession

    session = ReplaySession(trace, [6])
    session.start()
    while not (session.state.frames and session.state.frames[0].name == "adjacent"):
        session.step(Action(kind=INTO))
    assert session.step(Action(kind=ActionKind.STEP_RETURN)).reason is StopReason.BREAKPOINT
