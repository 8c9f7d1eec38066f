"""`neural-debugger mcp`: the MCP server on stdio (what an agent launches), or Streamable HTTP with --http PORT.

On stdio, stdout carries MCP messages only (the SDK diverts stray prints); logs go to stderr. With
--http the server listens on 127.0.0.1 only, at http://127.0.0.1:PORT/mcp.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from adapter.mcp_server.server import ServerSettings, build_server

app = typer.Typer(add_completion=False, help="Serve the neural debugger as MCP tools for coding agents (stdio, or --http PORT).")
HOST = "127.0.0.1"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@app.command()
def mcp(
    http: Optional[int] = typer.Option(None, "--http", min=1, max=65535, help="Serve Streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio."),
    model: Optional[Path] = typer.Option(None, "--model", help="Checkpoint folder (default: the shipped model)."),
    max_sessions: int = typer.Option(4, "--max-sessions", min=1, max=64, help="Debugging sessions open at once."),
    idle_seconds: float = typer.Option(900.0, "--idle-seconds", min=1.0, help="End a session after this long without a call."),
    value_limit: int = typer.Option(200, "--value-limit", min=16, help="Characters of a value shown in a stop before it is cut."),
    log_level: str = typer.Option("WARNING", "--log-level", help="DEBUG, INFO, WARNING or ERROR (to stderr)."),
) -> None:
    """Serve the MCP tools: start_session, step, get_stack, get_variables, evaluate, set_variable, end_session,
    predict_call, predict_inputs, verify."""
    if log_level.upper() not in LOG_LEVELS:
        print(f"neural-debugger mcp: --log-level must be one of {', '.join(LOG_LEVELS)}", file=sys.stderr)
        raise SystemExit(2)
    if model is not None and not (model / "config.json").is_file():
        print(f"neural-debugger mcp: not a checkpoint folder (no config.json): {model}", file=sys.stderr)
        raise SystemExit(2)
    settings = ServerSettings(model=model, max_sessions=max_sessions, idle_seconds=idle_seconds, value_limit=value_limit,
                              log_level=log_level.upper())  # type: ignore[arg-type]
    server = build_server(settings)
    try:
        if http is None:
            server.run("stdio")
        else:
            print(f"neural-debugger mcp: serving http://{HOST}:{http}/mcp", file=sys.stderr, flush=True)
            server.run("streamable-http", host=HOST, port=http)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"neural-debugger mcp: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
