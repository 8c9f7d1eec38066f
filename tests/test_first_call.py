"""A Step Into from the start of a line enters the line's first call when nothing before it runs code (model.static.first_call)."""
from __future__ import annotations

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.first_call import entering_first_call, first_call
from model.static.flow import next_locations
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.recorded import recorded_programs, recorded_steps

PROGRAM = """\
def clean(text):
    return "".join(ch.lower() for ch in text if ch.isalnum())


def check(text):
    s = clean(text)
    return s == s[::-1]


checks = []
for t in ["Racecar", "hello"]:
    checks.append(check(t))
    total = len(checks) + check(t)
print(checks, total)
"""
INTO = ActionKind.STEP_INTO
CLASSES = """\
class Counter:
    def __init__(self):
        self.counts = {}

    def __repr__(self):
        return f"Counter({self.counts})"


class Tally(Counter):
    pass


class Other:
    def __init__(self, n):
        self.n = n


c = Counter()
t = Tally()
o = Other(3)
print(c, t, o.n)
"""


def _module(line: int, **shown: str) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line, locals=dict(shown))])


def test_the_first_call_of_a_line() -> None:
    assert first_call(PROGRAM, "<module>", 12) == "check"  # `checks.append` is read, `t` is read, then check(t) runs
    assert first_call(PROGRAM, "check", 6) == "clean"
    assert first_call(PROGRAM, "<module>", 13) is None  # len() runs first, and a library call may call back
    assert first_call(PROGRAM, "<module>", 14) is None
    for program, line in [("@deco\ndef f():\n    pass\nf()\n", 4), ("def f():\n    yield 1\nx = f()\n", 3),
                          ("def f():\n    pass\nf = print\nf()\n", 4), ("def f(a):\n    pass\nf(*[1])\n", 3),
                          ("class P:\n    @property\n    def a(self):\n        return 1\ndef f(x):\n    pass\np = P()\nf(p.a)\n", 8)]:  # fmt: skip
        assert first_call(program, "<module>", line) is None, program


def test_operators_of_quiet_parts_are_quiet_where_the_program_defines_no_dunder() -> None:
    head = "def f(x, flag=False):\n    return x\n\n\n"
    for expression, first in [("f(n, flag=i == 0)", "f"), ("a + f(b)", "f"), ("xs[i] * f(-b)", "f"), ("f(xs[1:i])", "f"),
                              ("a and f(b)", None), ("f(b) if a else 0", None), ("0 if a else f(b)", None), ("a < b < f(c)", None),
                              ("a < f(c)", "f"), ("not f(a)", "f")]:  # fmt: skip
        assert first_call(head + f"y = {expression}\n", "<module>", 5) == first, expression
    dunder = head + "class V:\n    def __add__(self, other):\n        return 1\n"
    assert first_call(dunder + "y = a + f(b)\n", "<module>", 8) is None  # `a + ...` may run the program's __add__ first


def test_a_comprehension_over_a_quiet_iterable_is_entered_first() -> None:
    program = ("def summary(readings):\n    hot = [r for r in readings if r > 25]\n    odd = {r % 2 for r in readings}\n"
               "    gen = (r for r in readings)\n    return hot, odd, gen\n\n\nsummary([21, 27, 30])\n")
    assert first_call(program, "summary", 2) == "<listcomp>" and first_call(program, "summary", 3) == "<setcomp>"
    assert first_call(program, "summary", 4) is None  # a generator expression's frame runs when it is resumed
    iterating = program + "class Bag:\n    def __iter__(self):\n        return iter([1])\n"
    assert first_call(iterating, "summary", 2) is None  # iterating may run the program's __iter__ first
    previous = State(reason=StopReason.STEP, frames=[Frame(name="summary", line=2, locals={"readings": "[21, 27, 30]"}), *_module(8).frames])
    flow = entering_first_call(next_locations(program, previous, Action(kind=INTO)), program, previous, None)
    inside = State(reason=StopReason.STEP, frames=[Frame(name="<listcomp>", line=2, locals={".0": "<list_iterator object at 0x?>"}), *previous.frames])
    skipped = State(reason=StopReason.STEP, frames=[Frame(name="summary", line=3, locals={"readings": "[21, 27, 30]", "hot": "[27, 30]"}), *_module(8).frames])
    assert flow.allows(previous, inside) and not flow.allows(previous, skipped)


