"""What one step cannot change (`model.static.line_effects`): the rule, the grammar, and every recorded step."""
from __future__ import annotations

import random

import pytest

from model.prompt import language as lang
from model.decode.constraints import state_constraint
from model.static.flow import next_locations
from model.static.line_effects import is_immutable_repr, kept_locals, quiet_lines, silent_lines, staying
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.recorded import recorded_programs

PROGRAM = "n = 1\nxs = [1]\nname = 'a'\nxs.append(n)\nn = n + 1\nprint(n)\n"


def _at(line: int, program: str = PROGRAM, **values: str) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line, source=lang.source_line(program, line), locals=dict(values))])


def test_immutable_reprs() -> None:
    assert all(is_immutable_repr(t) for t in ["1", "-2.5", "'a'", "b'x'", "None", "True", "(1+2j)"])
    assert not any(is_immutable_repr(t) for t in ["[1]", "(1, [2])", "{}", "<object at 0x?>", "inf", "deque([])"])


def test_a_line_keeps_what_it_does_not_bind() -> None:
    kept = kept_locals(PROGRAM, _at(4, n="1", xs="[1]", name="'a'"))[0]
    assert kept.kept == {"n": "1", "name": "'a'"}  # xs is mutable: free
    # `n = n + 1` runs no code of the program and reads only n: xs is out of its reach (model.static.untouched)
    assert kept_locals(PROGRAM, _at(5, n="1", xs="[1, 1]", name="'a'"))[0].kept == {"name": "'a'", "xs": "[1, 1]"}
    assert kept_locals(PROGRAM + "def f():\n    global n\n    n = 0\n", _at(4, n="1", name="'a'"))[0].kept == {"name": "'a'"}
    assert kept_locals(PROGRAM + "exec('n = 2')\n", _at(4, n="1")) == {}
    assert kept_locals(PROGRAM + "class C:\n    def __repr__(self):\n        return '1'\n", _at(4, n="1")) == {}


def test_the_step_grammar_keeps_them() -> None:
    previous = _at(4, n="1", xs="[1]", name="'a'")
    constraint = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.STEP_OVER), reprs=True)
    head = "<|reason_step|><|frame_sep|><module><|line_sep|>5"
    assert constraint.complete(head + '{"xs":"[1, 1]",..}')
    assert constraint.complete(head + "{..}")
    assert not constraint.complete(head + '{"n":"1",..}')  # a delta lists only what may change
    assert not constraint.allows(head + '{"name":"\'b')
    assert not constraint.allows(head + '{"n":"1","name":"\'a\'"')  # in full only when a name disappears: none can here
    deleting = PROGRAM.replace("xs.append(n)", "del xs")
    gone = state_constraint(deleting, _at(4, deleting, n="1", xs="[1]", name="'a'"), action=Action(kind=ActionKind.STEP_OVER), reprs=True)
    assert gone.complete(head + '{"n":"1","name":"\'a\'"}')  # in full, the kept values and names
    assert not gone.allows(head + '{"n":"2"')
    assert not gone.complete(head + '{"n":"1"}')  # name cannot disappear
    rebinding = state_constraint(PROGRAM, _at(5, n="1", xs="[1, 1]", name="'a'"), action=Action(kind=ActionKind.STEP_OVER), reprs=True)
    line6 = "<|reason_step|><|frame_sep|><module><|line_sep|>6"
    assert rebinding.complete(line6 + '{"n":"2",..}')
    assert not rebinding.allows(line6 + '{"name"')  # n = n + 1 rebinds n to a shown value: nothing disappears, no full form
    cont = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.CONTINUE), breakpoints=[6], reprs=True)
    assert cont.allows('<|reason_breakpoint|><|frame_sep|><module><|line_sep|>6{"n"')  # more than one line may run


def test_a_handlers_name_may_disappear() -> None:
    program = "try:\n    x = 1 / 0\nexcept ZeroDivisionError as err:\n    msg = str(err)\nprint(msg)\n"
    previous = _at(4, program, err="ZeroDivisionError('division by zero')")
    constraint = state_constraint(program, previous, action=Action(kind=ActionKind.STEP_OVER), reprs=True)
    assert constraint.complete("<|reason_step|><|frame_sep|><module><|line_sep|>5" + '{"msg":"\'division by zero\'"}')  # err deleted


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_step_keeps_them(seed: int) -> None:
    from bench.flow_coverage import scripts_for

    rng = random.Random(seed)
    checked = 0
    for source, trace in recorded_programs(25, seed):
        for _, states, actions in scripts_for(trace, rng, 2, 30):
            for action, previous, state in zip(actions, states, states[1:]):
                if action.kind not in (ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN) or state.reason is not StopReason.STEP:
                    continue
                old, new = list(reversed(previous.frames)), list(reversed(state.frames))
                for depth, kept in kept_locals(source, lang.canonical_state(previous, source), action.kind).items():
                    if depth >= len(new) or new[depth].name != old[depth].name or len(new) != depth + 1:
                        continue  # only the continued top frame
                    after = lang.canonical_state(state, source).frames[len(new) - 1 - depth].locals
                    for key, value in kept.kept.items():
                        assert after.get(key) == value, (source, old[depth].line, new[depth].line, action.kind, key, value, after)
                        checked += 1
                    assert set(after) <= kept.shown | kept.rebindable, (source, old[depth].line, set(after) - kept.shown)
    assert checked > 100


