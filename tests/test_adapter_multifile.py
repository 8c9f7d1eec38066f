"""Multi-file projects over DAP: frames of other user files, breakpoints in them, stepIn/stepOut across files.

The oracle backend (tracegen's fast recorder) behind a real `neural-debugger dap` over TCP, driven
with the scripts of the project goldens (tests/golden/projects/, recorded by real debugpy): every
stop must show debugpy's reason, stack (with each frame's file, as the `source.path` VS Code
opens), top-frame locals, return value, exception and stdout. Breakpoints set in modules are
verified on lines with code and hit. With the tiny random model the same requests must never fail.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from protocol.debugger import ActionKind, ExceptionInfo, Frame, ReturnValue, State, StopReason
from tests.dap_client import DapTestClient, TcpAdapter
from tests.parity import PROJECT_MAIN, ProjectGolden, load_project_goldens, projects

COMMANDS = {ActionKind.STEP_INTO: "stepIn", ActionKind.STEP_OVER: "next", ActionKind.STEP_RETURN: "stepOut",
            ActionKind.CONTINUE: "continue"}


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


def _stdout(client: DapTestClient) -> str:
    return "".join(e["body"]["output"] for e in client.drain("output") if e["body"].get("category") == "stdout")


def _read_state(client: DapTestClient, stopped: dict, stdout: str, folder: Path) -> State:
    frames: list[Frame] = []
    return_value = None
    for index, raw in enumerate(client.ok("stackTrace", {"threadId": 1})["stackFrames"]):
        path = os.path.realpath(raw["source"]["path"])
        rel = Path(path).relative_to(os.path.realpath(folder)).as_posix()
        assert raw["source"]["name"] == Path(path).name
        scopes = client.ok("scopes", {"frameId": raw["id"]})["scopes"]
        ref = next(s for s in scopes if s["name"] == "Locals")["variablesReference"]
        plain = {}
        for var in client.ok("variables", {"variablesReference": ref})["variables"]:
            if var["name"].startswith("(return) "):
                if index == 0:
                    return_value = ReturnValue(name=var["name"][len("(return) "):], value=var["value"])
            else:
                plain[var["name"]] = var["value"]
        frames.append(Frame(name=raw["name"], line=raw["line"], locals=plain, file=None if rel == PROJECT_MAIN else rel))
    exception = None
    if stopped["reason"] == "exception":
        info = client.ok("exceptionInfo", {"threadId": 1})
        exception = ExceptionInfo(type=info["exceptionId"], message=info.get("description") or "")
    return State(reason=StopReason(stopped["reason"]), frames=frames, return_value=return_value, exception=exception, stdout=stdout)


def _next_state(client: DapTestClient, folder: Path) -> State:
    while True:
        for event in list(client.events):
            if event["event"] == "stopped":
                client.events.remove(event)
                return _read_state(client, event["body"], _stdout(client), folder)
            if event["event"] == "exited":
                client.events.remove(event)
                client.wait_event("terminated")
                return State(reason=StopReason.EXITED, exit_code=event["body"]["exitCode"], stdout=_stdout(client))
        with client._cond:  # noqa: SLF001 - a test helper waiting on the reader thread
            if not any(e["event"] in ("stopped", "exited") for e in client.events):
                client._cond.wait(30)  # noqa: SLF001


def _set_breakpoints(client: DapTestClient, folder: Path, breakpoints) -> list[dict]:  # noqa: ANN001
    by_file: dict[str, list[int]] = {PROJECT_MAIN: []}
    for b in breakpoints:
        file, line = (PROJECT_MAIN, b) if isinstance(b, int) else b
        by_file.setdefault(file, []).append(line)
    answers = []
    for file, lines in by_file.items():
        body = client.ok("setBreakpoints", {"source": {"path": str(folder / file)}, "breakpoints": [{"line": n} for n in lines]})
        answers += body["breakpoints"]
    return answers


def _comparable(state: State) -> State:
    data = state.normalized()
    for frame in data.frames:
        frame.source = ""
    if data.finished:
        data.ending, data.exception = None, None
    return data


def _sessions() -> list[tuple[ProjectGolden, int]]:
    return [(g, k) for g in load_project_goldens() for k, (script, _) in enumerate(g.sessions)
            if all(a.kind in COMMANDS for a in script.actions)]


@pytest.mark.parametrize("golden, index", _sessions(), ids=lambda v: v.project.name if isinstance(v, ProjectGolden) else str(v))
def test_oracle_over_dap_matches_debugpy_on_projects(adapter, tmp_path: Path, golden: ProjectGolden, index: int) -> None:
    script, real = golden.sessions[index]
    main = golden.project.write(tmp_path)
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "backend": "oracle", "stopOnEntry": True})
        client.wait_event("initialized")
        answers = _set_breakpoints(client, tmp_path, script.breakpoints)
        assert all(a["verified"] for a in answers), answers
        client.ok("setExceptionBreakpoints", {"filters": ["uncaught"]})
        client.ok("configurationDone")
        shown = [_next_state(client, tmp_path)]
        for action in script.actions:
            if shown[-1].finished:
                break
            client.ok(COMMANDS[action.kind], {"threadId": 1})
            shown.append(_next_state(client, tmp_path))
        client.ok("disconnect")
    expected = [_comparable(s) for s in real]
    got = [_comparable(s) for s in shown]
    for k, (a, b) in enumerate(zip(got, expected)):
        assert a == b, f"stop {k} after {script.actions[k - 1] if k else 'launch'}:\n adapter {a}\n debugpy {b}"
    assert len(got) == len(expected)


def test_breakpoints_in_modules_are_verified_hit_and_stepped_out_of(adapter, tmp_path: Path) -> None:
    """Breakpoints in pricing.py (one on a blank line, moved to no line: unverified) and a library file."""
    project = next(p for p in projects() if p.name == "project_siblings")
    main = project.write(tmp_path)
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "backend": "oracle", "stopOnEntry": True})
        client.wait_event("initialized")
        answers = client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "pricing.py")},
                                               "breakpoints": [{"line": 12}, {"line": 7}]})["breakpoints"]
        assert [a["verified"] for a in answers] == [True, False] and "no code" in answers[1]["message"]
        library = client.ok("setBreakpoints", {"source": {"path": os.__file__}, "breakpoints": [{"line": 10}]})["breakpoints"]
        assert not library[0]["verified"] and "library" in library[0]["message"]
        client.ok("configurationDone")
        assert _next_state(client, tmp_path).reason is StopReason.ENTRY
        client.ok("continue", {"threadId": 1})
        hit = _next_state(client, tmp_path)
        assert hit.reason is StopReason.BREAKPOINT and (hit.top.name, hit.top.line, hit.top.file) == ("total_value", 12, "pricing.py")
        frames = client.ok("stackTrace", {"threadId": 1})["stackFrames"]
        assert os.path.realpath(frames[0]["source"]["path"]) == os.path.realpath(tmp_path / "pricing.py")
        client.ok("stepIn", {"threadId": 1})
        inner = _next_state(client, tmp_path)
        assert (inner.top.name, inner.top.file) == ("line_value", "pricing.py") and len(inner.frames) == 3
        client.ok("stepOut", {"threadId": 1})
        back = _next_state(client, tmp_path)
        assert (back.top.name, back.top.file) == ("total_value", "pricing.py") and back.return_value is not None
        client.ok("disconnect")


def test_tiny_model_session_on_a_project_never_fails(adapter, tmp_path: Path, tiny_checkpoint: Path) -> None:
    """A random model on a multi-file project: breakpoints in a module are verified, steps answer, nothing crashes."""
    project = next(p for p in projects() if p.name == "project_package")
    main = project.write(tmp_path)
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "model": str(tiny_checkpoint), "stopOnEntry": True})
        client.wait_event("initialized")
        answers = client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "geometry" / "area.py")},
                                               "breakpoints": [{"line": 2}, {"line": 9}]})["breakpoints"]
        assert [a["verified"] for a in answers] == [True, False]
        client.ok("configurationDone")
        client.wait_event("stopped")
        seen = []
        for command in ("stepIn", "stepIn", "stepIn", "continue", "next", "stepOut"):
            reply = client.request(command, {"threadId": 1})
            if not reply["success"]:
                assert "ended" in reply["message"], reply  # the model predicted the end
                break
            state = _next_state(client, tmp_path)  # every frame's source.path is a file of the project
            seen.append(state)
            if state.finished:
                break
        assert seen
        client.request("disconnect")


def test_compare_with_debugpy_follows_breakpoints_in_modules(adapter, tmp_path: Path) -> None:
    """compareWith "debugpy" on a project: breakpoints in a module (set before and after the start)
    reach debugpy too, so the lockstep comparison agrees at every stop."""
    project = next(p for p in projects() if p.name == "project_siblings")
    main = project.write(tmp_path)
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "backend": "oracle", "stopOnEntry": True, "compareWith": "debugpy"})
        client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "pricing.py")}, "breakpoints": [{"line": 12}]})
        client.ok("configurationDone")
        client.wait_event("stopped")
        client.ok("continue", {"threadId": 1})
        assert client.wait_event("stopped")["body"]["reason"] == "breakpoint"
        client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "report.py")}, "breakpoints": [{"line": 3}]})
        client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "pricing.py")}, "breakpoints": []})
        client.ok("continue", {"threadId": 1})
        assert client.wait_event("stopped")["body"]["reason"] == "breakpoint"
        client.ok("continue", {"threadId": 1})
        client.wait_event("exited")
        summary = client.wait_event("neuralComparisonSummary")["body"]
        divergences = [e["body"] for e in client.drain("neuralDivergence")]
        client.ok("disconnect")
    assert divergences == [] and summary["stops"] == summary["matched"] == 4, summary


def test_conditional_breakpoint_and_logpoint_in_a_module(adapter, tmp_path: Path) -> None:
    """pricing.py:12 `total += line_value(item)` runs twice (total 0, then 6): a condition picks the
    second arrival; a logpoint in report.py writes its message without stopping."""
    project = next(p for p in projects() if p.name == "project_siblings")
    main = project.write(tmp_path)
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "backend": "oracle", "stopOnEntry": True})
        client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "pricing.py")},
                                     "breakpoints": [{"line": 12, "condition": "total > 0"}]})
        client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "report.py")},
                                     "breakpoints": [{"line": 3, "logMessage": "words={words}"}]})
        client.ok("configurationDone")
        assert _next_state(client, tmp_path).reason is StopReason.ENTRY
        client.ok("continue", {"threadId": 1})
        hit = _next_state(client, tmp_path)
        assert (hit.reason, hit.top.file, hit.top.line, hit.top.locals["total"]) == (StopReason.BREAKPOINT, "pricing.py", 12, "6")
        client.ok("continue", {"threadId": 1})
        end = _next_state(client, tmp_path)
        client.ok("disconnect")
    assert end.finished and "words=['total', '15']" in end.stdout


def test_reverse_continue_stops_at_a_breakpoint_in_a_module(adapter, tmp_path: Path) -> None:
    project = next(p for p in projects() if p.name == "project_siblings")
    main = project.write(tmp_path)
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "backend": "oracle", "stopOnEntry": True})
        client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "report.py")}, "breakpoints": [{"line": 2}]})
        client.ok("configurationDone")
        _next_state(client, tmp_path)
        client.ok("continue", {"threadId": 1})
        assert _next_state(client, tmp_path).top.file == "report.py"
        for _ in range(3):
            client.ok("next", {"threadId": 1})
            _next_state(client, tmp_path)
        client.ok("reverseContinue", {"threadId": 1})
        back = _next_state(client, tmp_path)
        client.ok("disconnect")
    assert (back.reason, back.top.file, back.top.line) == (StopReason.BREAKPOINT, "report.py", 2)


def test_source_request_gives_a_module_file_and_refuses_others(adapter, tmp_path: Path) -> None:
    project = next(p for p in projects() if p.name == "project_classes")
    main = project.write(tmp_path)
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "backend": "oracle", "stopOnEntry": True})
        client.ok("configurationDone")
        client.wait_event("stopped")
        body = client.ok("source", {"source": {"path": str(tmp_path / "stack.py")}, "sourceReference": 0})
        assert body["content"] == project.sources["stack.py"]
        assert client.ok("source", {"sourceReference": 0})["content"] == project.main
        reply = client.request("source", {"source": {"path": os.__file__}, "sourceReference": 0})
        assert not reply["success"] and "folder" in reply["message"]
        client.ok("disconnect")


def test_globals_of_a_module_frame_are_that_module_s(adapter, tmp_path: Path) -> None:
    """A function of report.py shows no Globals scope of main.py (report's globals are not on the
    stack), and a global of main does not evaluate there; in main's frame it does."""
    project = next(p for p in projects() if p.name == "project_siblings")
    main = project.write(tmp_path)
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "backend": "oracle", "stopOnEntry": True})
        client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "report.py")}, "breakpoints": [{"line": 2}]})
        client.ok("configurationDone")
        client.wait_event("stopped")
        client.ok("continue", {"threadId": 1})
        client.wait_event("stopped")
        frames = client.ok("stackTrace", {"threadId": 1})["stackFrames"]
        assert frames[0]["name"] == "summary"
        inner = [s["name"] for s in client.ok("scopes", {"frameId": frames[0]["id"]})["scopes"]]
        assert inner == ["Locals"]
        assert client.request("evaluate", {"expression": "cheap", "frameId": frames[0]["id"], "context": "hover"})["success"]
        reply = client.request("evaluate", {"expression": "items", "frameId": frames[0]["id"], "context": "hover"})
        assert not reply["success"]  # main's global, not report's
        outer = client.ok("evaluate", {"expression": "items", "frameId": frames[1]["id"], "context": "hover"})
        assert outer["result"].startswith("[('pen'")
        client.ok("disconnect")


def test_the_program_written_another_way_is_still_the_program(adapter, tmp_path: Path) -> None:
    project = next(p for p in projects() if p.name == "project_siblings")
    main = project.write(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(main), "backend": "oracle", "stopOnEntry": True})
        answers = client.ok("setBreakpoints", {"source": {"path": str(tmp_path / "link" / "main.py")},
                                               "breakpoints": [{"line": 6}]})["breakpoints"]
        assert answers[0]["verified"]
        client.ok("configurationDone")
        client.wait_event("stopped")
        client.ok("continue", {"threadId": 1})
        assert client.wait_event("stopped")["body"]["reason"] == "breakpoint"
        assert client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]["line"] == 6
        client.ok("disconnect")
