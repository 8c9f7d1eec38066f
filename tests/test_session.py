"""NeuralDebugger on a tiny untrained checkpoint: well-formed states, exact step back, no execution."""
from __future__ import annotations

from pathlib import Path

import pytest

from model.prompt import language as lang
from model.session import NeuralDebugger, entry_state
from model.session_api import DebugSession, SessionError
from protocol.debugger import Action, ActionKind, State, StopReason

PROGRAM = """\
def add(a, b):
    c = a + b
    return c

x = add(1, 2)
y = [x, x * 2]
print(y)
"""
INTO = Action(kind=ActionKind.STEP_INTO)
OVER = Action(kind=ActionKind.STEP_OVER)


def make(checkpoint: Path, program: str = PROGRAM, **options: object) -> NeuralDebugger:
    options.setdefault("max_state_tokens", 24)
    return NeuralDebugger.from_checkpoint(checkpoint, program, "prog.py", **options)


def assert_well_formed(state: State, program: str) -> None:
    lines = lang.program_info(program).lines
    for frame in state.frames:
        assert frame.line in lines
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in frame.locals.items())
    if state.finished:
        assert not state.frames


def test_untrained_model_yields_well_formed_states(tiny_checkpoint: Path) -> None:
    session = make(tiny_checkpoint)
    first = session.start()
    assert isinstance(session, DebugSession)
    assert first == entry_state(PROGRAM) and first.reason is StopReason.ENTRY
    previous = first
    for _ in range(5):
        if session.state.finished:
            break
        state = session.step(INTO)
        assert_well_formed(state, PROGRAM)
        record = session._records[-1]
        text = record.text or lang.render_state(state, previous)
        assert lang.parse_state(text, previous, PROGRAM) == state  # what was generated is what is shown
        conf = session.confidence()
        assert set(conf) == set(state.top.locals if state.top else {}) and all(0.0 <= v <= 1.0 for v in conf.values())
        previous = state
    assert len(session.history) >= 1


def test_never_executes_the_program(tiny_checkpoint: Path, tmp_path: Path) -> None:
    marker = tmp_path / "executed.txt"
    program = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\nx = 1\nprint(x)\n"
    session = make(tiny_checkpoint, program)
    session.start()
    for action in [INTO, OVER, Action(kind=ActionKind.CONTINUE)]:
        if session.state.finished:
            break
        session.step(action)
    session.close()
    assert not marker.exists()


def test_step_back_is_exact_and_stops_at_entry(tiny_checkpoint: Path) -> None:
    session = make(tiny_checkpoint, temperature=1.0)
    seen = [session.start()]
    while len(seen) < 4 and not seen[-1].finished:
        seen.append(session.step(INTO))
    for expected in reversed(seen[:-1]):
        assert session.step_back() == expected
    assert session.history == []
    with pytest.raises(SessionError, match="start of the program"):
        session.step_back()


def test_step_back_before_a_snapshot_predicts_with_inverse_action(tiny_checkpoint: Path) -> None:
    session = make(tiny_checkpoint)
    session.start()
    late = State(reason=StopReason.STEP, frames=[lang_frame("<module>", 6, {"x": "3"})])
    session.start_from(late)
    before = session.step_back()
    assert_well_formed(before, PROGRAM)
    assert session.history == [] and session.state == before
    assert session._inverse[0] == late and session._inverse[-1].action.kind is ActionKind.INV_STEP_INTO
    if not before.finished:
        after = session.step(INTO)
        assert_well_formed(after, PROGRAM)


def lang_frame(name: str, line: int, values: dict[str, str]):  # noqa: ANN201
    from protocol.debugger import Frame

    return Frame(name=name, line=line, source=lang.source_line(PROGRAM, line), locals=values)


def test_set_variable_feeds_the_next_prediction(tiny_checkpoint: Path) -> None:
    session = make(tiny_checkpoint)
    session.start()
    edited = session.set_variable("x", "41")
    assert edited.frames[0].locals == {"x": "41"} and session.state == edited
    assert session.confidence() == {"x": 1.0}
    prompt = session.tokenizer.decode(session._prompt_ids(INTO), skip_special_tokens=False)
    assert '"x":"41"' in prompt
    with pytest.raises(SessionError, match="no frame 3"):
        session.set_variable("x", "1", frame_index=3)
    with pytest.raises(SessionError, match="not a variable name"):
        session.set_variable("a b", "1")


