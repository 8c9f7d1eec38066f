"""A `for` over a non-empty display of constants: the item its header binds next (model.static.loop_entry)."""
from __future__ import annotations

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.flow import next_locations
from model.static.line_effects import kept_locals
from model.static.loop_entry import entering_loop, item_literals, iterates_shown_sequence, loop_position, shown_targets
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.recorded import recorded_programs, recorded_steps

PROGRAM = """\
checks = []
for t in ["Racecar", "hello"]:
    checks.append(t.lower())
for n in names():
    print(n)
print(checks)
"""
OVER, INTO = ActionKind.STEP_OVER, ActionKind.STEP_INTO


def _at(line: int, **shown: str) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line, locals=dict(shown))])


def test_the_first_run_of_the_header_goes_into_the_body() -> None:
    first, again = _at(2, checks="[]"), _at(2, checks="['racecar']", t="'Racecar'")
    flow = next_locations(PROGRAM, first, Action(kind=OVER))
    assert flow.allows(first, _at(4, checks="[]"))  # the loop graph alone: the body or past the loop
    narrowed = entering_loop(flow, PROGRAM, first, OVER)
    assert narrowed.allows(first, _at(3, checks="[]", t="'Racecar'")) and not narrowed.allows(first, _at(4, checks="[]"))
    assert entering_loop(flow, PROGRAM, _at(2, checks="[]", t="'other'"), OVER) is flow  # no item shows that: unsure
    assert entering_loop(flow, PROGRAM, _at(4, checks="[]"), OVER) is flow  # not over constants
    assert entering_loop(flow, PROGRAM, first, ActionKind.CONTINUE) is flow
    # and the constraint the session decodes with
    past = lang.render_state(_at(4, checks="[]"), first).removesuffix(lang.STOP_TOKEN)
    assert not state_constraint(PROGRAM, first, action=Action(kind=INTO)).allows(past)


def test_a_later_run_binds_the_next_item_or_leaves_after_the_last() -> None:
    after_first, after_last = _at(2, checks="['racecar']", t="'Racecar'"), _at(2, checks="['racecar', 'hello']", t="'hello'")
    assert loop_position(PROGRAM, after_first.frames[0]).index == 1 and loop_position(PROGRAM, after_last.frames[0]).index == 2  # type: ignore[union-attr]
    assert item_literals(PROGRAM, after_first.frames[0]) == {"t": "'hello'"} and item_literals(PROGRAM, after_last.frames[0]) == {}
    assert item_literals(PROGRAM, _at(2).frames[0]) == {"t": "'Racecar'"}
    flow = next_locations(PROGRAM, after_first, Action(kind=OVER))
    assert not entering_loop(flow, PROGRAM, after_first, OVER).allows(after_first, _at(4, checks="['racecar']", t="'Racecar'"))
    out = entering_loop(next_locations(PROGRAM, after_last, Action(kind=OVER)), PROGRAM, after_last, OVER)
    assert out.allows(after_last, _at(4, **after_last.frames[0].locals)) and not out.allows(after_last, _at(3, **after_last.frames[0].locals))
    # the step into the body writes the next item: a delta must list it with that repr
    constraint = state_constraint(PROGRAM, after_first, action=Action(kind=OVER), reprs=True)
    head = "<|reason_step|><|frame_sep|><module><|line_sep|>3"
    assert constraint.complete(head + '{"t":"\'hello\'",..}') and not constraint.allows(head + '{"t":"\'x')
    assert not constraint.complete(head + "{..}")
    assert kept_locals(PROGRAM, after_first, OVER)[0].literals == {"t": "'hello'"}


