"""The MCP server in process (the SDK's in-memory client): tools and schemas, whole sessions checked
against recorded debugpy stops, predict_call / predict_inputs, verify, bad arguments, concurrency."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from adapter.mcp_server.results import stop_of
from adapter.mcp_server.server import ServerSettings, build_server
from adapter.mcp_server.sessions import OpenSession, RegistryError, SessionRegistry
from tests.parity import GOLDEN_DIR, load_golden

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"start_session", "step", "get_stack", "get_variables", "evaluate", "set_variable", "end_session", "predict_call",
         "predict_inputs", "verify"}  # fmt: skip
MCP_ACTIONS = {"step_into": "in", "step_over": "over", "step_return": "out", "continue": "continue"}
PROGRAM = "def add(a, b):\n    c = a + b\n    return c\n\nx = add(1, 2)\ny = [x, x * 2]\nprint(y)\n"


def run(settings: ServerSettings, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(build_server(settings)) as client:
            return await body(client)

    return anyio.run(main)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured result of a tool that must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def error(client: Client, tool: str, **arguments: Any) -> str:
    """The message of a tool call that must fail as a tool error."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text


def check_stop(stop: dict[str, Any]) -> None:
    """A well formed stop: the documented fields, a confidence in 0..1, repr strings."""
    assert stop["reason"] in {"entry", "step", "breakpoint", "exception", "exited"}
    assert 0.0 <= stop["confidence"] <= 1.0
    assert stop["ended"] == (stop["reason"] == "exited")
    assert all(isinstance(f["name"], str) and isinstance(f["line"], int) and f["file"] for f in stop["frames"])
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in stop["locals"].items())


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    return path


def test_tools_and_schemas() -> None:
    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.description and tool.input_schema["type"] == "object" and tool.output_schema, tool.name
        assert tools["step"].input_schema["properties"]["action"]["enum"] == ["in", "over", "out", "continue", "back"]
        assert tools["start_session"].input_schema["properties"]["backend"]["enum"] == ["neural", "debugpy", "compare"]
        assert set(tools["start_session"].output_schema["properties"]) >= {"session_id", "stop"}
        stop = tools["step"].output_schema["$defs"]["Stop"]["properties"]
        assert {"reason", "frames", "locals", "confidence", "ended", "exit_code"} <= set(stop)
        assert "RUNS" in tools["verify"].description and "WITHOUT running" in tools["predict_call"].description
        assert set(tools["predict_inputs"].input_schema["required"]) == {"source", "function", "output"}

    run(ServerSettings(), body)


def test_oracle_session_matches_recorded_debugpy_stops(tmp_path: Path) -> None:
    """Backend debugpy (the recorder, run for real): every stop equals the stop real debugpy showed, as recorded."""
    golden = load_golden(GOLDEN_DIR / "example_functions.json")
    script, states = next((s, st) for s, st in golden.sessions if not s.breakpoints and all(a.kind.value in MCP_ACTIONS for a in s.actions))
    path = tmp_path / "functions.py"
    path.write_text(golden.program.source)

    async def body(client: Client) -> list[dict[str, Any]]:
        started = await call(client, "start_session", program=str(path), backend="debugpy")
        stops = [started["stop"]]
        for action in script.actions[: len(states) - 1]:
            stops.append((await call(client, "step", session_id=started["session_id"], action=MCP_ACTIONS[action.kind.value]))["stop"])
        report = await call(client, "verify", session_id=started["session_id"])
        assert report["matched"] == report["stops"] == len(stops) and report["divergences"] == []
        return stops

    stops = run(ServerSettings(), body)
    assert len(stops) == len(states) > 3
    for got, want in zip(stops, states):
        expected = stop_of(want, str(path), 1.0, 200).model_dump(mode="json")
        assert {k: got[k] for k in ("reason", "frames", "locals", "return_value", "ended", "exit_code")} == \
               {k: expected[k] for k in ("reason", "frames", "locals", "return_value", "ended", "exit_code")}  # fmt: skip