QUIET = """\
def f(rows):
    total = 0.0
    names, seen = ["ann", "bob"], {}
    for x in [1, 2]:
        total = total + x
    pair = {rows: 1}
    while True:
        break
    rows.append(-1)
    return total
f([])
"""


def test_quiet_lines_run_nothing() -> None:
    quiet = {line for name, line in quiet_lines(QUIET) if name == "f"}
    assert quiet == {2, 3, 4, 7, 8}  # not an operator (5), a key the program may hash (6), a call (9), a return (10)
    assert not quiet_lines(QUIET + "class C:\n    def __repr__(self):\n        return '1'\n")  # reprs may look like literals
    previous = State(reason=StopReason.STEP, frames=[Frame(name="f", line=3, locals={"rows": "[]", "total": "0.0"}),
                                                     Frame(name="<module>", line=11, locals={"items": "[1]"})])  # fmt: skip
    kept = kept_locals(QUIET, previous, ActionKind.STEP_OVER)
    assert kept[1].kept == {"rows": "[]", "total": "0.0"} and kept[0].kept == {"items": "[1]"}  # mutable ones too
    loud = previous.model_copy(update={"frames": [previous.frames[0].model_copy(update={"line": 9}), previous.frames[1]]})
    assert kept_locals(QUIET, loud, ActionKind.STEP_OVER)[1].kept == {"total": "0.0"}


def test_a_silent_line_steps_to_its_own_next_line() -> None:
    assert {line for name, line in silent_lines(QUIET) if name == "f"} == {2, 3, 4, 7, 8}
    assert silent_lines("def f(a):\n    b = a\n    return b\nf(1)\n") == {("<module>", 1)}  # reading a name may raise; a plain def reads none
    assert not silent_lines("def f(a=b):\n    return a\nf(1)\n") and not quiet_lines("@g\ndef f(a):\n    return a\nf(1)\n")
    previous = State(reason=StopReason.STEP, frames=[Frame(name="f", line=2, locals={"rows": "[]"}), Frame(name="<module>", line=11)])
    flow = next_locations(QUIET, previous, Action(kind=ActionKind.STEP_OVER))
    back = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=11)], return_value=ReturnValue(name="f", value="None"))
    assert flow.allows(previous, back)  # the flow alone: any line may raise into the caller's handler
    narrowed = staying(flow, QUIET, previous, ActionKind.STEP_OVER)
    assert not narrowed.allows(previous, back) and not narrowed.exception and not narrowed.exit
    assert narrowed.allows(previous, State(reason=StopReason.STEP, frames=[Frame(name="f", line=3, locals={"rows": "[]", "total": "0.0"}), back.frames[0]]))
    loud = previous.model_copy(update={"frames": [previous.frames[0].model_copy(update={"line": 5}), previous.frames[1]]})
    assert staying(flow, QUIET, loud, ActionKind.STEP_OVER) is flow


@pytest.mark.parametrize("seed", [2])
def test_every_recorded_step_from_a_quiet_line_keeps_the_whole_stack(seed: int) -> None:
    from bench.flow_coverage import scripts_for

    rng = random.Random(seed)
    checked = 0
    for source, trace in recorded_programs(40, seed):
        quiet = quiet_lines(source)
        for _, states, actions in scripts_for(trace, rng, 2, 30):
            for action, previous, state in zip(actions, states, states[1:]):
                if action.kind not in (ActionKind.STEP_INTO, ActionKind.STEP_OVER) or not previous.frames or state.finished:
                    continue
                if (previous.frames[0].name, previous.frames[0].line) not in quiet:
                    continue
                assert len(state.frames) == len(previous.frames), (source, previous.frames[0].line)  # the frame stops again
                after = [f.locals for f in reversed(lang.canonical_state(state, source).frames)]
                for depth, kept in kept_locals(source, lang.canonical_state(previous, source), action.kind).items():
                    for key, value in kept.kept.items():
                        assert after[depth].get(key) == value, (source, previous.frames[0].line, key, value, after[depth])
                        checked += 1
    assert checked > 50


def test_a_quiet_line_shows_no_return_value_even_where_library_code_could_run() -> None:
    """The program imports, so a step may show a library function's return value; not after a line that runs no code."""
    program = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n\n\nprint(area(2.0))\n"
    previous = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=4)])
    after = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=8)])
    constraint = state_constraint(program, previous, action=Action(kind=ActionKind.STEP_OVER))
    assert constraint.complete(lang.render_state(after, previous).removesuffix(lang.STOP_TOKEN))
    shown = after.model_copy(update={"return_value": ReturnValue(name="namedtuple", value="1")})
    assert not constraint.complete(lang.render_state(shown, previous).removesuffix(lang.STOP_TOKEN))
