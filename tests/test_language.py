"""The neural-debugger language: render then parse is the identity (after normalization), prompts
are append-only, windows cover every step once, the constraint regex accepts every rendered state,
and malformed text raises ParseError (and nothing else)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.prompt import language as L
from model.prompt.listing import LISTING_ELIDED
from protocol.debugger import (
    Action,
    ActionKind,
    Ending,
    ExceptionInfo,
    Frame,
    ReturnValue,
    State,
    Step,
    StopReason,
    Trajectory,
)

PROGRAM = """\
import math

def helper(a, b):
    total = a + b
    return total * 2

class Box:
    def get(self, k):
        return [x for x in range(k)]

def main(n):
    out = []
    for i in range(n):
        out.append(helper(i, n))
    return out

res = main(3)
print(res, "<|frame_sep|>")
"""
INFO = L.program_info(PROGRAM)
LINES = sorted(INFO.lines or [])
NAMES = sorted(INFO.names or [])

# --- strategies ---------------------------------------------------------------------------------

tricky_text = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["'<|frame_sep|>'", "a|b", '"q"', "\\", "{..}", ",..}", "<obj at 0x7f3a9c>", "\n", "é∂", "\x00"]),
)
repr_values = st.one_of(st.integers(-10**6, 10**6).map(repr), st.lists(st.integers(0, 99), max_size=4).map(repr), tricky_text)
var_names = st.one_of(st.sampled_from(["a", "b", "i", "out", "total", "self", ".0", "res"]), st.text(min_size=1, max_size=6))
locals_dicts = st.dictionaries(var_names, repr_values, max_size=4)
frame_names = st.sampled_from(["<module>", "helper", "main", "Box.get", "<listcomp>", "f.<locals>.g"])
lines = st.integers(1, 40)


@st.composite
def frames(draw: st.DrawFn, names: st.SearchStrategy[str] = frame_names, line_st: st.SearchStrategy[int] = lines) -> Frame:
    other_file = draw(st.booleans()) and draw(st.integers(0, 9)) == 0
    return Frame(
        name=draw(names),
        line=draw(line_st),
        locals=draw(locals_dicts),
        file=draw(st.sampled_from(["lib/util.py", "/abs/x y.py"])) if other_file else None,
        source=draw(tricky_text) if other_file else "",
    )


@st.composite
def states(draw: st.DrawFn, names: st.SearchStrategy[str] = frame_names, line_st: st.SearchStrategy[int] = lines) -> State:
    if draw(st.integers(0, 9)) == 0:
        return State(
            reason=StopReason.EXITED,
            exit_code=draw(st.one_of(st.none(), st.integers(-9, 3))),
            ending=draw(st.one_of(st.none(), st.sampled_from(list(Ending)))),
            stdout=draw(st.text(max_size=8)),
        )
    reason = draw(st.sampled_from([StopReason.ENTRY, StopReason.STEP, StopReason.BREAKPOINT, StopReason.EXCEPTION]))
    return State(
        reason=reason,
        frames=draw(st.lists(frames(names, line_st), min_size=1, max_size=4)),
        return_value=draw(st.one_of(st.none(), st.builds(ReturnValue, name=names, value=repr_values))),
        exception=draw(st.one_of(st.none(), st.builds(ExceptionInfo, type=st.sampled_from(["ValueError", "json.JSONDecodeError"]), message=tricky_text))),
        stdout=draw(st.one_of(st.just(""), st.text(max_size=8))),
    )


@st.composite
def successor(draw: st.DrawFn, prev: State, names: st.SearchStrategy[str], line_st: st.SearchStrategy[int]) -> State:
    """A state related to `prev` like a debugger step: move, edit locals, push or pop frames, or anything."""
    if prev.finished or draw(st.integers(0, 5)) == 0:
        return draw(states(names, line_st))
    frames_ = [f.model_copy(deep=True) for f in prev.frames]
    op = draw(st.sampled_from(["move", "edit", "push", "pop", "delete"]))
    if op == "push":
        frames_.insert(0, draw(frames(names, line_st)).model_copy(update={"file": None, "source": ""}))
    elif op == "pop" and len(frames_) > 1:
        del frames_[0]
    elif op == "delete" and frames_[0].locals:
        frames_[0].locals.pop(next(iter(frames_[0].locals)))
    elif op == "edit":
        index = draw(st.integers(0, len(frames_) - 1))
        frames_[index].locals.update(draw(locals_dicts))
    frames_[0].line = draw(line_st)
    return State(
        reason=draw(st.sampled_from([StopReason.STEP, StopReason.BREAKPOINT])),
        frames=frames_,
        return_value=draw(st.one_of(st.none(), st.builds(ReturnValue, name=names, value=repr_values))),
        stdout=draw(st.one_of(st.just(""), tricky_text)),
    )


actions = st.one_of(
    st.sampled_from([k for k in ActionKind if k is not ActionKind.BREAKPOINT]).map(lambda k: Action(kind=k)),
    st.integers(1, 40).map(lambda n: Action(kind=ActionKind.BREAKPOINT, line=n)),
)


@st.composite
def trajectories(
    draw: st.DrawFn, names: st.SearchStrategy[str] = frame_names, line_st: st.SearchStrategy[int] = lines
) -> Trajectory:
    current = draw(states(names, line_st))
    initial = current
    steps = []
    for _ in range(draw(st.integers(0, 8))):
        current = draw(successor(current, names, line_st))
        steps.append(Step(action=draw(actions), state=current))
    return Trajectory(
        program=PROGRAM,
        breakpoints=draw(st.lists(st.integers(1, 40), max_size=3)),
        direction=draw(st.sampled_from(["forward", "inverse"])),
        initial=initial,
        steps=steps,
    )


# program-consistent trajectories (names and lines from PROGRAM, frames of the program only)
program_trajectories = trajectories(st.sampled_from(NAMES), st.sampled_from(LINES)).map(
    lambda t: t.model_copy(
        update={
            "initial": _drop_files(t.initial),
            "steps": [Step(action=s.action, state=_drop_files(s.state)) for s in t.steps],
        }
    )
)


def _drop_files(state: State) -> State:
    return state.model_copy(update={"frames": [f.model_copy(update={"file": None}) for f in state.frames]})


FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # examples: the profile's (tests/conftest.py)

# --- properties ---------------------------------------------------------------------------------


@FAST
@given(trajectories())
def test_render_then_parse_gives_the_same_states(traj: Trajectory) -> None:
    previous = None
    for state in traj.states:
        text = L.render_state(state, previous)
        parsed = L.parse_state(text, previous, traj.program)
        assert parsed == L.canonical_state(state, traj.program)
        assert L.render_state(parsed, previous) == text  # the text is canonical: a fixed point
        previous = parsed


@FAST
@given(trajectories())
def test_whole_session_parses_back(traj: Trajectory) -> None:
    text = L.render_text(L.render_trajectory(traj))
    breakpoints, pairs = L.parse_session(text, traj.program)
    assert breakpoints == sorted(set(traj.breakpoints))
    assert [s for _, s in pairs] == [L.canonical_state(s, traj.program) for s in traj.states]
    assert [a.kind if a else None for a, _ in pairs] == [None] + [s.action.kind for s in traj.steps]


@FAST
@given(trajectories())
def test_segments_mark_exactly_the_predicted_states(traj: Trajectory) -> None:
    segments = L.render_trajectory(traj)
    predicted = [s.text for s in segments if s.predicted]
    assert len(predicted) == len(traj.steps)
    assert all(t.endswith(L.STATE_END) and t.count(L.STATE_END) == 1 for t in predicted)
    assert not any(L.STATE_END in s.text for s in segments[:1])


@FAST
@given(trajectories(), actions)
def test_prompts_are_append_only(traj: Trajectory, last: Action) -> None:
    history: list[State | Step] = [traj.initial, *traj.steps]
    prompts = []
    for k in range(1, len(history) + 1):
        action = history[k].action if k < len(history) else last  # type: ignore[union-attr]
        prompts.append(L.render_prompt(traj.program, traj.breakpoints, history[:k], action))
    for k in range(len(prompts) - 1):
        state = history[k + 1].state  # type: ignore[union-attr]
        previous = history[k] if k == 0 else history[k].state  # type: ignore[union-attr]
        assert prompts[k + 1].startswith(prompts[k] + L.render_state(state, previous))  # type: ignore[arg-type]


def _located(traj: Trajectory) -> Trajectory:
    """`traj` with every frame's line moved onto a line of a code object of the frame's name (as real stops are)."""
    info = L.program_info(traj.program)

    def fix(state: State) -> State:
        state = state.model_copy(deep=True)
        for frame in state.frames:
            lines = sorted(info.lines_of(frame.name) or [frame.line])
            frame.line = lines[frame.line % len(lines)]
        return state

    return traj.model_copy(update={"initial": fix(traj.initial), "steps": [Step(action=s.action, state=fix(s.state)) for s in traj.steps]})


def test_constraint_ties_lines_to_their_function() -> None:
    """A module frame never stops on a line inside a function, nor a function frame on a module line."""
    program = "def f(a):\n    b = a + 1\n    return b\n\nx = f(1)\n"
    grammar = L.state_grammar(program, None)
    module_at = f"{L.REASON_STEP}{L.CALL_SEP}<module>{L.LINE_SEP}{{line}}{{{{}}}}{L.STATE_END}"
    assert grammar.matches(module_at.format(line=5))
    assert not grammar.matches(module_at.format(line=2))
    in_f = f"{L.REASON_STEP}{L.CALL_SEP}<module>{L.LINE_SEP}5{{{{}}}}{L.CALL_SEP}f{L.LINE_SEP}{{line}}{{{{}}}}{L.STATE_END}"
    assert grammar.matches(in_f.format(line=2))
    assert not grammar.matches(in_f.format(line=5))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_trajectories.map(_located))
def test_constraint_regex_accepts_every_rendered_state(traj: Trajectory) -> None:
    previous = None
    for state in traj.states:
        text = L.render_state(state, previous)
        grammar = L.state_grammar(traj.program, previous)
        assert grammar.matches(text), text
        assert grammar.allows_prefix(text[: len(text) // 2])
        assert not grammar.matches(text[:-1])
        previous = state


@FAST
@given(trajectories(), st.integers(150, 1500))
def test_windows_cover_every_step_once_and_parse(traj: Trajectory, max_chars: int) -> None:
    windows = L.render_windows(traj, max_chars, len)
    predicted = [s.text for w in windows for s in w if s.predicted]
    header = L.render_header(traj.program, traj.breakpoints)
    for window in windows:
        text = L.render_text(window)
        assert len(text) <= max_chars
        assert window[0].text.startswith(L.BOS + L.SRC_SEP) and not window[1].predicted
        if LISTING_ELIDED not in window[0].text:  # the whole program, or (a bounded listing) none of it
            assert window[0].text == header or L.LINE_SEP not in window[0].text.split(L.BREAKPOINTS)[0]
        _, pairs = L.parse_session(text, traj.program)
        assert pairs[0][0] is None
    if windows:  # the states are predicted in order, each once, as long as the windows reach
        covered = len(predicted)
        firsts = [L.parse_session(L.render_text(w), traj.program)[1] for w in windows]
        got = [s for pairs in firsts for _, s in pairs[1:]]
        assert got == [L.canonical_state(s, traj.program) for s in traj.states[1 : covered + 1]]


def test_window_snapshot_prompt_and_start_selection() -> None:
    traj = _handmade()
    history: list[State | Step] = [traj.initial, *traj.steps]
    action = Action(kind=ActionKind.STEP_INTO)
    full = L.render_prompt(traj.program, [], history, action)
    assert L.render_window(traj.program, [], history, action, 0) == full
    window = L.render_window(traj.program, [], history, action, 3)
    assert L.CALL_SEP + "check" in window and len(window) < len(full)
    assert L.next_window_start(traj.program, [], history, action, 0, len(full) + 256, len) == 0
    start = L.next_window_start(traj.program, [], history, action, 0, len(full) + 100, len)
    assert 0 < start < len(history)
    assert len(L.render_window(traj.program, [], history, action, start)) <= len(full) + 100 - 256


# --- malformed text -----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list('{}",.:0123 ab\\') + L.SPECIAL_TOKENS), max_size=30).map("".join))
def test_garbage_raises_parse_error_only(text: str) -> None:
    try:
        state = L.parse_state(text, _handmade().steps[2].state, PROGRAM)
    except L.ParseError:
        return
    assert isinstance(state, State)  # rarely, garbage is a well-formed state


@FAST
@given(trajectories(), st.data())
def test_truncated_or_corrupted_states_raise_parse_error_only(traj: Trajectory, data: st.DataObject) -> None:
    previous = None
    for state in traj.states:
        text = L.render_state(state, previous)
        cut = data.draw(st.integers(0, len(text)))
        corrupted = text[:cut] + data.draw(st.sampled_from(["", "}", '"', L.FRAME_SEP, "x", L.STATE_END])) + text[cut + 1 :]
        try:
            parsed = L.parse_state(corrupted, previous, traj.program)
        except L.ParseError as exc:
            assert str(exc) and corrupted != text  # the text as rendered always parses
        else:  # what parses is a state the language can write again
            assert L.parse_state(L.render_state(parsed, previous), previous, traj.program) == parsed
        previous = state


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("hello", "must start"),
        ("<|reason_step|><|frame_sep|>f<|line_sep|>2{..}<|state_end|>", "previous state has only 0"),
        ("<|reason_step|><|call_sep|>f<|line_sep|>2{..}<|state_end|>", "in full"),
        ("<|reason_step|><|call_sep|>f<|line_sep|>x{}<|state_end|>", "line number"),
        ('<|reason_step|><|call_sep|>f<|line_sep|>2{"a":1}<|state_end|>', "repr string"),
        ('<|reason_step|><|call_sep|>f<|line_sep|>2{"a":"1"<|state_end|>', "not a JSON object"),
        ("<|reason_step|><|call_sep|>f<|line_sep|>2{}<|state_end|>junk", "after"),
        ("<|reason_step|><|call_sep|>f g<|line_sep|>2{}<|state_end|>", "bad function name"),
        ("<|exit_normal|>zero<|state_end|>", "exit code"),
        ("<|step_into|><|state_end|>", "must start"),
        ('<|reason_step|><|call_sep|>f<|line_sep|>2{}<|stdout|>"a<|state_end|>', "stdout"),
        ("<|reason_step|><|call_sep|>f<|line_sep|>2{}<|return_sep|>f<|state_end|>", "return value"),
        ('<|reason_step|><|call_sep|>f<|line_sep|>2{}<|exception_sep|>}alueError""<|state_end|>', "bad type"),
        ('<|reason_step|><|call_sep|>f<|line_sep|>2{}<|return_sep|>f g"1"<|state_end|>', "bad name"),
        ("<|reason_step|><|call_sep|>f<|line_sep|>" + "9" * 5000 + "{}<|state_end|>", "line number"),
        ("<|reason_step|><|call_sep|>f<|line_sep|>\u0663{}<|state_end|>", "line number"),
        ("<|exit_error|>" + "1" * 5000 + "<|state_end|>", "exit code"),
        ('<|reason_step|><|call_sep|>f<|line_sep|>2{"a":' + "[" * 100000 + "<|state_end|>", "locals"),
        ('<|reason_step|><|call_sep|>f<|line_sep|>2{"a":{"b":"c"}}<|state_end|>', "repr string"),
        ('<|reason_step|><|call_sep|>f<|line_sep|>2{}<|stdout|>' + "[" * 100000 + "<|state_end|>", "stdout"),
    ],
)
def test_parse_error_messages(text: str, message: str) -> None:
    with pytest.raises(L.ParseError, match=message):
        L.parse_state(text, None, PROGRAM)


def test_render_rejects_unrenderable_names() -> None:
    state = State(reason=StopReason.STEP, frames=[Frame(name='bad"name', line=1)])
    with pytest.raises(L.UnrenderableError, match="cannot be rendered"):
        L.render_state(state)


# --- worked example -----------------------------------------------------------------------------

EXAMPLE = "def check(v):\n    if v < 0:\n        raise ValueError('neg')\n    return v * 2\n\nres = check(1)\nprint(res)\n"


def _handmade() -> Trajectory:
    def state(frames: list[tuple[str, int, dict[str, str]]], **kw: object) -> State:
        return State(reason=kw.pop("reason", StopReason.STEP), frames=[Frame(name=n, line=l, locals=v) for n, l, v in frames], **kw)  # type: ignore[arg-type]

    into = Action(kind=ActionKind.STEP_INTO)
    states = [
        state([("<module>", 6, {})]),
        state([("check", 2, {"v": "1"}), ("<module>", 6, {})]),
        state([("check", 4, {"v": "1"}), ("<module>", 6, {})]),
        state([("<module>", 6, {})], return_value=ReturnValue(name="check", value="2")),
        state([("<module>", 7, {"res": "2"})]),
        State(reason=StopReason.EXITED, exit_code=0, ending=Ending.NORMAL, stdout="2\n"),
    ]
    return Trajectory(
        program=EXAMPLE,
        breakpoints=[4],
        initial=state([("<module>", 1, {})], reason=StopReason.ENTRY),
        steps=[Step(action=into, state=s) for s in states],
    )


def test_worked_example_layout() -> None:
    text = L.render_text(L.render_trajectory(_handmade()))
    assert text == (
        "<|bos|><|src_sep|><|line_sep|>1 def check(v):\n<|line_sep|>2     if v < 0:\n"
        "<|line_sep|>3         raise ValueError('neg')\n<|line_sep|>4     return v * 2\n"
        "<|line_sep|>6 res = check(1)\n<|line_sep|>7 print(res)\n<|src_sep|><|breakpoints|><|line_sep|>4\n"
        "<|reason_entry|><|call_sep|><module><|line_sep|>1{}<|state_end|>"
        "<|step_into|><|reason_step|><|frame_sep|><module><|line_sep|>6{..}<|state_end|>"
        '<|step_into|><|reason_step|><|frame_sep|><module><|line_sep|>6{..}<|call_sep|>check<|line_sep|>2{"v":"1"}<|state_end|>'
        "<|step_into|><|reason_step|><|frame_sep|><module><|line_sep|>6{..}<|frame_sep|>check<|line_sep|>4{..}<|state_end|>"
        '<|step_into|><|reason_step|><|frame_sep|><module><|line_sep|>6{..}<|return_sep|>check"2"<|state_end|>'
        '<|step_into|><|reason_step|><|frame_sep|><module><|line_sep|>7{"res":"2",..}<|state_end|>'
        '<|step_into|><|exit_normal|>0<|stdout|>"2\\n"<|state_end|>'
    )


def test_addresses_pipes_and_special_tokens_in_values_stay_inside_strings() -> None:
    state = State(
        reason=StopReason.STEP,
        frames=[Frame(name="<module>", line=6, locals={"it": "<list_iterator object at 0x7f3a9c>", "s": "'<|state_end|> a|b'"})],
    )
    text = L.render_state(state)
    assert "0x?" in text and text.count(L.STATE_END) == 1 and text.count("|") == 2 * len(L._SPLIT_RE.findall(text))
    parsed = L.parse_state(text, None, EXAMPLE)
    assert parsed.frames[0].locals == {"it": "<list_iterator object at 0x?>", "s": "'<|state_end|> a|b'"}
    assert parsed.frames[0].source == "res = check(1)"


def test_inverse_step_call_prompt_for_input_prediction() -> None:
    """CruxEval-I: from the return state of f, <|inv_step_call|> asks for f's entry state (its arguments)."""
    program = "def f(x):\n    y = x * 2\n    return y\n\nf(3)\n"
    ret = State(reason=StopReason.STEP, frames=[Frame(name="f", line=3, locals={"x": "3", "y": "6"}), Frame(name="<module>", line=5)])
    prompt = L.render_prompt(program, [], [ret], Action(kind=ActionKind.INV_STEP_CALL))
    assert prompt.endswith(L.STATE_END + L.INV_STEP_CALL)
    entry = State(reason=StopReason.STEP, frames=[Frame(name="f", line=2, locals={"x": "3"}), Frame(name="<module>", line=5)])
    answer = L.render_state(entry, ret)
    assert answer == '<|reason_step|><|frame_sep|><module><|line_sep|>5{..}<|frame_sep|>f<|line_sep|>2{"x":"3"}<|state_end|>'
    assert L.parse_state(answer, ret, program) == L.canonical_state(entry, program)
    assert L.state_grammar(program, ret).matches(answer)


