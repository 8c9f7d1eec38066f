"""The debugpy recorder against LIVE debugpy: each debugpy oddity the fast recorder must reproduce,
spelled out stop by stop on a tiny program (these are the ground truth), plus the failure modes
(a dead or silent adapter, a missing program, a program that never ends)."""
from __future__ import annotations

import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from protocol.debugger import Action, Ending, State, StopReason
from tracegen.dap_client import DapClient, DapError, DapTimeout
from tracegen.debugpy_recorder import DebugpyError, DebugpySession, is_plain_local, record_debugpy
from tests.sample_programs import CHECK_RUN_DEFS

CALLS = CHECK_RUN_DEFS + """
res = run([1, -1])
final = check(-5)
"""


def write(tmp_path: Path, source: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def actions(text: str) -> list[Action]:
    return [Action.parse(a) for a in text.split(",") if a]


def stops(states: list[State]) -> list[tuple]:
    """(reason, stack) per state; the exit code for the last."""
    return [(s.reason.value, s.exit_code) if s.finished else (s.reason.value, s.location) for s in states]


@dataclass(frozen=True)
class Scenario:
    """A tiny program and an action script to record under live debugpy."""

    source: str
    script: str
    breakpoints: tuple[int, ...] = ()
    run_timeout: float = 30.0


GEN = "def gen():\n    yield 1\n    yield 2\n\nfor v in gen():\n    w = v\n"
GLOBALS = """\
import math
def f():
    return 1
class C:
    def __repr__(self):
        return "C()"
c = C()
n = [1, 2]
g = len
print(n)
"""
SCENARIOS: dict[str, Scenario] = {
    "calling_line": Scenario(CALLS, "stepIn," * 21),
    "uncaught_by_step_in": Scenario(CALLS, "next,next,next,stepIn,next,stepIn,stepIn,next"),
    "uncaught_by_next": Scenario(CALLS, "next,next,next,stepIn,next,next,next"),
    "next_onto_breakpoint": Scenario("a = 1\nb = 2\nc = 3\n", "next,next,next", (2,)),
    "step_out_module": Scenario("a = 1\nb = 2\nc = 3\nd = 4\n", "stepOut,stepOut", (3,)),
    "step_out_return": Scenario("def f(x):\n    y = x + 1\n    return y * 2\n\nz = f(3)\n", "next,stepIn,stepOut,next"),
    "listcomp": Scenario("xs = [i * 2 for i in range(2)]\n", "stepIn," * 5),
    "generator": Scenario(GEN, "stepIn," * 10),
    "globals": Scenario(GLOBALS, "next," * 9),
    "stdout": Scenario("print('a')\nprint('b', end='')\nx = 1\nprint('c')\n", "next,next,next,next"),
    "breakpoint_action": Scenario("for i in range(3):\n    a = i\n    b = i\n", "breakpoint:3,continue,breakpoint:2,continue", (2,)),
    "never_ends": Scenario("n = 0\nwhile True:\n    n += 1\n", "continue", run_timeout=1.5),
}


def _record(folder: Path, name: str, scenario: Scenario) -> list[State] | Exception:
    path = folder / f"{name}.py"
    path.write_text(scenario.source)
    try:
        return record_debugpy(path, actions(scenario.script), scenario.breakpoints, run_timeout=scenario.run_timeout)
    except Exception as exc:  # reported by the test that uses the scenario
        return exc


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[State] | Exception]:
    """Every scenario recorded once under live debugpy, four sessions at a time (they mostly wait on IPC)."""
    folder = tmp_path_factory.mktemp("debugpy_scenarios")
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(_record, folder, name, sc) for name, sc in SCENARIOS.items()}
        return {name: f.result() for name, f in futures.items()}


def recorded(live: dict[str, list[State] | Exception], name: str) -> list[State]:
    result = live[name]
    if isinstance(result, Exception):
        raise result
    return result