def test_neural_session_is_well_formed_and_verifies(tiny_checkpoint: Path, program: Path) -> None:
    async def body(client: Client) -> None:
        started = await call(client, "start_session", program=str(program), breakpoints=["6"])
        assert started["backend"] == "neural" and started["breakpoints"] == ["6"]
        sid = started["session_id"]
        check_stop(started["stop"])
        assert started["stop"]["reason"] == "entry" and started["stop"]["frames"][0]["line"] == 1
        taken = 1
        for action in ("in", "over", "in", "back", "in"):
            stop = (await call(client, "step", session_id=sid, action=action))["stop"]
            check_stop(stop)
            taken += -1 if action == "back" else 1
            if stop["ended"]:
                break
        if not stop["ended"]:
            stack = await call(client, "get_stack", session_id=sid)
            assert [f["line"] for f in stack["frames"]] == [f["line"] for f in stop["frames"]]
            variables = await call(client, "get_variables", session_id=sid)
            assert all(0.0 <= v["confidence"] <= 1.0 for v in variables["variables"])
            edited = (await call(client, "set_variable", session_id=sid, name="probe", value="[1, 2]"))["stop"]
            assert edited["locals"]["probe"] == "[1, 2]"
            assert (await call(client, "evaluate", session_id=sid, expression="probe[1]")) == \
                   {"expression": "probe[1]", "value": "2", "truncated": False, "confidence": 1.0}  # fmt: skip
        report = await call(client, "verify", session_id=sid)
        assert report["matched"] + len(report["divergences"]) == report["stops"]
        assert report["stops"] == taken or "had ended" in report["note"]  # the real run can end before a wrong prediction does
        assert all(d["real"]["reason"] for d in report["divergences"])
        await call(client, "end_session", session_id=sid)
        assert "no session" in await error(client, "step", session_id=sid)

    run(ServerSettings(model=tiny_checkpoint), body)


def test_predict_call_and_inputs_are_well_formed(tiny_checkpoint: Path) -> None:
    source = "def f(xs, k):\n    out = [x * k for x in xs]\n    return out\n"

    async def body(client: Client) -> None:
        answer = await call(client, "predict_call", source=source, call="f([1, 2], 3)")
        assert 0.0 <= answer["confidence"] <= 1.0 and answer["seconds"] >= 0
        assert (answer["returned"] is not None) + (answer["raised"] is not None) + (answer["note"] is not None) >= 1
        inputs = await call(client, "predict_inputs", source=source, function="f", output="[3, 6]", candidates=2)
        assert len(inputs["candidates"]) <= 2 and (inputs["candidates"] or inputs["note"])
        assert all(0.0 <= c["confidence"] <= 1.0 and c["arguments"] for c in inputs["candidates"])

    run(ServerSettings(model=tiny_checkpoint), body)


