"""The names a frame can show on a line (`model.static.frame_names`): the rules, the grammar, and recorded runs."""
from __future__ import annotations

import pytest
import regex

from model.static.flow_regex import locals_regex
from model.static.frame_names import calling_names, frame_names
from protocol.debugger import Action, ActionKind
from tests.recorded import recorded_programs
from tracegen.fast import record_program, replay_to_end
from tracegen.trees import InverseChain

PROGRAM = '''\
def f(table):
    out = sorted(table.values())
    cnt = 0
    for v in out:
        cnt = max(cnt, v)
    try:
        cnt / 0
    except ZeroDivisionError as err:
        pass
    return cnt

result = f({'a': 5})
'''


def test_a_name_is_visible_only_where_its_binding_can_have_run() -> None:
    names = frame_names(PROGRAM)
    assert names[("f", 2)] == {"table"}  # parameters from the first line
    assert names[("f", 3)] == {"table", "out"}  # out is bound on line 2
    assert {"cnt", "v"} <= names[("f", 4)] and "err" not in names[("f", 4)]
    assert "err" in names[("f", 9)]  # bound by the except clause
    assert "result" not in names[("<module>", 12)]  # bound only after line 12 ran


def test_a_class_body_shows_the_names_it_binds_but_not_its_methods() -> None:
    program = ("import math\n\n\nclass Shape:\n    kind = 'shape'\n    sides: int = 0\n    unit: str\n\n    def area(self):\n"
               "        return 0.0\n\n    label = kind.upper()\n\n\nclass Odd(Shape, metaclass=type):\n    x = 1\n\n\nsquare = Shape()\n")
    names = frame_names(program)
    assert names[("Shape", 4)] == set() and names[("Shape", 6)] == {"kind"}
    assert names[("Shape", 12)] == {"kind", "sides"}  # `unit: str` binds nothing, `area` is a function (hidden)
    assert ("Odd", 16) not in names  # a metaclass may fill the namespace first: any name
    assert names[("<module>", 19)] == set()  # math (a module) and Shape (a class) are never shown


def test_a_standard_library_import_is_shown_by_its_value() -> None:
    """``from math import pi`` binds a float (shown), ``sqrt`` a routine and ``Counter`` a class (hidden, as the recorder
    hides them); a module outside `HIDDEN_IMPORTS` is not judged."""
    program = "from math import pi, sqrt\nfrom collections import Counter as C\nfrom numpy import array\nx = C('ab')\n"
    assert frame_names(program)[("<module>", 4)] == {"pi", "array"}
    states = replay_to_end(record_program(program.replace("from numpy import array\n", "")), [Action(kind=ActionKind.STEP_OVER)] * 5)
    assert set(states[-2].frames[0].locals) == {"pi"}


def test_a_frame_waiting_on_a_call_may_show_what_its_line_binds() -> None:
    program = "def g(v):\n    return v\n\ntotal = (n := 1) + g(2)\nprint(total)\n"
    waiting, before = calling_names(program)[("<module>", 4)], frame_names(program)[("<module>", 4)]
    assert before == set() and waiting == {"n", "total"}  # `n` is bound before g runs (`total` after: a superset); g: a function, never shown
    assert calling_names(program)[("g", 2)] == frame_names(program)[("g", 2)] == {"v"}


def test_a_frame_below_the_top_shows_only_names_its_code_can_bind() -> None:
    """A step inside a callee keeps the caller's frame: an invented name there (`converted` in a program without one) is refused."""
    from model.prompt import language as lang
    from model.decode.constraints import state_constraint
    from protocol.debugger import Action, ActionKind, Frame, State, StopReason

    inside = State(reason=StopReason.STEP, frames=[Frame(name="f", line=2, locals={"table": "{'a': 5}"}),
                                                   Frame(name="<module>", line=12, locals={})])  # fmt: skip

    def after(module_locals: dict[str, str]) -> str:
        stop = State(reason=StopReason.STEP, frames=[Frame(name="f", line=3, locals={"out": "[5]", "table": "{'a': 5}"}),
                                                     Frame(name="<module>", line=12, locals=module_locals)])  # fmt: skip
        return lang.render_state(lang.canonical_state(stop, PROGRAM), inside).removesuffix(lang.STOP_TOKEN)

    constraint = state_constraint(PROGRAM, inside, action=Action(kind=ActionKind.STEP_OVER))
    assert constraint.complete(after({}))
    assert not constraint.complete(after({"converted": "1"}))
    assert state_constraint(PROGRAM, inside).complete(after({"converted": "1"}))  # only the flow's names refuse it


