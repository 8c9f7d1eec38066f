"""New names a step certainly shows (`model.static.certain_bindings`): the rule, the grammar, and every recorded step."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.certain_bindings import certain_bindings, literal_bindings
from model.static.line_effects import kept_locals
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.recorded import ROOT, recorded_programs
from tests.sample_programs import CHECK_RUN_SCENARIO
from tracegen.fast import RecordError, record_program

PROGRAM = CHECK_RUN_SCENARIO


def _at(program: str, frames: list[tuple[str, int, dict[str, str]]]) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name=n, line=line, source=lang.source_line(program, line), locals=v) for n, line, v in frames])


def test_which_statements_certainly_bind() -> None:
    program = (
        "import math\n"                            # 1
        "def f(n, items):\n"                       # 2
        "    total = 0\n"                          # 3  a literal
        "    names = [x for x in items]\n"         # 4  a comprehension
        "    a, b = 1, []\n"                       # 5  a display of as many values
        "    for i in range(n):\n"                 # 6  a loop counter, into the body only
        "        total += i\n"                     # 7
        "    for k, v in enumerate(items):\n"      # 8
        "        pass\n"                           # 9
        "    try:\n"                               # 10
        "        z = 5\n"                          # 11 a caught exception may skip it
        "    except ValueError:\n"                 # 12
        "        w = len(items)\n"                 # 13 a builtin with a plain result
        "    m = max(items)\n"                     # 14 max returns an item: anything
        "    s = f'{n}'; t = 1\n"                  # 15 two statements on the line
        "    global G\n"                           # 16
        "    G = 3\n"                              # 17 not a local
        "    h = math.pi\n"                        # 18 an attribute: anything
        "    return total\n"                       # 19
        "r = f(3, [1])\n"                          # 20 f returns an int (model.static.return_kinds)
        "lst = [1, 2,\n"                           # 21
        "       3]\n"                              # 22
        "done = not r\n"                           # 23
        "print(done)\n"                            # 24
    )  # fmt: skip
    found = certain_bindings(program)
    assert found[("f", 3)] == {4: {"total"}} and found[("f", 4)] == {5: {"names"}} and found[("f", 5)] == {6: {"a", "b"}}
    assert found[("f", 6)] == {7: {"i"}} and found[("f", 8)] == {9: {"k"}} and found[("f", 13)] == {14: {"w"}}
    assert found[("<module>", 21)] == {23: {"lst"}} and found[("<module>", 23)] == {24: {"done"}} and found[("<module>", 20)] == {21: {"r"}}
    for line in (11, 14, 15, 17, 18, 19):
        assert ("f", line) not in found, line


def test_what_the_program_defines_decides() -> None:
    assert certain_bindings("n = len('ab')\nprint(n)\n") == {("<module>", 1): {2: {"n"}}}
    assert certain_bindings("len = lambda s: print\nn = len('ab')\nprint(n)\n").get(("<module>", 2)) is None  # a rebound builtin
    assert certain_bindings("x = 2 + 3\nprint(x)\n") == {("<module>", 1): {2: {"x"}}}
    overloaded = "class V:\n    def __add__(self, o):\n        return print\nx = V() + 1\nprint(x)\n"
    assert certain_bindings(overloaded).get(("<module>", 4)) is None  # an operator method may return a function
    assert certain_bindings("with open('f') as fh:\n    x = 1\nprint(x)\n").get(("<module>", 2)) is None  # a suppressed exception
    assert certain_bindings("__all__ = []\nprint(1)\n") == {}  # dunders are never shown
    indirect = "def key(s):\n    k = len(s)\n    return k\nprint(sorted(['ab', 'c'], key=key))\n"
    assert certain_bindings(indirect).get(("key", 2)) is None  # library code may call it again: a new call's first line
    assert certain_bindings("def f(:\n") == {}
    calls = ("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\nclass Meta(type):\n    pass\n"
             "def ident(f):\n    return f\na = P(1)\nb = ident(print)\nc = Meta('C', (), {})\n"
             "for w in ['a', 'b']:\n    print(w)\nfor ch in 'xy':\n    print(ch)\nfor g in [print]:\n    g(1)\n")
    assert certain_bindings(calls) == {("<module>", 9): {10: {"a"}}, ("<module>", 12): {13: {"w"}}, ("<module>", 14): {15: {"ch"}}}


def test_names_bound_to_literals_have_their_reprs() -> None:
    program = 'rate = 0.10\nname, tags = "ann", ("a", 1)\nlimit = 10 ** 3\nboth = left = []\nseen = {1, 2}\nprint(rate)\n'
    assert literal_bindings(program) == {("<module>", 1): {"rate": "0.1"}, ("<module>", 2): {"name": "'ann'", "tags": "('a', 1)"}}


def test_the_step_grammar_requires_them() -> None:
    previous = _at(PROGRAM, [("run", 7, {"items": "[1, 2]"}), ("<module>", 12, {})])
    assert kept_locals(PROGRAM, previous, ActionKind.STEP_OVER)[1].required == {8: frozenset({"out"})}
    constraint = state_constraint(PROGRAM, previous, action=Action(kind=ActionKind.STEP_OVER), reprs=True)
    head = "<|reason_step|><|frame_sep|><module><|line_sep|>12{..}<|frame_sep|>run<|line_sep|>8"
    assert constraint.complete(head + '{"out":"[]",..}')
    assert not constraint.complete(head + "{..}")  # the line bound out: the delta must list it
    assert not constraint.complete(head + '{"out":"[0]",..}')  # bound to a literal: with that literal's repr
    assert not constraint.complete(head + '{"items":"[1, 2]","out":"[]"}')  # nothing can disappear: never in full
    shown = _at(PROGRAM, [("run", 7, {"items": "[1, 2]", "out": "[3]"}), ("<module>", 12, {})])  # out shown already: may be unchanged
    assert state_constraint(PROGRAM, shown, action=Action(kind=ActionKind.STEP_OVER), reprs=True).complete(head + "{..}")
    into = state_constraint(PROGRAM, _at(PROGRAM, [("run", 8, {"items": "[1, 2]", "out": "[]"}), ("<module>", 12, {})]),
                            action=Action(kind=ActionKind.STEP_OVER), reprs=True)  # fmt: skip
    line9 = "<|reason_step|><|frame_sep|><module><|line_sep|>12{..}<|frame_sep|>run<|line_sep|>9"
    assert into.complete(line9 + '{"it":"1",..}')  # the loop's first item, from the shown list (model.static.loop_entry)
    assert not into.complete(line9 + "{..}") and not into.complete(line9 + '{"it":"2",..}')


def _everyday() -> list[tuple[str, object]]:
    out = []
    for path in sorted((ROOT / "tracegen" / "everyday").glob("*.py")):
        source = path.read_text()
        try:
            trace = record_program(source)
        except (RecordError, OSError, ValueError):
            continue
        if trace.events:
            out.append((source, trace))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_step_shows_them(seed: int) -> None:
    """On every recorded step that continues the stepping frame, the names the rule requires are there, and the
    step's grammar accepts the recorded state."""
    from bench.flow_coverage import scripts_for

    rng = random.Random(seed)
    checked = 0
    programs = list(recorded_programs(25, seed)) + (_everyday() if seed == 0 else [])
    for source, trace in programs:
        for _, states, actions in scripts_for(trace, rng, 2, 30):
            for action, previous, state in zip(actions, states, states[1:]):
                if action.kind not in (ActionKind.STEP_INTO, ActionKind.STEP_OVER) or state.reason is not StopReason.STEP:
                    continue
                before = lang.canonical_state(previous, source)
                kept = kept_locals(source, before, action.kind).get(len(previous.frames) - 1)
                if kept is None or len(state.frames) != len(previous.frames) or state.frames[0].name != previous.frames[0].name:
                    continue
                required = kept.required.get(state.frames[0].line)
                if not required:
                    continue
                after = lang.canonical_state(state, source).frames[0].locals
                assert required <= set(after), (source, previous.frames[0].line, state.frames[0].line, required, after)
                assert all(after[n] == v for n, v in kept.literals.items() if n in required), (source, kept.literals, after)
                constraint = state_constraint(source, before, action=action, reprs=True)
                text = lang.render_state(lang.canonical_state(state, source), before).removesuffix(lang.STATE_END)
                assert constraint.complete(text), (source, text)
                checked += 1
    assert checked > 30, checked