def test_bad_arguments_are_tool_errors(tmp_path: Path, program: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n    pass\n")

    async def body(client: Client) -> None:
        assert "program not found" in await error(client, "start_session", program=str(tmp_path / "missing.py"), backend="debugpy")
        assert "syntax error" in await error(client, "start_session", program=str(broken), backend="debugpy")
        assert "breakpoint 'x'" in await error(client, "start_session", program=str(program), backend="debugpy", breakpoints=["x"])
        assert "backend" in await error(client, "start_session", program=str(program), backend="gdb")
        assert "no session 'nope'" in await error(client, "step", session_id="nope", action="in")
        sid = (await call(client, "start_session", program=str(program), backend="debugpy"))["session_id"]
        assert "action" in await error(client, "step", session_id=sid, action="jump")
        assert "no frame 3" in await error(client, "get_variables", session_id=sid, frame=3)
        assert "never runs code" in await error(client, "evaluate", session_id=sid, expression="__import__('os')")
        assert "repr writes it" in await error(client, "set_variable", session_id=sid, name="x", value="1 +")
        assert "not a call" in await error(client, "predict_call", source="x = 1\n", call="1 + 2")
        assert "does not compile" in await error(client, "predict_call", source="def f(:\n", call="f(1)")
        assert "no top-level function 'g'" in await error(client, "predict_inputs", source="def f(a):\n    return a\n", function="g", output="1")
        assert "string_too_long" in await error(client, "predict_call", source="x = 1\n" * 50_000, call="f()")
        for _ in range(4):
            await call(client, "step", session_id=sid, action="continue") if _ == 0 else None
        assert "exited" in await error(client, "step", session_id=sid, action="over")
        assert "exited" in await error(client, "get_variables", session_id=sid)
        assert (await call(client, "step", session_id=sid, action="back"))["stop"]["reason"] != "exited"  # the server goes on

    run(ServerSettings(), body)


def test_huge_values_are_cut_with_a_path_to_expand(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_text("rows = [list(range(15)) for _ in range(3)]\nname = 'x' * 500\ndone = True\n")

    async def body(client: Client) -> None:
        sid = (await call(client, "start_session", program=str(path), backend="debugpy"))["session_id"]
        await call(client, "step", session_id=sid, action="over")
        stop = (await call(client, "step", session_id=sid, action="over"))["stop"]
        assert set(stop["truncated"]) == {"rows", "name"} and len(stop["locals"]["rows"]) == 60 and stop["locals"]["rows"].endswith("...")
        whole = await call(client, "get_variables", session_id=sid, path="rows")
        assert whole["value"].startswith("[[0, 1, 2") and not whole["truncated"]
        assert [v["path"] for v in whole["variables"]] == ["rows[0]", "rows[1]", "rows[2]"] and whole["variables"][0]["expandable"]
        inner = await call(client, "get_variables", session_id=sid, path="rows[2]")
        assert inner["variables"][14] == {"name": "14", "value": "14", "path": "rows[2][14]", "confidence": 1.0, "truncated": False, "expandable": False}
        assert (await call(client, "evaluate", session_id=sid, expression="rows[1][7]"))["value"] == "7"

    run(ServerSettings(value_limit=60), body)


def test_two_sessions_at_once_are_isolated_and_bounded(tmp_path: Path) -> None:
    first, second = tmp_path / "one.py", tmp_path / "two.py"
    first.write_text("a = 1\nb = a + 1\nc = b + 1\n")
    second.write_text("s = 'x'\nt = s * 2\nu = t * 2\n")

    async def body(client: Client) -> None:
        ids: dict[str, str] = {}

        async def start(path: Path) -> None:
            ids[path.name] = (await call(client, "start_session", program=str(path), backend="debugpy"))["session_id"]

        async with anyio.create_task_group() as group:
            group.start_soon(start, first)
            group.start_soon(start, second)
        assert "2 sessions are open" in await error(client, "start_session", program=str(first), backend="debugpy")
        stops: dict[str, dict[str, Any]] = {}

        async def walk(name: str) -> None:
            for _ in range(2):
                stops[name] = (await call(client, "step", session_id=ids[name], action="over"))["stop"]

        async with anyio.create_task_group() as group:
            group.start_soon(walk, "one.py")
            group.start_soon(walk, "two.py")
        assert stops["one.py"]["locals"] == {"a": "1", "b": "2"} and stops["one.py"]["frames"][0]["file"] == str(first)
        assert stops["two.py"]["locals"] == {"s": "'x'", "t": "'xx'"} and stops["two.py"]["frames"][0]["file"] == str(second)
        await call(client, "end_session", session_id=ids["one.py"])
        await call(client, "start_session", program=str(first), backend="debugpy")

    run(ServerSettings(max_sessions=2), body)


def test_idle_sessions_are_reaped() -> None:
    now = [0.0]
    registry = SessionRegistry(max_sessions=1, idle_seconds=10, clock=lambda: now[0])
    closed: list[str] = []

    class Closing:
        def close(self) -> None:
            closed.append("closed")

    opened = registry.open(lambda sid: OpenSession(session_id=sid, backend="debugpy", program=None, session=Closing()))  # type: ignore[arg-type]
    now[0] = 5.0
    with registry.use(opened.session_id):
        now[0] = 30.0
        assert registry.reap() == []  # in use: never reaped under a running call
    now[0] = 39.0
    assert registry.reap() == [] and closed == []
    now[0] = 41.0
    assert registry.reap() == [opened.session_id] and closed == ["closed"]
    with pytest.raises(RegistryError, match="no session"):
        with registry.use(opened.session_id):
            pass
    registry.open(lambda sid: OpenSession(session_id=sid, backend="debugpy", program=None, session=Closing()))  # type: ignore[arg-type]


def test_compare_backend_lists_divergences_from_real_debugpy(tiny_checkpoint: Path, program: Path) -> None:
    """backend compare: real debugpy in lockstep; an untrained model's stops differ, and each difference is listed."""

    async def body(client: Client) -> None:
        sid = (await call(client, "start_session", program=str(program), backend="compare"))["session_id"]
        stops = []
        while not (stops and stops[-1]["ended"]) and len(stops) < 4:
            stops.append((await call(client, "step", session_id=sid, action="in"))["stop"])
        for stop in stops:
            check_stop(stop)
            assert isinstance(stop["divergences"], list)
            assert all(d["text"] and d["action"] == "step_into" for d in stop["divergences"])
        # the real program makes 9 stops stepping in; an untrained model's first four (or fewer) are not all right
        assert any(stop["divergences"] for stop in stops)
        await call(client, "end_session", session_id=sid)

    run(ServerSettings(model=tiny_checkpoint), body)
