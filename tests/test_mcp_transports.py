"""The MCP server as an agent launches it: `neural-debugger mcp` over stdio (a real subprocess, the
SDK's stdio client), and once over Streamable HTTP on 127.0.0.1."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "def scale(xs, k):\n    out = [x * k for x in xs]\n    return out\n\n\nvalues = scale([1, 2], 3)\ntotal = sum(values)\n"


def server_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "neural_debugger_cli", "mcp", *args], env=server_env(), cwd=str(ROOT))


async def ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def agent_session(client: Client, program: Path) -> None:
    """What an agent does: list the tools, debug a program, predict a call and its inputs, verify, make mistakes."""
    names = {t.name for t in (await client.list_tools()).tools}
    assert {"start_session", "step", "predict_call", "predict_inputs", "verify"} <= names
    started = await ok(client, "start_session", program=str(program), breakpoints=["7"], stop_on_entry=False)
    sid = started["session_id"]
    stop = started["stop"]
    stops = 2
    while not stop["ended"] and stops < 5:
        stop = (await ok(client, "step", session_id=sid, action="in"))["stop"]
        stops += 1
        assert 0.0 <= stop["confidence"] <= 1.0 and stop["reason"] in {"step", "breakpoint", "exception", "exited"}
    report = await ok(client, "verify", session_id=sid)
    assert report["matched"] + len(report["divergences"]) == report["stops"]
    assert report["stops"] == stops or "had ended" in report["note"]  # the real run can end before a wrong prediction does
    answer = await ok(client, "predict_call", source=SOURCE, call="scale([4], 2)")
    assert 0.0 <= answer["confidence"] <= 1.0
    inputs = await ok(client, "predict_inputs", source=SOURCE, function="scale", output="[2, 4]", candidates=2)
    assert all(0.0 <= c["confidence"] <= 1.0 for c in inputs["candidates"])
    bad = await client.call_tool("step", {"session_id": sid, "action": "sideways"})
    assert bad.is_error
    bad = await client.call_tool("start_session", {"program": str(program.parent / "missing.py")})
    assert bad.is_error and "program not found" in bad.content[0].text
    await ok(client, "end_session", session_id=sid)
    assert (await client.list_tools()).tools  # still serving


def test_stdio_subprocess_client(tiny_checkpoint: Path, tmp_path: Path) -> None:
    program = tmp_path / "scale.py"
    program.write_text(SOURCE)

    async def main() -> None:
        async with Client(stdio("--model", str(tiny_checkpoint))) as client:
            await agent_session(client, program)

    anyio.run(main)


def test_stdio_with_the_shipped_model(tmp_path: Path) -> None:
    """The issue's "done when": an SDK client over stdio, the shipped model, every kind of question."""
    program = tmp_path / "scale.py"
    program.write_text(SOURCE)

    async def main() -> None:
        async with Client(stdio()) as client:
            await agent_session(client, program)

    anyio.run(main)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_streamable_http_on_localhost(tmp_path: Path) -> None:
    program = tmp_path / "scale.py"
    program.write_text(SOURCE)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "neural_debugger_cli", "mcp", "--http", str(port)], cwd=ROOT, env=server_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read().decode() if server.stderr else ""
                time.sleep(0.2)

        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert len((await client.list_tools()).tools) == 10
                started = await ok(client, "start_session", program=str(program), backend="debugpy")
                stop = (await ok(client, "step", session_id=started["session_id"], action="over"))["stop"]
                assert stop["frames"][0]["line"] == 6 and stop["confidence"] == 1.0

        anyio.run(main)
    finally:
        server.terminate()
        server.wait(timeout=10)
