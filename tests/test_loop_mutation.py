"""Whether a loop's body can change the sequence it iterates (model.static.loop_mutation), and the later runs of a loop
over a shown sequence that it lets `model.static.loop_entry` place."""
from __future__ import annotations

import ast

import pytest

from model.static.loop_entry import item_literals, loop_position
from model.static.loop_mutation import body_keeps_sequence
from protocol.debugger import Frame
from tests.recorded import recorded_steps
from protocol.debugger import ActionKind

HEAD = "def line_total(price, qty):\n    return price * qty\n\n\ndef cart(items):\n    total = 0\n    out = []\n"


def _keeps(body: str, extra: str = "", mutable: bool = True) -> bool:
    program = extra + HEAD + "    for price, qty in items:\n" + "".join(f"        {line}\n" for line in body.splitlines()) + "    return total\n"
    tree = ast.parse(program)
    scope = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "cart")
    loop = next(n for n in ast.walk(scope) if isinstance(n, ast.For))
    return body_keeps_sequence(program, loop, scope, "items", mutable=mutable)


@pytest.mark.parametrize("body", [
    "total += line_total(price, qty)",
    "out.append(price)\nprint(len(out), ', '.join(['a']))",
    "total = max(total, price) + sum([qty])",
    "if price > 2:\n    break",
])
def test_bodies_that_cannot_reach_the_sequence(body: str) -> None:
    assert _keeps(body)


@pytest.mark.parametrize("body, extra", [
    ("items.append(price)", ""),  # names it
    ("items = []", ""),  # rebinds it: the shown name is no longer the sequence walked
    ("total += grow(out)", "def grow(xs):\n    xs.append(1)\n    return 1\n\n\n"),  # a helper that mutates what it is given
    ("total += peek()", "ROWS = [1]\ndef peek():\n    return ROWS.pop()\n\n\n"),  # a helper that reaches module data
    ("price.append(1)", ""),  # a method of something that did not come fresh
    ("total += Box(price).n", "class Box:\n    def __init__(self, n):\n        self.n = n\n\n\n"),  # a class's code runs
    ("f = lambda: 1", ""),
    ("total += max([price], key=grab)", "def grab(x):\n    x.append(1)\n    return 1\n\n\n"),  # a key function that mutates
    ("out.sort(key=Box)", "class Box:\n    def __init__(self, n):\n        self.n = n\n\n\n"),
    ("total += line_total(price, qty)", "class P:\n    def __add__(self, other):\n        return 1\n\n\n"),  # operators may run code
    ("total += line_total(price, qty)", "@property\ndef odd(self):\n    return 1\n\n\n"),
])
def test_bodies_that_may_change_it(body: str, extra: str) -> None:
    assert not _keeps(body, extra)


def test_an_immutable_sequence_only_needs_its_name_left_alone() -> None:
    assert _keeps("price.append(1)", mutable=False)
    assert not _keeps("items = ()", mutable=False)


def test_a_later_run_over_a_shown_list_binds_the_next_item() -> None:
    program = HEAD + "    for price, qty in items:\n        total += line_total(price, qty)\n    return total\n\n\ncart([(12, 2), (5, 3)])\n"
    later = Frame(name="cart", line=8, locals={"items": "[(12, 2), (5, 3)]", "total": "24", "out": "[]", "price": "12", "qty": "2"})
    assert item_literals(program, later) == {"price": "5", "qty": "3"}
    last = later.model_copy(update={"locals": {**later.locals, "price": "5", "qty": "3"}})
    position = loop_position(program, last)
    assert position is not None and position.index == position.length == 2  # past the loop next
    twice = later.model_copy(update={"locals": {**later.locals, "items": "[(12, 2), (12, 2)]"}})
    assert loop_position(program, twice) is None  # the reprs do not tell the items apart


def test_every_recorded_step_from_a_later_run_is_allowed() -> None:
    """On real traces (the fast recorder reproduces debugpy's stops): loops over shown lists, tuples, strings and dicts,
    with bodies that keep them, and with bodies that change them (where nothing may be placed); ``range`` and
    ``enumerate`` loops."""
    sources = [
        HEAD + "    for price, qty in items:\n        total += line_total(price, qty)\n        out.append(total)\n    return out\n\n\nprint(cart([(12, 2), (5, 3), (30, 1)]))\n",
        "def f(word):\n    n = 0\n    for c in word:\n        n += ord(c)\n    return n\n\n\nprint(f('abca'))\n",
        "ages = {'ann': 3, 'bob': 5}\nt = 0\nfor k in ages:\n    t += ages[k]\nrows = (1, 2, 3)\nfor r in rows:\n    t += r\nprint(t)\n",
        "xs = [1, 2, 3]\nfor x in xs:\n    if x == 1:\n        xs.remove(x)\nprint(xs)\n",
        "def g(n, names):\n    s = 0\n    for i in range(1, n, 2):\n        s += i\n    for k, w in enumerate(names):\n        s += k\n    return s\n\n\nprint(g(6, ['x', 'y', 'z']))\n",
    ]
    placed = 0
    for step in recorded_steps(sources, (ActionKind.STEP_INTO, ActionKind.STEP_OVER), 80):
        top = step.previous.frames[0] if step.previous.frames else None
        if top is None or step.state.finished:
            continue
        items = item_literals(step.source, top)
        if items and set(items) <= set(top.locals):  # a later run
            placed += 1
            assert all(step.state.frames[0].locals.get(n) == v for n, v in items.items()), (step.source, top, step.state.frames[0])
    assert placed >= 10


def test_range_and_enumerate_loops_are_placed_from_what_the_stop_shows() -> None:
    program = "def f(names, n):\n    out = []\n    for i in range(n):\n        out.append(i)\n    for k, name in enumerate(names, start=1):\n        out.append(k)\n    return out\n\n\nf(['a', 'b'], 2)\n"
    first = Frame(name="f", line=3, locals={"names": "['a', 'b']", "n": "2", "out": "[]"})
    assert item_literals(program, first) == {"i": "0"}
    assert item_literals(program, first.model_copy(update={"locals": {**first.locals, "i": "0"}})) == {"i": "1"}
    assert loop_position(program, first.model_copy(update={"locals": {**first.locals, "i": "1"}})).index == 2  # type: ignore[union-attr]
    second = Frame(name="f", line=5, locals={"names": "['a', 'b']", "n": "2", "out": "[0, 1]", "i": "1"})
    assert item_literals(program, second) == {"k": "1", "name": "'a'"}
    assert item_literals(program, second.model_copy(update={"locals": {**second.locals, "k": "1", "name": "'a'"}})) == {"k": "2", "name": "'b'"}
    rebinding = program.replace("out.append(i)", "n = 5")
    assert loop_position(rebinding, first.model_copy(update={"locals": {**first.locals, "i": "0"}})) is None  # the range was read before
    assert item_literals(program.replace("range(n)", "range(n, 0, 0)"), first) == {}  # a range that raises is left alone
