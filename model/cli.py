"""`neural-debugger serve-model CKPT`: serve a checkpoint with vLLM's OpenAI-compatible server (GPU).

The command line it runs (see notes/vllm.md): ``vllm serve CKPT --served-model-name NAME
--max-model-len N --dtype bfloat16 --generation-config vllm --enable-prompt-tokens-details
--port P``. Prefix caching is on by default in vLLM V1, so each debugger step only prefills its
new tokens; ``--enable-prompt-tokens-details`` makes the server report the cached prompt tokens.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import typer

app = typer.Typer(add_completion=False, help="Serve a checkpoint with vLLM (GPU).")

INSTALL_HINT = "vLLM is not installed. On a machine with a CUDA GPU run:  pip install '.[gpu]'"


def serve_command(checkpoint: Path, *, port: int, max_model_len: int | None, served_model_name: str, host: str = "127.0.0.1") -> list[str]:
    """The `vllm serve` argument list for a checkpoint folder."""
    if max_model_len is None:
        max_model_len = _context_length(checkpoint)
    exe = shutil.which("vllm")
    head = [exe] if exe else [sys.executable, "-m", "vllm.entrypoints.cli.main"]
    command = head + [
        "serve", str(checkpoint),
        "--served-model-name", served_model_name,
        "--dtype", "bfloat16",
        "--generation-config", "vllm",
        "--enable-prompt-tokens-details",
        "--host", host,
        "--port", str(port),
    ]  # fmt: skip
    if max_model_len:
        command += ["--max-model-len", str(max_model_len)]
    return command


def _context_length(checkpoint: Path) -> int | None:
    try:
        value = json.loads((checkpoint / "config.json").read_text()).get("max_position_embeddings")
    except (OSError, ValueError, AttributeError):
        return None
    return int(value) if isinstance(value, int) else None


@app.command()
def serve_model(
    checkpoint: Path = typer.Argument(..., help="A checkpoint folder (config.json, model.safetensors, tokenizer.json)."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    max_model_len: int | None = typer.Option(None, "--max-model-len", help="Context length (default: the model's max_position_embeddings)."),
    served_model_name: str = typer.Option("neural-debugger", "--served-model-name", help="The model name clients send."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the vllm command instead of running it."),
) -> None:
    """Start `vllm serve` on CKPT with the flags the neural debugger expects."""
    if not (checkpoint / "config.json").is_file():
        typer.echo(f"error: not a checkpoint folder (no config.json): {checkpoint}", err=True)
        raise SystemExit(2)
    command = serve_command(checkpoint, port=port, max_model_len=max_model_len, served_model_name=served_model_name, host=host)
    if dry_run:
        typer.echo(shlex.join(command))
        return
    if importlib.util.find_spec("vllm") is None:
        typer.echo(f"error: {INSTALL_HINT}\n(or debug on CPU with the in-process transformers backend: \"backend\": \"transformers\")", err=True)
        raise SystemExit(1)
    typer.echo(f"starting: {shlex.join(command)}", err=True)
    typer.echo(f"clients: \"backend\": \"vllm\", \"vllmUrl\": \"http://{host}:{port}\"", err=True)
    os.execv(command[0], command)