def test_special_tokens_are_unique_and_well_formed() -> None:
    assert len(set(L.SPECIAL_TOKENS)) == len(L.SPECIAL_TOKENS)
    assert all(t.startswith("<|") and t.endswith("|>") for t in L.SPECIAL_TOKENS)
    assert L.STOP_TOKEN == L.STATE_END in L.SPECIAL_TOKENS
    assert set(L.ACTION_TOKENS) == set(ActionKind)


def test_parse_action_round_trip() -> None:
    for action in [Action(kind=k) for k in ActionKind if k is not ActionKind.BREAKPOINT] + [Action(kind=ActionKind.BREAKPOINT, line=12)]:
        assert L.parse_action(L.render_action(action)) == action
    with pytest.raises(L.ParseError):
        L.parse_action("<|breakpoint|>12")


# --- real trajectories (tracegen's fast recorder on synthetic programs) ---------------------------


def _real_trajectories(count: int, seed: int) -> list[Trajectory]:
    """Forward walks of synthetic programs under a random action policy, plus their inverse (step_into) walks."""
    import random

    from tracegen.fast import ReplaySession, record_program
    from tracegen.synth import generate_program

    rng = random.Random(seed)
    kinds = [ActionKind.STEP_INTO] * 4 + [ActionKind.STEP_OVER] * 2 + [ActionKind.STEP_RETURN, ActionKind.CONTINUE, ActionKind.BREAKPOINT]
    out = []
    while len(out) < 2 * count:
        source = generate_program(rng).source
        trace = record_program(source)
        lines = trace.executed_lines
        if not lines:
            continue
        bps = sorted(rng.sample(lines, min(2, len(lines))))
        session = ReplaySession(trace, bps)
        initial = state = session.start()
        steps = []
        while not state.finished and len(steps) < 40:
            kind = rng.choice(kinds)
            action = Action(kind=kind, line=rng.choice(lines)) if kind is ActionKind.BREAKPOINT else Action(kind=kind)
            state = session.step(action)
            steps.append(Step(action=action, state=state))
        out.append(Trajectory(program=source, breakpoints=bps, initial=initial, steps=steps))
        into = ReplaySession(trace, [])
        walk = [into.start()]
        while not walk[-1].finished and len(walk) < 30:
            walk.append(into.step(Action(kind=ActionKind.STEP_INTO)))
        walk = [s for s in walk if not s.finished][::-1]
        out.append(Trajectory(program=source, direction="inverse", initial=walk[0],
                              steps=[Step(action=Action(kind=ActionKind.INV_STEP_INTO), state=s) for s in walk[1:]]))
    return out