def test_a_loop_run_again_or_a_target_bound_elsewhere_is_not_placed() -> None:
    nested = "for r in [1, 2]:\n    for t in ['a', 'b']:\n        print(t)\n"
    assert loop_position(nested, Frame(name="<module>", line=2, locals={"r": "1", "t": "'b'"})) is None  # a new run starts with t shown
    assert loop_position(nested, Frame(name="<module>", line=2, locals={"r": "1"})) is not None  # the first run
    rebound = "for t in ['a', 'b']:\n    t = t.upper()\n"
    assert loop_position(rebound, Frame(name="<module>", line=1, locals={"t": "'A'"})) is None
    param = "def f(t):\n    for t in [1, 2]:\n        pass\nf(1)\n"
    assert loop_position(param, Frame(name="f", line=2, locals={"t": "1"})) is None
    assert item_literals("for c in {1, 2}:\n    pass\n", Frame(name="<module>", line=1)) == {}  # a set's order is its hashes'
    assert item_literals("for c in b'hi':\n    pass\n", Frame(name="<module>", line=1)) == {"c": "104"}
    assert item_literals("for a, b in [(1, 2.5), (3, None)]:\n    pass\n", Frame(name="<module>", line=1, locals={"a": "1", "b": "2.5"})) == {"a": "3", "b": "None"}


def test_the_first_run_over_a_shown_sequence() -> None:
    program = "def run(items):\n    out = []\n    for it in items:\n        out.append(it)\n    return out\nrun([1, 2])\n"
    first = State(reason=StopReason.STEP, frames=[Frame(name="run", line=3, locals={"items": "[1, 2]", "out": "[]"}), Frame(name="<module>", line=6)])
    assert item_literals(program, first.frames[0]) == {"it": "1"}
    flow = next_locations(program, first, Action(kind=OVER))
    assert not entering_loop(flow, program, first, OVER).allows(first, State(reason=StopReason.STEP, frames=[first.frames[0].model_copy(update={"line": 5}), first.frames[1]]))
    empty = first.model_copy(update={"frames": [first.frames[0].model_copy(update={"locals": {"items": "[]", "out": "[]"}}), first.frames[1]]})
    assert loop_position(program, empty.frames[0]).length == 0  # type: ignore[union-attr]
    assert not entering_loop(flow, program, empty, OVER).allows(empty, State(reason=StopReason.STEP, frames=[Frame(name="run", line=4, locals={"items": "[]", "out": "[]", "it": "1"}), first.frames[1]]))
    later = Frame(name="run", line=3, locals={"items": "[1, 2]", "out": "[1]", "it": "1"})
    assert loop_position(program, later).index == 1  # type: ignore[union-attr]  # the body only appends to a fresh list
    assert item_literals(program, later) == {"it": "2"}
    mutating = program.replace("out.append(it)", "items.append(it)")
    assert loop_position(mutating, later) is None  # the body may have changed the sequence
    for shown in ("<object at 0x?>", "[1, [...]]", "['ab...cd']", "{1, 2}"):
        assert loop_position(program, Frame(name="run", line=3, locals={"items": shown})) is None, shown
    assert item_literals(program, Frame(name="run", line=3, locals={"items": "{'a': 1}"})) == {"it": "'a'"}  # a dict's keys
    subclass = program + "class L(list):\n    pass\n"
    assert loop_position(subclass, first.frames[0]) is None


def test_a_builtin_iterating_shown_values_runs_nothing_and_shows_its_targets() -> None:
    """``for i, n in enumerate(names)`` over a shown list: the step keeps every value (no code of the program runs) and,
    into the body, shows both targets (an int and an element of a shown literal)."""
    program = "names = ['ann', 'bob']\nlines = []\nfor i, n in enumerate(names):\n    lines.append(n)\nfor k in range(count):\n    pass\n"
    header = Frame(name="<module>", line=3, locals={"names": "['ann', 'bob']", "lines": "[]"})
    assert iterates_shown_sequence(program, header)
    assert shown_targets(program, header) == (frozenset({"i", "n"}), frozenset({4}))
    kept = kept_locals(program, State(reason=StopReason.STEP, frames=[header]), OVER)[0]
    assert kept.kept == {"names": "['ann', 'bob']", "lines": "[]"} and kept.required[4] == {"i", "n"}
    assert iterates_shown_sequence(program, Frame(name="<module>", line=5, locals={"count": "3"}))
    for frame in (Frame(name="<module>", line=3, locals={"lines": "[]"}),  # names not shown
                  Frame(name="<module>", line=3, locals={"names": "<object at 0x?>"}),
                  Frame(name="<module>", line=5, locals={"count": "2.5"})):
        assert not iterates_shown_sequence(program, frame) and shown_targets(program, frame) == (frozenset(), frozenset())
    rebound = "def enumerate(xs):\n    return [(0, xs)]\n\n" + program
    assert not iterates_shown_sequence(rebound, header.model_copy(update={"line": 6}))
    keyed = program.replace("enumerate(names)", "sorted(names, key=len)")
    assert not iterates_shown_sequence(keyed, header)


