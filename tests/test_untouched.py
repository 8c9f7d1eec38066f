"""A step that runs no code of the program keeps every mutable value its line cannot reach (model.static.untouched)."""
from __future__ import annotations

from model.decode.constraints import state_constraint
from model.prompt import language as lang
from model.static.line_effects import kept_locals
from model.static.untouched import untouched
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.recorded import recorded_programs, recorded_steps

PROGRAM = """\
from collections import namedtuple

Reading = namedtuple('Reading', ['city', 'temp'])
records = ['cairo;12.7', 'quito;25.6']
log = []
push = log.append
for text in records:
    cols = text.split(';')
    reading = Reading(cols[0], float(cols[1]))
    log.append(reading)
    push(reading)
"""
OVER = ActionKind.STEP_OVER


def _at(line: int, **shown: str) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line, locals=shown)])


def test_a_line_that_runs_no_program_code_keeps_what_it_cannot_reach() -> None:
    previous = _at(9, cols="['cairo', '12.7']", log="[]", records="['cairo;12.7', 'quito;25.6']", text="'cairo;12.7'")
    assert untouched(PROGRAM, previous, OVER) == {0: frozenset({"log", "records"})}  # cols is read, text an atom
    assert kept_locals(PROGRAM, previous, OVER)[0].kept["records"] == "['cairo;12.7', 'quito;25.6']"
    assert untouched(PROGRAM, previous, ActionKind.CONTINUE) == {}
    changed = _at(10, cols="['cairo', '12.7']", log="[]", records="['cairo;12.7']", text="'cairo;12.7'", reading="Reading(city='cairo', temp=12.7)")
    text = lang.render_state(changed, previous).removesuffix(lang.STOP_TOKEN)
    assert not state_constraint(PROGRAM, previous, action=Action(kind=OVER)).complete(text)


def test_a_value_another_read_name_may_hold_or_alias_is_not_kept() -> None:
    same = _at(9, cols="['cairo', '12.7']", log="['cairo', '12.7']", records="[['cairo', '12.7']]", text="'x'")
    assert untouched(PROGRAM, same, OVER) == {}  # log may be cols itself, records may hold it
    objects = _at(10, log="[]", records="['cairo;12.7']", reading="Reading(city='cairo', temp=12.7)")
    assert untouched(PROGRAM, objects, OVER) == {}  # reading's repr is no literal: it may hold anything
    hidden = _at(11, log="[]", records="['cairo;12.7']", reading="1")
    assert untouched(PROGRAM, hidden, OVER) == {}  # push is a bound method (of log): not shown, bound as a value


def test_a_line_that_calls_the_programs_code_keeps_nothing_mutable() -> None:
    program = "def add(rows):\n    rows.append(1)\n\nrows = []\nother = []\nadd(other)\n"
    assert untouched(program, _at(6, rows="[]", other="[]"), OVER) == {}


def test_every_recorded_step_keeps_what_it_should() -> None:
    """On real traces (the fast recorder reproduces debugpy's stops): every value kept is unchanged at the next stop."""
    sources = [PROGRAM, *(source for source, _ in recorded_programs(30, 15))]
    checked = 0
    for step in recorded_steps(sources, (ActionKind.STEP_INTO, OVER), 150):
        if step.state.finished or len(step.state.frames) < len(step.previous.frames):
            continue
        for depth, names in untouched(step.source, step.previous, step.kind).items():
            after = step.state.frames[len(step.state.frames) - 1 - depth]
            before = step.previous.frames[len(step.previous.frames) - 1 - depth]
            for name in names:
                assert after.locals.get(name) == before.locals[name], (step.source, step.previous.frames, name)
                checked += 1
    assert checked >= 30
