"""The sandboxed child: limits end runaway programs as exit_never, the user's own modules win."""
from __future__ import annotations

from pathlib import Path

from protocol.debugger import Action, Ending
from tracegen.fast import record_program, replay, replay_to_end
from tracegen.sandbox import Limits, run_traced

PROGRAMS = Path(__file__).parent / "programs"
SMALL = Limits(cpu_seconds=5, wall_seconds=10.0, memory_bytes=512 << 20, max_events=20_000, max_stdout=100_000)


def test_infinite_loop_ends_as_exit_never():
    trace = record_program(path=PROGRAMS / "forever.py", limits=SMALL)
    assert trace.end.ending is Ending.NEVER and trace.end.how == "limit"
    end = replay_to_end(trace, [])[-1]
    assert end.finished and end.ending is Ending.NEVER and end.exit_code is None


def test_wall_clock_timeout_kills_and_keeps_partial_trace():
    limits = Limits(cpu_seconds=30, wall_seconds=1.5, max_events=10**9)
    trace = record_program(path=PROGRAMS / "forever.py", limits=limits)
    assert trace.end.ending is Ending.NEVER and trace.end.how == "killed"
    assert len(trace.events) > 0
    states = replay(trace, [Action.parse("next")] * 3)
    assert states[-1].top.name == "<module>"


def test_ten_gigabyte_allocation_is_stopped():
    trace = record_program(path=PROGRAMS / "big_alloc.py", limits=SMALL)
    assert trace.end.ending is Ending.NEVER
    assert "MemoryError" in (trace.end.exception or ("", ""))[0]


def test_fork_bomb_is_refused():
    trace = record_program(path=PROGRAMS / "fork_bomb.py", limits=SMALL)
    assert trace.end.how == "uncaught" and trace.end.exception[0] == "PermissionError"


def test_huge_output_is_capped():
    trace = record_program(path=PROGRAMS / "huge_output.py", limits=SMALL)
    assert trace.end.ending is Ending.NEVER and trace.end.exception[0] == "OutputLimit"
    printed = sum(len(e.stdout) for e in trace.events) + len(trace.end.stdout)
    assert printed <= SMALL.max_stdout


def test_users_model_and_protocol_modules_are_the_users():
    trace = record_program(path=PROGRAMS / "imports_model.py")
    end = replay_to_end(trace, [])[-1]
    assert end.exit_code == 0
    assert end.stdout == "the user's own model.py False\n"


def test_argv_name_and_temporary_cwd():
    trace = record_program(path=PROGRAMS / "args_cwd.py", args=("a", "b"))
    state = replay(trace, [Action.parse("breakpoint:5")])[-1]
    assert state.top.locals["argv"] == "['a', 'b']"
    assert state.top.locals["name"] == "'__main__'"
    assert "tracegen-" in state.top.locals["here"]


def test_runner_crash_is_reported(tmp_path):
    missing = tmp_path / "gone.py"
    result = run_traced(missing, limits=SMALL)
    assert result.how == "crashed" and "gone.py" in result.stderr


def test_syntax_error_program_ends_with_error():
    trace = record_program("def broken(:\n")
    end = replay_to_end(trace, [])
    assert len(end) == 1 and end[0].exit_code == 1 and end[0].ending is Ending.ERROR