def test_every_recorded_step_from_a_builtin_loop_header_keeps_its_values() -> None:
    """Recorded walks over loops of enumerate / zip / range / sorted / reversed: a step from such a header changes no
    value but the targets', and into the body shows every target."""
    sources = ["xs = [3, 1, 2]\nys = 'abc'\nout = []\nfor i, x in enumerate(xs, start=1):\n    out.append(i * x)\nfor a, b in zip(xs, ys):\n    out.append(b)\n"
               "for v in sorted(xs):\n    out.append(v)\nfor c in reversed(ys):\n    out.append(c)\nn = len(out)\nfor k in range(n):\n    out[k] = 0\n",
               *(source for source, _ in recorded_programs(30, 12))]  # fmt: skip
    checked = 0
    for step in recorded_steps(sources, (INTO, OVER), 200):
        top = step.previous.frames[0] if step.previous.frames else None
        if top is None or step.state.finished or not iterates_shown_sequence(step.source, top):
            continue
        targets, body = shown_targets(step.source, top)
        after = step.state.frames[-len(step.previous.frames)] if len(step.state.frames) >= len(step.previous.frames) else None
        if after is None or after.name != top.name:
            continue
        assert all(after.locals.get(k) == v for k, v in top.locals.items() if k not in targets), (step.source, top, after)
        if after.line in body and step.state.reason is StopReason.STEP:
            assert targets <= after.locals.keys(), (step.source, top, after)
        checked += 1
    assert checked >= 10


def test_a_deleted_or_global_target_is_left_alone() -> None:
    for program in ("for t in [1, 2]:\n    del t\nprint(1)\n", "def f():\n    global t\n    for t in [1]:\n        pass\nf()\n"):
        state = _at(1) if program.startswith("for") else State(reason=StopReason.STEP, frames=[Frame(name="f", line=3), Frame(name="<module>", line=5)])
        flow = next_locations(program, state, Action(kind=OVER))
        assert entering_loop(flow, program, state, OVER) is flow


def test_every_recorded_step_from_such_a_header_is_allowed() -> None:
    """On real traces (the fast recorder reproduces debugpy's stops): all-Step-Into and all-Step-Over walks."""
    sources = [PROGRAM.replace("for n in names():\n    print(n)\n", ""), "for a, (b, c) in [(1, (2, 3)), (4, (5, 6))]:\n    if a:\n        print(b + c)\n",
               "def f():\n    for w in 'ab':\n        if w == 'b':\n            continue\n    else:\n        w = 0\n    return w\nf()\n",
               *(source for source, _ in recorded_programs(30, 11))]  # fmt: skip
    narrowed = valued = 0
    for step in recorded_steps(sources, (INTO, OVER), 120):
        cut = entering_loop(step.flow, step.source, step.previous, step.kind)
        assert cut.allows(step.previous, step.state), (step.source, step.previous.frames, step.state.frames)
        narrowed += cut is not step.flow
        items = item_literals(step.source, step.previous.frames[0]) if step.previous.frames and not step.state.finished else {}
        assert all(step.state.frames[0].locals.get(n) == v for n, v in items.items()), (step.source, items, step.state.frames[0].locals)
        valued += bool(items)
    assert narrowed >= 8 and valued >= 6
