"""Inverse trajectories posed like CruxEval-I: the arguments of the call that just returned are hidden.

An inverse trajectory that starts on a module-level calling line just after a return (the sampler's
``RETURN_START_FRACTION``) teaches ``inv_step_call``: predict the callee's entry locals. In the recorded
program the arguments are written on that line, so the model can copy them; CruxEval-I shows
``result = f(...)`` and asks for them. `hide_call_arguments` rewrites such a trajectory so the call reads
``name(...)`` on its line (in the program and in every frame that shows the line), which makes the model
infer the arguments from the return value and the callee's body, as CruxEval-I asks.

Only the shown text changes: line numbers, states and actions stay as recorded. A trajectory is left
alone (None) unless its first stop is in the main program's ``<module>`` frame alone, on a one-line
statement that makes exactly one call to the function that returned (a plain or attribute name).

Command line: ``python -m tracegen.posing SOURCE OUT`` writes the hidden-call versions of every
qualifying trajectory under SOURCE as shards under OUT (``meta["posing"] = "hidden-call"``).
"""
from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from pathlib import Path

import typer

from protocol.debugger import Frame, State, Trajectory
from tracegen.shards import read_shard, shard_name

HIDDEN = "..."  # what the hidden argument text reads, as CruxEval-I's calling line shows it
MODULE = "<module>"
POSING_KEY = "posing"
POSING = "hidden-call"



def signature_params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str]]:
    """A function's parameters in signature order, each with its kind: pos, var (``*args``), kwonly or varkw (``**kw``)."""
    a = func.args
    out = [(p.arg, "pos") for p in a.posonlyargs + a.args]
    if a.vararg is not None:
        out.append((a.vararg.arg, "var"))
    out += [(p.arg, "kwonly") for p in a.kwonlyargs]
    if a.kwarg is not None:
        out.append((a.kwarg.arg, "varkw"))
    return out


def join_arguments(params: Iterable[tuple[str, str]], values: dict[str, str]) -> str | None:
    """The argument text of a call from the function's entry locals, in signature order (None if one is missing)."""
    parts: list[str] = []
    for name, kind in params:
        if name not in values:
            return None
        value = values[name]
        parts.append({"pos": value, "var": f"*{value}", "kwonly": f"{name}={value}", "varkw": f"**{value}"}[kind])
    return ", ".join(parts)

def hide_call_arguments(traj: Trajectory) -> Trajectory | None:
    """`traj` with the returned call's arguments hidden, or None when it does not start like CruxEval-I."""
    start = traj.initial
    if traj.direction != "inverse" or start.return_value is None or len(start.frames) != 1:
        return None
    frame = start.frames[0]
    if frame.name != MODULE or frame.file is not None:
        return None
    lines = traj.program.splitlines(keepends=True)
    if not 0 < frame.line <= len(lines):
        return None
    text = lines[frame.line - 1].rstrip("\r\n")
    hidden = _hidden_line(traj.program, text, frame.line, start.return_value.name)
    if hidden is None:
        return None
    lines[frame.line - 1] = hidden + lines[frame.line - 1][len(text):]
    shown = hidden.strip()
    return traj.model_copy(update={
        "program": "".join(lines),
        "initial": _rewrite_state(start, frame.line, shown),
        "steps": [step.model_copy(update={"state": _rewrite_state(step.state, frame.line, shown)}) for step in traj.steps],
        "meta": {**traj.meta, POSING_KEY: POSING},
    })


def _hidden_line(program: str, text: str, line: int, callee: str) -> str | None:
    """`text` (line `line` of `program`) with the one call of `callee` on it reading ``callee(...)``; None if not exactly one."""
    try:
        tree = ast.parse(program)
    except SyntaxError:
        return None
    statement = next((s for s in tree.body if s.lineno == line), None)
    if statement is None or statement.end_lineno != line:
        return None
    calls = [n for n in ast.walk(statement) if isinstance(n, ast.Call) and _called_name(n) == callee]
    if len(calls) != 1:
        return None
    call = calls[0]
    if not (call.args or call.keywords) or call.end_col_offset is None or call.func.end_col_offset is None:
        return None
    raw = text.encode("utf-8")  # ast offsets count UTF-8 bytes
    head, tail = raw[:call.func.end_col_offset], raw[call.end_col_offset:]
    return (head + f"({HIDDEN})".encode() + tail).decode("utf-8")


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _rewrite_state(state: State, line: int, shown: str) -> State:
    frames = [_rewrite_frame(f, line, shown) for f in state.frames]
    return state.model_copy(update={"frames": frames})


def _rewrite_frame(frame: Frame, line: int, shown: str) -> Frame:
    if frame.name == MODULE and frame.file is None and frame.line == line:
        return frame.model_copy(update={"source": shown})
    return frame


app = typer.Typer(add_completion=False, help="Write CruxEval-I-posed (hidden-call) versions of inverse trajectories.")


@app.command()
def main(
    source: list[Path] = typer.Argument(..., help="trajectory shard folders or files (*.jsonl)"),
    out: Path = typer.Option(..., help="folder to write shards into"),
    shard_size: int = typer.Option(1000, min=1, help="trajectories per output shard"),
) -> None:
    """Read SOURCE shards, write the hidden-call trajectories to OUT and print the counts."""
    paths = sorted(p for s in source for p in ([s] if s.is_file() else s.glob("shard-*.jsonl")))
    if not paths:
        typer.echo(f"error: no shard-*.jsonl under {', '.join(map(str, source))}", err=True)
        raise typer.Exit(2)
    out.mkdir(parents=True, exist_ok=True)
    read = written = 0
    buffer: list[str] = []
    for traj in (t for path in paths for t in read_shard(path)):
        read += 1
        hidden = hide_call_arguments(traj)
        if hidden is None:
            continue
        buffer.append(hidden.model_dump_json() + "\n")
        written += 1
        if len(buffer) == shard_size:
            _write_shard(out, (written - 1) // shard_size, buffer)
    if buffer:
        _write_shard(out, (written - 1) // shard_size, buffer)
    typer.echo(json.dumps({"read": read, "written": written, "out": str(out)}))


def _write_shard(out: Path, index: int, buffer: list[str]) -> None:
    (out / shard_name(index)).write_text("".join(buffer))
    buffer.clear()


if __name__ == "__main__":
    app()
