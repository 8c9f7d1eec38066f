"""Predicted vs real: the per-field comparison of two debugger states, and a running summary.

`compare_states(predicted, real) -> FieldDiff` is the one definition of "the same stop" (memory
addresses normalized to ``at 0x?``): stop reason, location (the stack as (function, line) pairs),
locals (every frame's plain locals), return value, exception, stdout. `ComparisonSummary` counts
stops, matches, the first divergence and mismatches per field. Every package uses this vocabulary
(the adapter's compare mode and demo, the evaluation in `train`), so it lives here, below them all;
the lockstep debugpy runner that feeds it during a session stays in `adapter.compare`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol.debugger import State

FIELDS = ("reason", "location", "locals", "return_value", "exception", "stdout")


@dataclass(frozen=True)
class FieldDiff:
    """Which fields of one stop differ between prediction and reality, and the top frame's variables that differ."""

    reason: bool = False
    location: bool = False
    locals: bool = False
    return_value: bool = False
    exception: bool = False
    stdout: bool = False
    wrong_variables: tuple[str, ...] = ()  # top-frame names missing, extra or with another value
    top_variables: int = 0  # number of top-frame variables in the real state

    @property
    def matched(self) -> bool:
        return not self.mismatched_fields()

    def mismatched_fields(self) -> list[str]:
        return [name for name in FIELDS if getattr(self, name)]


def _frames_locals(state: State) -> list[dict[str, str]]:
    return [f.locals for f in state.frames]


def compare_states(predicted: State, real: State) -> FieldDiff:
    """Compare one predicted stop with the real one, field by field (addresses normalized)."""
    p, r = predicted.normalized(), real.normalized()
    p_top = p.frames[0].locals if p.frames else {}
    r_top = r.frames[0].locals if r.frames else {}
    wrong = sorted(name for name in set(p_top) | set(r_top) if p_top.get(name) != r_top.get(name))
    return FieldDiff(
        reason=p.reason != r.reason,
        location=p.location != r.location,
        locals=_frames_locals(p) != _frames_locals(r),
        return_value=p.return_value != r.return_value,
        exception=(p.exception is None) != (r.exception is None) or (p.exception != r.exception),
        stdout=p.stdout != r.stdout,
        wrong_variables=tuple(wrong),
        top_variables=len(r_top),
    )


def describe_state(state: State) -> str:
    """A one-line summary: reason, stack, top frame locals."""
    if state.finished:
        return f"exited (code {state.exit_code})"
    stack = " < ".join(f"{name}:{line}" for name, line in state.location)
    top = state.frames[0].locals if state.frames else {}
    shown = ", ".join(f"{k}={v}" for k, v in list(top.items())[:8])
    return f"{state.reason.value} at {stack}" + (f" {{{shown}}}" if shown else "")


def describe_diff(predicted: State, real: State, diff: FieldDiff) -> str:
    """What differs, in words, for the Debug Console."""
    parts = []
    if diff.reason or diff.location:
        parts.append(f"stop: predicted {describe_state(predicted)}; debugpy {describe_state(real)}")
    if diff.locals and not diff.location:
        p_top = predicted.normalized().frames[0].locals if predicted.frames else {}
        r_top = real.normalized().frames[0].locals if real.frames else {}
        shown = [f"{n}: predicted {p_top.get(n, '<missing>')}, real {r_top.get(n, '<missing>')}" for n in diff.wrong_variables[:6]]
        parts.append("locals: " + ("; ".join(shown) if shown else "a caller's locals differ"))
    if diff.return_value:
        parts.append(f"return value: predicted {predicted.return_value}, real {real.return_value}")
    if diff.exception:
        parts.append(f"exception: predicted {predicted.exception}, real {real.exception}")
    if diff.stdout:
        parts.append(f"stdout: predicted {predicted.stdout!r}, real {real.stdout!r}")
    return "; ".join(parts)


@dataclass
class ComparisonSummary:
    """Running totals over the stops compared: how many matched, the first divergence, mismatches per field."""

    stops: int = 0
    matched: int = 0
    first_divergence: int | None = None  # 0-based index of the first stop that differed
    first_divergence_fields: list[str] = field(default_factory=list)
    field_mismatches: dict[str, int] = field(default_factory=lambda: {name: 0 for name in FIELDS})
    variables: int = 0  # top-frame variables seen in the real states
    wrong_variables: int = 0

    def add(self, diff: FieldDiff) -> None:
        """Count one compared stop."""
        if diff.matched:
            self.matched += 1
        elif self.first_divergence is None:
            self.first_divergence = self.stops
            self.first_divergence_fields = diff.mismatched_fields()
        for name in diff.mismatched_fields():
            self.field_mismatches[name] += 1
        self.variables += diff.top_variables
        self.wrong_variables += len(diff.wrong_variables)
        self.stops += 1

    @property
    def match_rate(self) -> float:
        return self.matched / self.stops if self.stops else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "stops": self.stops, "matched": self.matched, "matchRate": round(self.match_rate, 4),
            "firstDivergence": self.first_divergence, "firstDivergenceFields": self.first_divergence_fields,
            "fieldMismatches": dict(self.field_mismatches),
            "variables": self.variables, "wrongVariables": self.wrong_variables,
        }

    def describe(self) -> str:
        if not self.stops:
            return "neural debugger vs debugpy: no stops compared"
        text = f"neural debugger vs debugpy: {self.matched}/{self.stops} stops matched"
        if self.first_divergence is not None:
            fields = ", ".join(self.first_divergence_fields)
            per_field = ", ".join(f"{k} {v}" for k, v in self.field_mismatches.items() if v)
            text += f"; first divergence at stop {self.first_divergence + 1} ({fields}); mismatches by field: {per_field}"
        return text
