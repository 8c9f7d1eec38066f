"""The neural-debugger language with other user files: frames carry their file, breakpoints name theirs.

A frame of another file is ``name<|src_sep|>"path"<|line_sep|>N{locals}`` (its source text comes
from the module, as a program frame's comes from the program); a breakpoint in another file is
listed after the program's as ``<|src_sep|>"path"<|line_sep|>N``. The grammar of a state allows
frames of the given modules (their code objects' names and lines) and continues them.
"""
from __future__ import annotations

from model.prompt import language as L
from model.decode.constraints import state_constraint
from protocol.debugger import Action, ActionKind, Frame, State, Step, StopReason

PROGRAM = "import pricing\n\nitems = [1, 2]\ntotal = pricing.total(items)\nprint(total)\n"
MODULES = {"pricing.py": "def total(items):\n    s = 0\n    for x in items:\n        s += x\n    return s\n",
           "shop/cart.py": "class Cart:\n    def add(self, v):\n        self.v = v\n"}


def _call_state() -> State:
    return State(reason=StopReason.STEP, frames=[
        Frame(name="total", line=2, locals={"items": "[1, 2]"}, file="pricing.py", source="s = 0"),
        Frame(name="<module>", line=4, locals={"items": "[1, 2]"}, source="total = pricing.total(items)")])


def test_a_frame_of_another_file_round_trips_with_its_source_from_the_module() -> None:
    entry = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=4, locals={"items": "[1, 2]"})])
    state = _call_state()
    text = L.render_state(state, entry)
    assert '<|src_sep|>"pricing.py"<|line_sep|>2' in text and "s = 0" not in text
    assert L.parse_state(text, entry, PROGRAM, MODULES) == L.canonical_state(state, PROGRAM, MODULES)
    assert L.parse_state(text, entry, PROGRAM).top.source == ""  # module unknown: no text, still parsed
    legacy = text.replace('"pricing.py"', '["pricing.py","s = 0"]')  # the older form still parses
    assert L.parse_state(legacy, entry, PROGRAM, MODULES).top.file == "pricing.py"


def test_the_grammar_allows_frames_of_modules_and_continues_them() -> None:
    entry = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=4, locals={"items": "[1, 2]"})])
    inside = L.render_state(_call_state(), entry)[: -len(L.STATE_END)]
    assert state_constraint(PROGRAM, entry, MODULES).complete(inside)
    assert not state_constraint(PROGRAM, entry).complete(inside)  # without the modules: no other file
    wrong_line = inside.replace("<|line_sep|>2", "<|line_sep|>9", 1)
    assert not state_constraint(PROGRAM, entry, MODULES).complete(wrong_line)
    # the next step continues the module frame with a delta
    after = State(reason=StopReason.STEP, frames=[
        Frame(name="total", line=3, locals={"items": "[1, 2]", "s": "0"}, file="pricing.py"),
        Frame(name="<module>", line=4, locals={"items": "[1, 2]"})])
    text = L.render_state(after, _call_state())[: -len(L.STATE_END)]
    assert "<|frame_sep|>total<|src_sep|>" in text
    assert state_constraint(PROGRAM, _call_state(), MODULES).complete(text)


def test_breakpoints_of_other_files_are_written_with_their_file_and_parse_back() -> None:
    breakpoints = [4, ("pricing.py", 4), ("shop/cart.py", 3), ("pricing.py", 2)]
    header = L.render_header(PROGRAM, breakpoints)
    assert header.endswith('<|breakpoints|><|line_sep|>4<|src_sep|>"pricing.py"<|line_sep|>2<|line_sep|>4'
                           '<|src_sep|>"shop/cart.py"<|line_sep|>3\n')
    entry = State(reason=StopReason.ENTRY, frames=[Frame(name="<module>", line=1)])
    step = Step(action=Action(kind=ActionKind.CONTINUE), state=_call_state())
    text = L.render_text(L.render_segments(PROGRAM, breakpoints, [entry, step]))
    parsed_bps, pairs = L.parse_session(text, PROGRAM, MODULES)
    assert sorted(parsed_bps, key=str) == sorted([4, ("pricing.py", 2), ("pricing.py", 4), ("shop/cart.py", 3)], key=str)
    assert pairs[-1][1] == L.canonical_state(_call_state(), PROGRAM, MODULES)
    assert L.parse_breakpoints("<|line_sep|>3") == [3]
    for bad in ('<|src_sep|>"x.py"<|line_sep|>', "<|src_sep|>nope<|line_sep|>2", "<|line_sep|>x"):
        try:
            L.parse_breakpoints(bad)
        except L.ParseError:
            continue
        raise AssertionError(f"accepted {bad!r}")


def test_session_knows_the_modules_and_prompts_with_their_breakpoints(tiny_checkpoint, tmp_path) -> None:  # noqa: ANN001
    from model.session import NeuralDebugger
    from model.session_api import SessionError

    (tmp_path / "pricing.py").write_text(MODULES["pricing.py"])
    (tmp_path / "unused.py").write_text("x = 1\n")
    main = tmp_path / "main.py"
    main.write_text(PROGRAM)
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, path=str(main), max_state_tokens=48)
    assert session.modules == {"pricing.py": MODULES["pricing.py"]}
    assert session.set_file_breakpoints(str(tmp_path / "pricing.py"), [2, 9]) == [2]
    assert session.set_file_breakpoints("pricing.py", [4, 5]) == [4, 5]
    try:
        session.set_file_breakpoints(str(tmp_path / "unused.py"), [1])
    except SessionError as exc:
        assert "not a user module" in str(exc)
    else:
        raise AssertionError("a file the program does not import was accepted")
    session.start()
    text = session.tokenizer.decode(session._header(), skip_special_tokens=False)  # noqa: SLF001
    assert '<|src_sep|>"pricing.py"<|line_sep|>4<|line_sep|>5\n' in text
    state = session.step(Action(kind=ActionKind.STEP_INTO))
    assert state.reason is not None
