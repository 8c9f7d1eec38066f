"""Lockstep debugpy: the real program run next to a neural session, each stop compared.

`LockstepComparer` runs the real program under debugpy (`tracegen.debugpy_recorder.DebugpySession`)
next to a neural session, one action at a time, compares each pair of stops with
`protocol.compare.compare_states` and reports each divergence (`protocol.compare.describe_diff`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from protocol.compare import ComparisonSummary, compare_states, describe_diff
from protocol.debugger import Action, State


class LockstepComparer:
    """A real debugpy session run next to a neural one; each `start`/`step` compares one stop.

    Holds the DebugpySession, the summary so far, and whether debugpy failed (then comparison
    stops with a note instead of failing the neural session).
    """

    def __init__(self, path: Path, config: Any = None) -> None:
        self.path = Path(path)
        self.args: list[str] = list(getattr(config, "args", []) or [])
        self.cwd: str | None = getattr(config, "cwd", None)
        self.summary = ComparisonSummary()
        self.reals: list[State] = []  # debugpy's stops, in order (the value history's real column)
        self._real: Any = None
        self.broken: str | None = None

    def start(self, predicted: State, breakpoints: Sequence[int | tuple[str, int]] = ()) -> list[dict[str, Any]]:
        """Start debugpy stopped on entry and compare with the predicted entry state."""
        from tracegen.debugpy_recorder import DebugpySession

        try:
            self._real = DebugpySession()
            real = self._real.start(self.path, list(breakpoints), stop_on_entry=True, args=self.args, cwd=self.cwd)
        except Exception as exc:  # noqa: BLE001 - debugpy failing must not end the neural session
            return self._break(f"debugpy could not start the program: {exc}")
        return self._compare(predicted, real)

    def set_breakpoints(self, lines: Sequence[int]) -> None:
        if self._real is not None and self.broken is None:
            try:
                self._real.set_breakpoints(lines)
            except Exception as exc:  # noqa: BLE001
                self._break(f"debugpy refused the breakpoints: {exc}")

    def set_file_breakpoints(self, file: str, lines: Sequence[int]) -> None:
        """Breakpoints in another user file (its real path), for debugpy too."""
        if self._real is not None and self.broken is None:
            try:
                self._real.set_file_breakpoints(file, lines)
            except Exception as exc:  # noqa: BLE001
                self._break(f"debugpy refused the breakpoints in {file}: {exc}")

    def step(self, action: Action, predicted: State) -> list[dict[str, Any]]:
        """Take the same action under debugpy and compare the two stops."""
        if self._real is None or self.broken is not None:
            return []
        if self._real.state.finished:
            return self._break("the real program has already ended; the prediction goes on")
        try:
            real = self._real.step(action)
        except Exception as exc:  # noqa: BLE001
            return self._break(f"debugpy failed on {action}: {exc}")
        return self._compare(predicted, real)

    def _compare(self, predicted: State, real: State) -> list[dict[str, Any]]:
        self.reals.append(real)
        diff = compare_states(predicted, real)
        index = self.summary.stops
        self.summary.add(diff)
        if diff.matched:
            return []
        return [{
            "stop": index + 1, "fields": diff.mismatched_fields(), "wrongVariables": list(diff.wrong_variables),
            "predicted": predicted.model_dump(mode="json"), "real": real.model_dump(mode="json"),
            "text": f"stop {index + 1}: " + describe_diff(predicted, real, diff),
        }]

    def _break(self, reason: str) -> list[dict[str, Any]]:
        self.broken = reason
        self.close()
        return [{"stop": self.summary.stops + 1, "fields": [], "text": f"comparison stopped: {reason}"}]

    def close(self) -> None:
        real, self._real = self._real, None
        if real is not None:
            try:
                real.close()
            except Exception:  # noqa: BLE001
                pass