def test_a_step_into_enters_it() -> None:
    previous = _module(12, checks="[]", t="'Racecar'")
    flow = next_locations(PROGRAM, previous, Action(kind=INTO))
    genexpr = State(reason=StopReason.STEP, frames=[Frame(name="<genexpr>", line=2), *previous.frames])
    assert flow.allows(previous, genexpr)  # a library call (append) may resume a generator: the flow alone allows it
    narrowed = entering_first_call(flow, PROGRAM, previous, None)
    entered = State(reason=StopReason.STEP, frames=[Frame(name="check", line=6, locals={"text": "'Racecar'"}), *previous.frames])
    assert narrowed.allows(previous, entered) and not narrowed.allows(previous, genexpr)
    assert not narrowed.allows(previous, _module(13, checks="[False]", t="'Racecar'"))
    assert entering_first_call(flow, PROGRAM, previous, "check") is flow  # back on the line after check() came back
    returned = State(reason=StopReason.STEP, frames=previous.frames, return_value=ReturnValue(name="check", value="False"))
    assert entering_first_call(flow, PROGRAM, returned, None) is flow
    text = lang.render_state(genexpr, previous).removesuffix(lang.STOP_TOKEN)
    assert not state_constraint(PROGRAM, previous, action=Action(kind=INTO)).complete(text)


def test_a_class_call_enters_its_init_first() -> None:
    assert first_call(CLASSES, "<module>", 18) == "__init__" and first_call(CLASSES, "<module>", 19) == "__init__"
    previous = _module(19, c="Counter({})")
    narrowed = entering_first_call(next_locations(CLASSES, previous, Action(kind=INTO)), CLASSES, previous, None)
    counters = State(reason=StopReason.STEP, frames=[Frame(name="__init__", line=3, locals={"self": "<__main__.Tally object at 0x?>"}), *previous.frames])
    others = State(reason=StopReason.STEP, frames=[Frame(name="__init__", line=15, locals={"self": "<__main__.Tally object at 0x?>"}), *previous.frames])
    assert narrowed.allows(previous, counters) and not narrowed.allows(previous, others)  # Tally runs Counter's __init__
    assert not narrowed.allows(previous, _module(20, c="Counter({})", t="Counter({})"))


def test_a_class_call_that_may_run_other_code_first_is_not_judged() -> None:
    body = "    def __init__(self):\n        self.x = 1\n"
    for head in ("@dataclass\nclass C:\n", "class C(metaclass=Meta):\n", "class C(dict):\n", "class C(A, B):\n"):
        assert first_call(head + body + "c = C()\n", "<module>", head.count("\n") + 3) is None, head
    assert first_call("class C:\n    def __new__(cls):\n        return super().__new__(cls)\n" + body + "c = C()\n", "<module>", 6) is None
    assert first_call("class C:\n    __init__ = print\n" + "c = C()\n", "<module>", 3) is None
    assert first_call("class C:\n    pass\nc = C()\n", "<module>", 3) is None  # object.__init__: nothing of the program
    assert first_call("class C:\n" + body + "C = dict\nc = C()\n", "<module>", 5) is None  # rebound


def test_every_recorded_step_into_is_allowed() -> None:
    """On real traces (the fast recorder reproduces debugpy's stops): all-Step-Into walks."""
    narrowed = 0
    comprehensions = "xs = [3, 1, 2]\nys = [x * 2 for x in xs if x > 1]\nzs = {x: 0 for x in []}\nprint(sorted({y for y in ys}), zs)\n"
    for step in recorded_steps([PROGRAM, comprehensions, CLASSES, *(source for source, _ in recorded_programs(30, 12))], (INTO,), 150):
        before, previous = step.before, step.previous
        back = before is not None and len(before.frames) == len(previous.frames) + 1  # a stop back on the calling line
        cut = entering_first_call(step.flow, step.source, previous, before.frames[0].name if back else None)  # type: ignore[union-attr]
        assert cut.allows(previous, step.state), (step.source, previous.frames, step.state.frames)
        narrowed += cut is not step.flow
    assert narrowed >= 10