def test_unknown_where_globals_can_come_from_elsewhere() -> None:
    program = "globals()['x'] = 1\nprint(x)\n"
    assert ("<module>", 2) not in frame_names(program)
    assert frame_names("def f(:\n") == {}


def test_free_variables_and_globals_declared_in_functions() -> None:
    program = "def outer():\n    a = 1\n    def inner():\n        return a\n    return inner()\n\ndef g():\n    global seen\n    seen = 1\n\nouter()\ng()\n"
    names = frame_names(program)
    assert names[("inner", 4)] == {"a"}
    assert "seen" in names[("<module>", 11)]  # g may have run before (here it has not, but a global may be set by any call)


def test_locals_regex() -> None:
    full = regex.compile(locals_regex({"a", "b"}, delta_allowed=False))
    assert full.fullmatch('{"a":"1","b":"2"}') and full.fullmatch("{}") and not full.fullmatch('{"c":"1"}')
    assert not full.fullmatch('{"a":"1",..}')
    either = regex.compile(locals_regex({"a"}, delta_allowed=True))
    assert either.fullmatch('{"a":"1",..}') and either.fullmatch("{..}") and not either.fullmatch('{"b":"1",..}')
    assert regex.fullmatch(locals_regex(set(), delta_allowed=True), "{..}")


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_frame_shows_only_visible_names(seed: int) -> None:
    checked = 0
    for source, trace in recorded_programs(15, seed):
        top, below = frame_names(source), calling_names(source)
        for state in InverseChain(trace, max_states=400).states:
            for depth, frame in enumerate(state.frames):
                names = top if depth == 0 else below  # a frame below the top waits on a call its line made
                visible = names.get((frame.name, frame.line)) if frame.file is None else None
                if visible is None:
                    continue
                checked += 1
                assert set(frame.locals) <= visible, (source, frame)
    assert checked > 200


def test_a_breakpoint_stop_shows_only_the_names_visible_on_its_line() -> None:
    """A run to a breakpoint (continue, or the one-off breakpoint action) may push any frames, but the top one
    stops before its line runs: its keys are that line's visible names (an invented `dct` is refused)."""
    from model.prompt import language as lang
    from model.decode.constraints import state_constraint
    from protocol.debugger import Action, ActionKind, Frame, State, StopReason

    entry = State(reason=StopReason.ENTRY, frames=[Frame(name="<module>", line=1, locals={})])
    table = "{'a': 5}"

    def at_line_3(local_names: dict[str, str]) -> str:
        stop = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="f", line=3, locals=local_names),
                                                            Frame(name="<module>", line=12, locals={})])  # fmt: skip
        return lang.render_state(lang.canonical_state(stop, PROGRAM), entry).removesuffix(lang.STOP_TOKEN)

    right = at_line_3({"out": "[5]", "table": table})
    invented = at_line_3({"dct": table, "out": "[5]"})
    too_early = at_line_3({"cnt": "0", "out": "[5]", "table": table})  # cnt is bound by line 3 itself
    for action, breakpoints in ((Action(kind=ActionKind.CONTINUE), [3]), (Action(kind=ActionKind.BREAKPOINT, line=3), [])):
        constraint = state_constraint(PROGRAM, entry, action=action, breakpoints=breakpoints)
        assert constraint.complete(right), action
        assert not constraint.complete(invented) and not constraint.complete(too_early), action
        assert state_constraint(PROGRAM, entry).complete(invented)  # only the flow's names refuse it
