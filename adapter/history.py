"""Value history: the values a variable of the current frame had at the earlier stops of the session.

A real debugger forgets a value once the program has moved on (vscode#14910); a predicted session
keeps every stop. `value_history` reads one `adapter.watch.WatchTarget` at each stop (the same
frame: counted from the bottom of the stack, same function and file) and, in compare mode, the
value the real program (debugpy) showed at the same stop. Consecutive stops with the same values
are one `HistoryRun`, so a loop that leaves a variable alone is one row.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from adapter.watch import WatchTarget
from protocol.debugger import State


@dataclass(frozen=True)
class HistoryRow:
    """The value at one stop (1-based, in the session's order), the frame's line there, and the real value."""

    stop: int
    line: int
    value: str
    real: str | None = None  # debugpy's value at the same stop (compare mode); None: not compared or not there


@dataclass(frozen=True)
class HistoryRun:
    """Consecutive stops that showed the same value (and the same real one)."""

    rows: tuple[HistoryRow, ...]
    compared: bool

    @property
    def label(self) -> str:
        first, last = self.rows[0], self.rows[-1]
        stops = f"stop {first.stop}" if first is last else f"stops {first.stop}-{last.stop}"
        lines = sorted({row.line for row in self.rows})
        where = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}..{lines[-1]}"
        return f"{stops} ({where})"

    @property
    def shown(self) -> str:
        """The value, and side by side the real one in compare mode."""
        row = self.rows[0]
        if not self.compared:
            return row.value
        real = "not there" if row.real is None else "same" if row.real == row.value else row.real
        return f"{row.value}   |   real: {real}"


def value_history(stops: Sequence[State], target: WatchTarget, reals: Sequence[State] | None = None) -> list[HistoryRow]:
    """One row per stop where `target` has a value; `reals[i]` is debugpy's stop i (compare mode)."""
    rows = []
    for number, state in enumerate(stops, start=1):
        value = target.read(state)
        index = target.frame_index(state)
        if value is None or index is None:
            continue
        real = target.read(reals[number - 1]) if reals is not None and number - 1 < len(reals) else None
        rows.append(HistoryRow(stop=number, line=state.frames[index].line, value=value, real=real))
    return rows


def runs(rows: Sequence[HistoryRow], compared: bool) -> list[HistoryRun]:
    """`rows` grouped into runs of consecutive stops with the same values."""
    out: list[list[HistoryRow]] = []
    for row in rows:
        if out and (out[-1][-1].value, out[-1][-1].real) == (row.value, row.real) and out[-1][-1].stop == row.stop - 1:
            out[-1].append(row)
        else:
            out.append([row])
    return [HistoryRun(tuple(group), compared) for group in out]


def summary(rows: Sequence[HistoryRow], limit: int = 6) -> str:
    """The values in the order they were taken, ``0 → 2 → 5`` (one taken again shows again; the last `limit` of them)."""
    values: list[str] = []
    for row in rows:
        if not values or values[-1] != row.value:
            values.append(row.value)
    shown = [v if len(v) <= 40 else v[:37] + "..." for v in values[-limit:]]
    return ("... → " if len(values) > limit else "") + " → ".join(shown)


def describe(target: WatchTarget, rows: Sequence[HistoryRow], compared: bool) -> str:
    """The Debug Console answer to ``?history NAME``."""
    if not rows:
        return f"{target.where()} has no value at any stop so far"
    head = f"history of {target.where()} ({len(rows)} stop{'s' if len(rows) != 1 else ''}" + (
        ", predicted | real)" if compared else ")")
    return "\n".join([head, *(f"  {run.label}: {run.shown}" for run in runs(rows, compared))])