def test_step_in_returns_to_calling_line_and_exception_arrives_there(live: dict) -> None:
    """stepIn: into check, back on the calling line (return value shown); a raise caught one level
    up arrives on the calling line first, then the except line."""
    states = recorded(live, "calling_line")
    m, r = "<module>", "run"
    assert stops(states)[:22] == [
        ("entry", [(m, 1)]), ("step", [(m, 6)]), ("step", [(m, 15)]),
        ("step", [(r, 7), (m, 15)]), ("step", [(r, 8), (m, 15)]), ("step", [(r, 9), (m, 15)]),
        ("step", [(r, 10), (m, 15)]), ("step", [("check", 2), (r, 10), (m, 15)]),
        ("step", [("check", 4), (r, 10), (m, 15)]),
        ("step", [(r, 10), (m, 15)]),  # back on the calling line
        ("step", [(r, 8), (m, 15)]), ("step", [(r, 9), (m, 15)]), ("step", [(r, 10), (m, 15)]),
        ("step", [("check", 2), (r, 10), (m, 15)]), ("step", [("check", 3), (r, 10), (m, 15)]),
        ("step", [(r, 10), (m, 15)]),  # the exception arrives on the calling line
        ("step", [(r, 11), (m, 15)]), ("step", [(r, 12), (m, 15)]), ("step", [(r, 8), (m, 15)]),
        ("step", [(r, 13), (m, 15)]), ("step", [(m, 15)]), ("step", [(m, 16)]),
    ]
    back = states[9]
    assert back.top.locals == {"it": "1", "items": "[1, -1]", "out": "[]"}
    assert back.return_value is not None and (back.return_value.name, back.return_value.value) == ("check", "2")
    assert states[10].top.locals["out"] == "[2]"
    assert states[20].top.locals == {} and states[21].top.locals == {"res": "[2, 0]"}  # res not assigned on line 15


def test_uncaught_exception_extra_stop_then_raising_frame(live: dict) -> None:
    """An uncaught exception, left by stepIn (or stepOut): a `step` stop on the calling line, then
    `exception` in the raising frame, exit 1. Left by `next` on the raise line: no extra stop."""
    head = [("entry", [("<module>", 1)]), ("step", [("<module>", 6)]), ("step", [("<module>", 15)]),
            ("step", [("<module>", 16)]), ("step", [("check", 2), ("<module>", 16)]),
            ("step", [("check", 3), ("<module>", 16)])]
    raised = ("exception", [("check", 3), ("<module>", 16)])  # reported in the raising frame
    states = recorded(live, "uncaught_by_step_in")
    assert stops(states) == head + [("step", [("<module>", 16)]), raised, ("exited", 1)]
    exc = states[7]
    assert exc.exception is not None and (exc.exception.type, exc.exception.message) == ("ValueError", "neg")
    assert exc.top.locals == {"v": "-5"} and exc.top.source == 'raise ValueError("neg")'
    assert states[-1].ending is Ending.ERROR
    by_next = recorded(live, "uncaught_by_next")
    assert stops(by_next) == head + [raised, ("exited", 1)]


def test_next_landing_on_breakpoint_reports_breakpoint(live: dict) -> None:
    states = recorded(live, "next_onto_breakpoint")
    assert stops(states) == [("entry", [("<module>", 1)]), ("breakpoint", [("<module>", 2)]),
                             ("step", [("<module>", 3)]), ("exited", 0)]


def test_step_out_at_module_level_runs_like_continue(live: dict) -> None:
    states = recorded(live, "step_out_module")
    assert stops(states) == [("entry", [("<module>", 1)]), ("breakpoint", [("<module>", 3)]), ("exited", 0)]


def test_step_out_shows_return_value_in_caller(live: dict) -> None:
    states = recorded(live, "step_out_return")
    assert stops(states) == [("entry", [("<module>", 1)]), ("step", [("<module>", 5)]),
                             ("step", [("f", 2), ("<module>", 5)]), ("step", [("<module>", 5)]), ("exited", 0)]
    after_out = states[3]
    assert after_out.location == [("<module>", 5)]
    assert after_out.return_value is not None and after_out.return_value.value == "8"
    assert "z" not in after_out.top.locals


def test_listcomp_is_a_frame(live: dict) -> None:
    states = recorded(live, "listcomp")
    assert stops(states) == [
        ("entry", [("<module>", 1)]), ("step", [("<listcomp>", 1), ("<module>", 1)]),
        ("step", [("<listcomp>", 1), ("<module>", 1)]), ("step", [("<listcomp>", 1), ("<module>", 1)]),
        ("step", [("<module>", 1)]), ("exited", 0),
    ]
    assert states[2].top.locals["i"] == "0" and states[2].normalized().top.locals[".0"] == "<range_iterator object at 0x?>"


