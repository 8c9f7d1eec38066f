"""`neural-debugger dap`: the Debug Adapter Protocol on stdio, or on TCP with ``--port N``.

On stdio nothing but DAP frames goes to stdout; logs go to stderr (or ``--log-file``). With
``--port`` the server prints ``listening on HOST:PORT`` to stderr once it accepts connections
(``--port 0`` picks a free port) and serves any number of clients, one session each.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Optional

import anyio
import typer

from adapter.server import serve_stdio, serve_tcp

app = typer.Typer(add_completion=False, help="Serve the Debug Adapter Protocol (stdio, or TCP with --port).")


def _setup_logging(log_file: Optional[Path], verbose: bool) -> None:
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger("adapter")
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)


def _announce(host: str, port: int) -> None:
    print(f"neural-debugger dap: listening on {host}:{port}", file=sys.stderr, flush=True)


@app.command()
def dap(
    port: Optional[int] = typer.Option(None, "--port", min=0, max=65535, help="Listen on this TCP port instead of stdio (0: any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on with --port."),
    log_file: Optional[Path] = typer.Option(None, "--log-file", help="Write the adapter's log here instead of stderr."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log every request."),
) -> None:
    """Serve DAP on stdio (VS Code's DebugAdapterExecutable) or on TCP with --port."""
    _setup_logging(log_file, verbose)
    try:
        if port is None:
            anyio.run(serve_stdio)
        else:
            anyio.run(serve_tcp, host, port, _announce)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"neural-debugger dap: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
