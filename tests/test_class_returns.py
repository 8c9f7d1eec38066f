"""A Step Over from a class statement shows the class body's return value (model.static.class_returns)."""
from __future__ import annotations

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.class_returns import CELL, class_statement_return, showing_class_return
from model.static.flow import next_locations
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.recorded import recorded_steps

OVER = ActionKind.STEP_OVER
PROGRAM = """\
class Counter:
    def __init__(self):
        self.counts = {}


class Loud(Counter):
    def __init__(self):
        super().__init__()


c = Loud()
print(c.counts)
"""


def _module(line: int, returned: ReturnValue | None = None) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line)], return_value=returned)


def test_the_class_body_returns_none_or_its_class_cell() -> None:
    assert class_statement_return(PROGRAM, "<module>", 1) == ("Counter", frozenset({"None"}))
    assert class_statement_return(PROGRAM, "<module>", 6) == ("Loud", frozenset({"None", CELL}))  # super(): a __class__ cell
    assert class_statement_return(PROGRAM, "<module>", 11) is None  # not a class statement


def test_a_step_over_from_the_class_line_must_show_it() -> None:
    previous = _module(1)
    flow = showing_class_return(next_locations(PROGRAM, previous, Action(kind=OVER)), PROGRAM, previous, OVER)
    assert flow.allows(previous, _module(6, ReturnValue(name="Counter", value="None")))
    assert not flow.allows(previous, _module(6)) and not flow.allows(previous, _module(6, ReturnValue(name="Counter", value="1")))
    constraint = state_constraint(PROGRAM, previous, action=Action(kind=OVER))
    assert constraint.complete(lang.render_state(_module(6, ReturnValue(name="Counter", value="None")), previous).removesuffix(lang.STOP_TOKEN))
    assert not constraint.complete(lang.render_state(_module(6), previous).removesuffix(lang.STOP_TOKEN))
    back = _module(1, ReturnValue(name="Counter", value="None"))  # back on the class line after its body returned
    assert showing_class_return(next_locations(PROGRAM, back, Action(kind=OVER)), PROGRAM, back, OVER).known_return is None
    shown_before = _module(6, ReturnValue(name="Counter", value="None"))  # Loud's line event, showing Counter's body
    assert showing_class_return(next_locations(PROGRAM, shown_before, Action(kind=OVER)), PROGRAM, shown_before, OVER).known_return.name == "Loud"


def test_classes_whose_binding_may_run_more_code_are_not_judged() -> None:
    body = "    x = 1\n"
    for program, line in (("@dataclass\nclass C:\n" + body, 2), ("class C(metaclass=M):\n" + body, 1), ("class C(dict):\n" + body, 1),
                          ("class B:\n    def __init_subclass__(cls):\n        pass\nclass C(B):\n" + body, 4),
                          ("class D:\n    def __set_name__(self, owner, name):\n        pass\nclass C:\n    d = D()\n", 4)):  # fmt: skip
        assert class_statement_return(program, "<module>", line) is None, program


def test_every_recorded_step_over_is_allowed() -> None:
    """On real traces: all-Step-Over walks of class-heavy programs, each stop allowed by the narrowed flow."""
    decorated = "from dataclasses import dataclass\n\n\n@dataclass\nclass P:\n    x: int = 1\n\n\nclass Q(P):\n    pass\n\n\np = Q()\n"
    raising = "try:\n    class A:\n        def f(self):\n            return super().f()\n        x = 1 / 0\nexcept ZeroDivisionError:\n    y = 2\nprint(y)\n"
    nested = "def make():\n    class L:\n        def g(self):\n            return __class__\n    return L\n\n\nx = make()\n"
    narrowed = 0
    for step in recorded_steps([PROGRAM, decorated, raising, nested, open("examples/demo.py").read()], (OVER, ActionKind.STEP_INTO), 200):
        if step.kind is not OVER:
            continue
        flow = showing_class_return(step.flow, step.source, step.previous, OVER)
        assert flow.allows(step.previous, step.state), (step.source, step.previous, step.state)
        narrowed += flow.known_return is not None
    assert narrowed >= 4