def test_generator_resumes_after_yield(live: dict) -> None:
    """stepIn enters a generator at each resumption, after its last yield; leaving the first yield
    goes straight to the loop body, leaving a later one stops on the `for` line with ``(return) gen``."""
    states = recorded(live, "generator")
    g, m = "gen", "<module>"
    assert stops(states) == [
        ("entry", [(m, 1)]), ("step", [(m, 5)]), ("step", [(g, 2), (m, 5)]),
        ("step", [(m, 6)]),  # no stop on the for line after the first yield
        ("step", [(m, 5)]), ("step", [(g, 3), (m, 5)]),  # resumed after the first yield
        ("step", [(m, 5)]),  # after the second yield: the for line, with the yielded value as return value
        ("step", [(m, 6)]), ("step", [(m, 5)]), ("exited", 0),
    ]
    assert states[6].return_value is not None and states[6].return_value.value == "2"
    assert states[7].top.locals == {"v": "2", "w": "1"}


def test_module_globals_are_plain_locals(live: dict) -> None:
    """At module level the locals are the globals, without dunders, functions, classes, modules."""
    states = recorded(live, "globals")
    last = states[-2]
    assert last.location == [("<module>", 10)]
    assert last.top.locals == {"c": "C()", "n": "[1, 2]"}
    assert states[-1].stdout == "[1, 2]\n"


def test_stdout_belongs_to_the_next_stop(live: dict) -> None:
    states = recorded(live, "stdout")
    assert [s.stdout for s in states] == ["", "a\n", "b", "", "c\n"]


def test_breakpoint_action_is_a_one_off_breakpoint(live: dict) -> None:
    states = recorded(live, "breakpoint_action")
    assert stops(states) == [
        ("entry", [("<module>", 1)]), ("breakpoint", [("<module>", 2)]),  # session bp 2 comes first
        ("breakpoint", [("<module>", 2)]),  # the one-off bp on 3 is gone again
        ("breakpoint", [("<module>", 2)]), ("exited", 0),
    ]
    assert [s.top.locals.get("i") for s in states[1:4]] == ["0", "1", "2"]


def test_program_that_never_stops_ends_as_exit_never(live: dict) -> None:
    states = recorded(live, "never_ends")
    assert states[-1].finished and states[-1].ending is Ending.NEVER and states[-1].exit_code is None


def test_session_api_and_errors(tmp_path: Path) -> None:
    prog = write(tmp_path, "a = 1\nb = 2\n")
    with DebugpySession() as session:
        first = session.start(prog, breakpoints=[])
        assert first.reason is StopReason.ENTRY and first.top.source == "a = 1"
        assert session.set_breakpoints([2]) == [2]
        assert session.step(Action.parse("continue")).reason is StopReason.BREAKPOINT
        with pytest.raises(DebugpyError, match="backwards"):
            session.step(Action.parse("inv_step_into"))
        assert session.step(Action.parse("continue")).finished
        with pytest.raises(DebugpyError, match="ended"):
            session.step(Action.parse("next"))
    with pytest.raises(DebugpyError, match="no such program"):
        record_debugpy(tmp_path / "missing.py", [])


SILENT_ADAPTER = "import sys, time\nsys.stdin.buffer.read(10)\ntime.sleep(60)\n"
DYING_ADAPTER = "import sys\nprint('adapter broke: bad config', file=sys.stderr)\nsys.exit(3)\n"
GARBAGE_ADAPTER = "import sys\nsys.stdout.buffer.write(b'hello\\r\\n\\r\\n')\nsys.stdout.flush()\nimport time; time.sleep(60)\n"


def test_silent_adapter_times_out() -> None:
    client = DapClient([sys.executable, "-c", SILENT_ADAPTER], timeout=0.5)
    try:
        with pytest.raises(DapTimeout, match="did not answer"):
            client.request("initialize", {})
    finally:
        client.close(grace=0.5)


def test_dead_adapter_is_a_clear_error() -> None:
    client = DapClient([sys.executable, "-c", DYING_ADAPTER], timeout=5)
    try:
        with pytest.raises(DapError, match="adapter broke"):
            client.request("initialize", {})
    finally:
        client.close()


def test_garbage_from_adapter_is_a_clear_error() -> None:
    client = DapClient([sys.executable, "-c", GARBAGE_ADAPTER], timeout=5)
    try:
        with pytest.raises(DapError, match="exited|unreadable"):
            client.request("initialize", {})
    finally:
        client.close(grace=0.5)


def test_plain_local_filter() -> None:
    assert is_plain_local({"name": "x", "type": "int"})
    for hidden in ({"name": "special variables"}, {"name": "(return) f"}, {"name": "__doc__", "type": "str"},
                   {"name": "math", "type": "module"}, {"name": "f", "type": "function"}, {"name": "C", "type": "type"}):
        assert not is_plain_local(hidden)
