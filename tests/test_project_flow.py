"""Static control flow in a project (`model.decode.constraints.ProjectFlowConstraint`, `model.decode.project_flow`): from a stop in the main file's
own frames, a stop of the main file's frames follows its flow and a stop with a frame of another file comes only as an
exception, a breakpoint or a Step Into's. Every recorded stop of a real two-file project is admitted."""
from __future__ import annotations

import random

from model.decode.constraints import ProjectFlowConstraint, state_constraint
from model.decode.project_flow import file_lines
from model.decode.spec import build_spec
from model.prompt import language as lang
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tracegen.fast import record_program, replay
from tracegen.realworld import build_program
from tracegen.sampling import sample_forward

MAIN = "import shapes\n\nsizes = [2, 3]\nareas = [shapes.square(s) for s in sizes]\ntotal = shapes.add(areas)\nprint(total)\n"
SHAPES = "SCALE = 1\n\n\ndef square(n):\n    return n * n * SCALE\n\n\ndef add(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"
MODULES = {"shapes.py": SHAPES}
ENTRY = State(reason=StopReason.ENTRY, frames=[Frame(name="<module>", line=1)])


def _text(state: State, previous: State) -> str:
    return lang.render_state(lang.canonical_state(state, MAIN, MODULES), previous).removesuffix(lang.STATE_END)


def test_a_step_over_an_import_stays_in_the_main_file_and_a_step_into_enters_the_module() -> None:
    inside = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=1, file="shapes.py"), Frame(name="<module>", line=1)])
    over = state_constraint(MAIN, ENTRY, MODULES, action=Action(kind=ActionKind.STEP_OVER))
    into = state_constraint(MAIN, ENTRY, MODULES, action=Action(kind=ActionKind.STEP_INTO))
    assert isinstance(over.inner, ProjectFlowConstraint)
    next_line = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=3)])
    assert over.complete(_text(next_line, ENTRY)) and not into.complete(_text(next_line, ENTRY))  # a first import runs the module
    assert not over.complete(_text(inside, ENTRY))  # what the generic grammar let a model write
    assert state_constraint(MAIN, ENTRY, MODULES).complete(_text(inside, ENTRY))
    assert into.complete(_text(inside, ENTRY))
    raised = inside.model_copy(update={"reason": StopReason.EXCEPTION})
    assert over.complete(_text(raised, ENTRY))  # the module's code may raise
    skipped = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=5)])
    assert not over.complete(_text(skipped, ENTRY))  # the main file's flow: line 3 comes next


def test_every_recorded_stop_of_two_file_projects_is_admitted() -> None:
    projects = [(MAIN, MODULES)]
    for module, driver in (("getopt", "opts, args = getopt(['-a', '-b', '7'], 'ab:')\n"), ("colorsys", "h = rgb_to_hsv(0.2, 0.4, 0.4)\n")):
        program = build_program(module, driver)
        projects.append((program.main, {f"{module}_impl.py": program.impl}))
    rng = random.Random(0)
    narrowed = 0
    for main, modules in projects:
        trace = record_program(main, modules=modules)
        for _ in range(6):
            trajectory = sample_forward(trace, rng, 30)
            states = [trajectory.initial, *(s.state for s in trajectory.steps)]
            for previous, step, state in zip(states, trajectory.steps, states[1:]):
                spec = build_spec(main, previous, step.action, modules=modules, breakpoints=tuple(trajectory.breakpoints),
                                  file_breakpoints=file_lines(trajectory.file_breakpoints))  # fmt: skip
                text = lang.render_state(state, previous)
                assert spec.grammar.admits(text), (step.action.kind, previous.location, text[:200])
                narrowed += all(f.file is None for f in previous.frames) and not previous.finished
    assert narrowed > 20


def test_a_step_into_enters_another_file_on_a_first_line_and_a_breakpoint_stops_on_its_line() -> None:
    line4 = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=4)])
    into = state_constraint(MAIN, line4, MODULES, action=Action(kind=ActionKind.STEP_INTO))
    def entering(line: int, reason: StopReason = StopReason.STEP) -> str:
        frames = [Frame(name="square", line=line, file="shapes.py", locals={"n": "2"}), Frame(name="<module>", line=4)]
        return _text(State(reason=reason, frames=frames), line4)
    assert into.complete(entering(5)) and not into.complete(entering(4))  # square's first line event is line 5
    over = state_constraint(MAIN, line4, MODULES, action=Action(kind=ActionKind.STEP_OVER))
    assert not over.complete(entering(5))
    with_breakpoint = state_constraint(MAIN, line4, MODULES, action=Action(kind=ActionKind.STEP_OVER), file_breakpoints={"shapes.py": [5]})
    assert with_breakpoint.complete(entering(5, StopReason.BREAKPOINT))
    added = [Frame(name="add", line=11, file="shapes.py", locals={"xs": "[4, 9]"}), Frame(name="<module>", line=5)]
    assert not with_breakpoint.complete(_text(State(reason=StopReason.BREAKPOINT, frames=added), line4))  # not a breakpoint line