def test_prefill_stays_flat_as_the_session_grows(tiny_checkpoint: Path) -> None:
    session = make(tiny_checkpoint, max_state_tokens=16)
    session.start()
    session.set_breakpoints([2, 6])
    for _ in range(8):
        if session.state.finished:
            session.start()
        session.step(INTO)
    counts = session.prefill_log
    prompt_len = len(session._prompt_ids(INTO))
    assert counts[0] > prompt_len // 3  # the first request reads the program
    assert max(counts[1:]) <= 2 * 16 * 2 + 8, counts  # later ones only the new action and state
    assert sum(counts[1:]) < prompt_len * len(counts[1:]) // 2


def test_context_window_keeps_prompts_within_the_model(tiny_checkpoint: Path) -> None:
    session = make(tiny_checkpoint, max_model_len=260, max_state_tokens=16)
    session.start()
    for _ in range(10):
        if session.state.finished:
            break
        session.step(INTO)
        assert len(session._prompt_ids(INTO)) + 16 <= 260
    assert session._window > 0 or len(session.history) < 10


def test_breakpoints_and_bad_requests(tiny_checkpoint: Path) -> None:
    session = make(tiny_checkpoint)
    with pytest.raises(SessionError, match="not started"):
        session.step(INTO)
    assert session.set_breakpoints([1, 4, 6, 99]) == [1, 6]  # line 4 is blank, 99 outside
    session.start()
    with pytest.raises(SessionError, match="not an executable line"):
        session.step(Action(kind=ActionKind.BREAKPOINT, line=4))
    with pytest.raises(SessionError, match="does not compile"):
        make(tiny_checkpoint, "def broken(:\n").start()
    with pytest.raises(SessionError, match="unknown backend"):
        make(tiny_checkpoint, backend="nope")
    with pytest.raises(SessionError, match="vllm_url"):
        make(tiny_checkpoint, backend="vllm")


def test_program_from_path(tiny_checkpoint: Path, tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text(PROGRAM)
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, path=str(program))
    assert session.program == PROGRAM and session.start().top.line == 1
    with pytest.raises(SessionError, match="cannot read"):
        NeuralDebugger.from_checkpoint(tiny_checkpoint, path=str(tmp_path / "missing.py"))


def test_checkpoint_paths(tiny_checkpoint: Path, tmp_path: Path) -> None:
    from model.paths import DEFAULT_CHECKPOINT, REPO_ROOT, CheckpointNotFound, resolve_checkpoint

    assert DEFAULT_CHECKPOINT == REPO_ROOT / "checkpoints" / "default" and (REPO_ROOT / "model" / "paths.py").is_file()
    assert resolve_checkpoint(str(tiny_checkpoint)) == tiny_checkpoint
    assert resolve_checkpoint(tiny_checkpoint.name, cwd=tiny_checkpoint.parent) == tiny_checkpoint
    with pytest.raises(CheckpointNotFound, match="no config.json"):
        resolve_checkpoint(tmp_path)
    with pytest.raises(CheckpointNotFound, match="not found"):
        resolve_checkpoint(tmp_path / "missing")


def test_greedy_retries_keep_a_session_deterministic(tiny_checkpoint: Path) -> None:
    """With retry_temperature=None (evaluation) even the retries decode greedily: two runs agree."""
    runs = []
    for _ in range(2):
        session = make(tiny_checkpoint, max_state_tokens=6, retry_temperature=None)  # short: forces retries
        states = [session.start()]
        while len(states) < 4 and not states[-1].finished:
            states.append(session.step(INTO))
        runs.append(states)
        session.close()
    assert runs[0] == runs[1]


@pytest.mark.parametrize("program", ["", "# nothing but a comment\n\n"])
def test_a_program_without_statements_stops_on_line_0_then_exits_like_debugpy(tiny_checkpoint: Path, program: str) -> None:
    from tracegen.fast import record_program, replay

    real = replay(record_program(program), [OVER])
    session = make(tiny_checkpoint, program)
    assert session.start() == real[0]
    assert session.step(OVER) == real[1]
    assert session.history[0].state.finished and session.state.exit_code == 0
