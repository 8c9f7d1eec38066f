"""How sure the model is, shown where the user looks: stopped events, the Variables view, hovers.

The session (`model.session.NeuralDebugger`) gives calibrated probabilities (`model.decode.confidence`);
an oracle session, which runs the program, is certain. This module reads them without depending on
the session class (a missing method means "certain") and turns them into DAP fields:

* a ``stopped`` body gets ``neuralConfidence`` (0-1, the location) and a ``description`` that says
  it ("predicted, 64% sure"; "predicted backwards, ..." for a state inferred by the inverse model);
* every predicted ``Variable`` (and an ``evaluate`` result) gets ``neuralConfidence``; one under
  `LOW_CONFIDENCE` also gets a ``type`` suffix ("int · 23% sure") and the presentation hint
  attribute ``neuralLowConfidence``. The ``value`` stays the pure repr, so hovers, ``evaluate``
  and comparisons with a real debugger are unaffected.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

LOW_CONFIDENCE = 0.5  # below this a value is marked and offers the model's alternatives
LOW_ATTRIBUTE = "neuralLowConfidence"
Alternatives = Callable[[str], list[tuple[str, float]]]


def percent(p: float) -> str:
    """A probability as the user reads it: whole percents, never "100%" for an uncertain one nor "0%" for a possible one."""
    value = round(100 * p)
    if value >= 100 and p < 1.0:
        value = 99
    if value <= 0 < p:
        return "<1%"
    return f"{value}%"


def stop_confidence(session: Any) -> float:
    """The calibrated probability of the current stop's location (1 for a session without a model)."""
    method = getattr(session, "stop_confidence", None)
    try:
        return float(method()) if callable(method) else 1.0
    except Exception:  # noqa: BLE001 - a missing score is no reason to fail a step
        return 1.0


def frame_confidence(session: Any, frame_index: int) -> dict[str, float]:
    """Calibrated confidence of each local of a frame (empty: certain)."""
    method = getattr(session, "variable_confidence", None)
    try:
        if callable(method):
            return dict(method(frame_index))
        return dict(session.confidence()) if frame_index == 0 else {}
    except Exception:  # noqa: BLE001
        return {}


def return_confidence(session: Any) -> float:
    method = getattr(session, "return_confidence", None)
    try:
        return float(method()) if callable(method) else 1.0
    except Exception:  # noqa: BLE001
        return 1.0


def alternatives_for(session: Any, frame_index: int) -> Alternatives | None:
    """A function from a local's name to the model's alternative values (None when the session has none)."""
    method = getattr(session, "alternatives", None)
    if not callable(method):
        return None

    def find(name: str) -> list[tuple[str, float]]:
        try:
            return list(method(name, frame_index))
        except Exception:  # noqa: BLE001 - alternatives are a courtesy
            return []

    return find


def describe_stop(session: Any, confidence: float, *, replay: bool) -> str:
    """The stopped event's description: what the stop is and how sure the model is of it."""
    if getattr(session, "predicted_backwards", False):
        kind = "predicted backwards"
    elif getattr(session, "predicted", False):
        kind = "predicted"
    else:
        return "given (not predicted)" if hasattr(session, "stop_confidence") else "recorded (the program ran)"
    if not replay and not getattr(session, "moved", True):
        return "did not move: the next stop could not be predicted (see the Debug Console)"
    text = f"{kind}, {percent(confidence)} sure"
    return text + " (from history)" if replay else text


def mark_variable(var: dict[str, Any], confidence: float | None) -> dict[str, Any]:
    """Add ``neuralConfidence`` to a DAP Variable (or evaluate body), and the low-confidence marks."""
    if confidence is None:
        return var
    var["neuralConfidence"] = round(float(confidence), 4)
    if confidence < LOW_CONFIDENCE:
        kind = var.get("type") or ""
        var["type"] = f"{kind} · {percent(confidence)} sure" if kind else f"{percent(confidence)} sure"
        hint = dict(var.get("presentationHint") or {})
        hint["attributes"] = [*hint.get("attributes", []), LOW_ATTRIBUTE]
        var["presentationHint"] = hint
    return var


def alternative_name(rank: int, confidence: float) -> str:
    """The Variables view name of the model's `rank`-th alternative value."""
    return f"alternative {rank} ({percent(confidence)})"


def describe_alternatives(name: str, value: str, confidence: float, alternatives: list[tuple[str, float]]) -> str:
    """The Debug Console answer to ``?name``: the shown value, how sure, and the model's next most likely values."""
    head = f"{name} = {value} ({percent(confidence)} sure)"
    if not alternatives:
        return head + "; the model offers no other value"
    listed = ", ".join(f"{alt} ({percent(p)})" for alt, p in alternatives)
    return f"{head}; alternatives: {listed}"