def test_a_step_into_enters_only_what_the_line_can_start() -> None:
    program = build_program("getopt", "opts, args = getopt(['-a', '-b', '7'], 'ab:')\n")
    modules = {"getopt_impl.py": program.impl}
    line3 = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=3)])
    into = state_constraint(program.main, line3, modules, action=Action(kind=ActionKind.STEP_INTO))
    trace = record_program(program.main, modules=modules)
    recorded = replay(trace, [Action(kind=ActionKind.STEP_OVER), Action(kind=ActionKind.STEP_INTO)])[-1]
    assert recorded.frames[0].name == "getopt" and into.complete(lang.render_state(recorded, line3).removesuffix(lang.STATE_END))
    later = min(lang.program_info(program.impl).lines_by_name["do_shorts"])  # called only inside getopt
    too_soon = State(reason=StopReason.STEP, frames=[Frame(name="do_shorts", line=later, file="getopt_impl.py"), line3.frames[0]])
    text = lang.render_state(too_soon, line3)
    assert not into.allows(text[:text.index(lang.SRC_SEP)])
    assert state_constraint(program.main, line3, modules).allows(text[:text.index(lang.SRC_SEP)])  # the plain grammar's


def test_a_step_into_another_files_plain_function_writes_its_known_arguments() -> None:
    line5 = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=5, locals={"areas": "[4, 9]", "sizes": "[2, 3]"})])
    into = state_constraint(MAIN, line5, MODULES, action=Action(kind=ActionKind.STEP_INTO))
    def entering(xs: str) -> str:
        frames = [Frame(name="add", line=9, file="shapes.py", locals={"xs": xs}), Frame(name="<module>", line=5, locals=line5.top.locals)]
        return _text(State(reason=StopReason.STEP, frames=frames), line5)
    assert into.complete(entering("[4, 9]")) and not into.complete(entering("[1]"))
    unknown = line5.model_copy(update={"frames": [Frame(name="<module>", line=5, locals={"sizes": "[2, 3]"})]})
    loose = state_constraint(MAIN, unknown, MODULES, action=Action(kind=ActionKind.STEP_INTO))
    frames = [Frame(name="add", line=9, file="shapes.py", locals={"xs": "[1]"}), Frame(name="<module>", line=5, locals=unknown.top.locals)]
    assert loose.complete(_text(State(reason=StopReason.STEP, frames=frames), unknown))  # `areas` not shown: any value


def test_a_step_into_the_first_import_of_a_project_file_enters_its_module_body() -> None:
    into = state_constraint(MAIN, ENTRY, MODULES, action=Action(kind=ActionKind.STEP_INTO))
    inside = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=1, file="shapes.py"), Frame(name="<module>", line=1)])
    assert into.complete(_text(inside, ENTRY))
    assert not into.complete(_text(State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=3)]), ENTRY))
    assert into.complete(_text(inside.model_copy(update={"reason": StopReason.EXCEPTION}), ENTRY))
    again = "import math\nimport shapes as s\nimport shapes\nprint(s.SCALE)\n"  # imported on line 2 already
    at3 = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=3)])
    loose = state_constraint(again, at3, MODULES, action=Action(kind=ActionKind.STEP_INTO))
    line4 = lang.render_state(lang.canonical_state(State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=4)]), again, MODULES), at3)
    assert loose.complete(line4.removesuffix(lang.STATE_END))


def test_a_new_call_of_the_same_name_under_the_left_frames_is_written_as_that_frame_continued() -> None:
    zoo = "class A:\n    def __init__(self, n):\n        self.n = n\n\n\nclass B:\n    def __init__(self, n):\n        self.n = n\n"
    main = "import zoo\n\npets = [zoo.A(1), zoo.B(2)]\n"
    modules = {"zoo.py": zoo}
    trace = record_program(main, modules=modules)
    into = [s for s in replay(trace, [Action(kind=ActionKind.STEP_INTO)] * 12)]
    at_a = next(i for i, s in enumerate(into) if s.frames and s.frames[0].name == "__init__" and s.frames[0].line == 3)
    previous, state = replay(trace, [Action(kind=ActionKind.STEP_INTO)] * at_a + [Action(kind=ActionKind.STEP_OVER)])[-2:]
    assert state.frames[0].name == "__init__" and state.frames[0].line == 8  # a step over A's return goes on into B's __init__
    assert lang.render_state(state, previous).count(lang.CALL_SEP) == 0  # written as A's frame continued
    spec = build_spec(main, previous, Action(kind=ActionKind.STEP_OVER), modules=modules)
    assert spec.grammar.admits(lang.render_state(state, previous))