def test_real_trajectories_round_trip_and_match_the_grammar() -> None:
    for traj in _real_trajectories(4, seed=7):
        text = L.render_text(L.render_trajectory(traj))
        _, pairs = L.parse_session(text, traj.program)
        assert [s for _, s in pairs] == [L.canonical_state(s, traj.program) for s in traj.states]
        for state in traj.states:  # tracegen fills Frame.source the way parse_state does
            assert [f.source for f in state.frames] == [L.source_line(traj.program, f.line) for f in state.frames]
        previous = None
        for state in traj.states:
            assert L.state_grammar(traj.program, previous).matches(L.render_state(state, previous))
            previous = state


def test_sampled_trajectories_round_trip_windows_and_grammar() -> None:
    """tracegen.sampling's paper-policy trajectories (forward and inverse): render -> parse is exact,
    every state matches the constraint regex, and windows of them parse back."""
    import random

    from tracegen.fast import record_program
    from tracegen.sampling import sample_trajectories
    from tracegen.synth import generate_program

    rng = random.Random(11)
    trajs: list[Trajectory] = []
    while len(trajs) < 8 or not any(t.direction == "inverse" for t in trajs):
        trajs += sample_trajectories(record_program(generate_program(rng).source), rng, 3, 40, inverse_fraction=0.5)
        assert len(trajs) < 60, "sampling never produced an inverse trajectory"
    for traj in trajs:
        text = L.render_text(L.render_trajectory(traj))
        _, pairs = L.parse_session(text, traj.program)
        assert [s for _, s in pairs] == [L.canonical_state(s, traj.program) for s in traj.states]
        assert [a for a, _ in pairs[1:]] == [s.action.model_copy(update={"source": None}) for s in traj.steps]
        previous = None
        for state in traj.states:
            assert L.state_grammar(traj.program, previous).matches(L.render_state(state, previous))
            previous = state
        for window in L.render_windows(traj, 400, len):
            L.parse_session(L.render_text(window), traj.program)


_PREVIOUS = State(
    reason=StopReason.STEP,
    frames=[Frame(name="check", line=2, locals={"v": "1"}), Frame(name="<module>", line=6, locals={"x": "[]"})],
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.from_regex(L.state_regex(EXAMPLE, _PREVIOUS), fullmatch=True))
def test_every_text_the_constraint_allows_parses(text: str) -> None:
    state = L.parse_state(text, _PREVIOUS, EXAMPLE)
    assert L.parse_state(L.render_state(state, _PREVIOUS), _PREVIOUS, EXAMPLE) == state
    assert {f.line for f in state.frames} <= {1, 2, 3, 4, 6, 7}


BROKEN = "def (:\n  pass\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.from_regex(L.state_regex(BROKEN, None), fullmatch=True))
def test_constraint_of_a_program_that_does_not_compile_still_parses(text: str) -> None:
    state = L.parse_state(text, None, BROKEN)
    assert L.parse_state(L.render_state(state), None, BROKEN) == state


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_arbitrary_text_raises_parse_error_only(text: str) -> None:
    try:
        parsed = L.parse_state(text, _PREVIOUS, EXAMPLE)
    except L.ParseError as exc:
        assert str(exc)
    else:
        assert L.parse_state(L.render_state(parsed, _PREVIOUS), _PREVIOUS, EXAMPLE) == parsed
