"""How sure the model is of a predicted state: raw scores from token log-probs, and their calibration.

A predicted state is the text the model generated (`model.prompt.language`): the stop's location (reason
token, each frame's name, file and line; an exit's ending and code) and each frame's locals, a JSON
object of ``"name":"repr"`` pairs, possibly ending with ``..`` (the rest unchanged). `layout` finds
where each part lies in the text; `raw_scores` turns the generation's per-token log-probs into
probabilities:

* location: exp(sum of the log-probs of every token outside the locals objects, before the return
  value, exception and stdout): the probability of the whole stack (names, files, lines) and reason;
* a variable the state writes: exp(sum of the log-probs of its ``"name":"repr"`` pair's tokens);
* a variable the state keeps (``..``): the lower of the ``..`` marker's probability and the
  variable's earlier score (1 when the earlier state was given, as under teacher forcing): the
  weakest decision it rests on, so a value kept through a long loop does not fade to 0.

These raw probabilities are over-confident or under-confident in ways that depend on the model
(and the constraint masks tokens the raw probabilities still count). `Calibration` maps them to
calibrated ones: per field ("location", "variable") a temperature fit (Platt scaling on the logit)
or an isotonic fit (pool-adjacent-violators), stored as ``calibration.json`` in the checkpoint
folder; identity when the file is absent. `fit_calibration` fits both on one half of held-out data
and keeps, per field, whichever has the lower expected calibration error (ECE) on the other half.

One map cannot serve every kind of code: at the same raw probability the model is right far less often on
code unlike its synthetic training programs, which never import anything. So a calibration may hold maps per
code kind (`code_kind`: "imports" when the program imports a module, "self-contained" otherwise), used where
the kind has them.
"""
from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from model.prompt import language as lang
from model.prompt.state_values import LocalsObject, json_string_end, scan_locals  # json_string_end: model.session reads it from here

CALIBRATION_FILE = "calibration.json"
FIELDS = ("location", "variable")
CODE_KINDS = ("imports", "self-contained")
ECE_BINS = 15
_EPS = 1e-6
_FRAME_MARKS = (lang.CALL_SEP, lang.FRAME_SEP)
_TAIL_MARKS = (lang.RETURN_SEP, lang.EXCEPTION_SEP, lang.STDOUT, lang.STATE_END)


# ----------------------------------------------------------------------------------- layout


@dataclass
class FrameLayout:
    """Where one frame's locals lie in a state text: each written pair, and the ``..`` marker if any."""

    pairs: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (start of the key, end of the value)
    values: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> span of the value's JSON string
    rest: tuple[int, int] | None = None  # span of ".." (a delta: the unchanged rest)


@dataclass
class StateLayout:
    """Character spans of a state text: what decides the location, and each frame's locals (outermost first)."""

    location: list[tuple[int, int]]
    frames: list[FrameLayout]
    return_value: tuple[int, int] | None = None  # the pending return value's part (name and repr)


def _frame_layout(text: str, found: LocalsObject) -> FrameLayout | None:
    """Where a scanned locals object's pairs and ``..`` lie; None when it is cut off or a name is not a JSON string."""
    if found.end is None:
        return None
    frame = FrameLayout(rest=found.rest)
    for value in found.values:
        key = value.key or (value.start, value.start)  # always set for a local
        try:
            name = str(value.name(text))
        except ValueError:
            return None
        frame.pairs[name] = (key[0], value.end)
        frame.values[name] = (value.start, value.end)
    return frame


def layout(text: str) -> StateLayout:
    """The spans of a state text (as `model.prompt.language.render_state` writes it, with or without the stop token).

    A text that is not a well-formed state gives what could be read (location = the whole text).
    """
    tail = min([i for i in (text.find(m) for m in _TAIL_MARKS) if i >= 0] or [len(text)])
    location: list[tuple[int, int]] = []
    frames: list[FrameLayout] = []
    cursor = 0
    i = 0
    while i < tail:
        marks = [j for j in (text.find(m, i, tail) for m in _FRAME_MARKS) if j >= 0]
        if not marks:
            break
        mark = min(marks)
        line_at = text.find(lang.LINE_SEP, mark, tail)
        brace = text.find("{", line_at, tail) if line_at >= 0 else -1
        if brace < 0:
            break
        found = scan_locals(text, brace)
        frame = _frame_layout(text, found)
        if frame is None or found.end is None:
            break
        location.append((cursor, brace))
        frames.append(frame)
        cursor = i = found.end
    location.append((cursor, tail))
    returned = None
    at = text.find(lang.RETURN_SEP)
    if at >= 0:
        ends = [j for j in (text.find(m, at + len(lang.RETURN_SEP)) for m in _TAIL_MARKS) if j >= 0]
        returned = (at, min(ends) if ends else len(text))
    return StateLayout(location=[(a, b) for a, b in location if b > a], frames=frames, return_value=returned)


# ------------------------------------------------------------------------------ raw scores


def token_ends(tokenizer: Any, ids: Sequence[int]) -> list[int]:
    """The character offset where each token's text ends in the decoded text of `ids` (special tokens kept)."""
    ends: list[int] = []
    total = 0
    for i, token in enumerate(ids):
        piece = tokenizer.decode([token], skip_special_tokens=False)
        if "\ufffd" in piece:  # part of a multi-byte character: measure the prefix instead
            total = len(tokenizer.decode(list(ids[: i + 1]), skip_special_tokens=False))
        else:
            total += len(piece)
        ends.append(total)
    return ends


def span_logprob(ends: Sequence[int], logprobs: Sequence[float], spans: Sequence[tuple[int, int]]) -> float:
    """Sum of the log-probs of the tokens overlapping any of `spans` (character spans of the text)."""
    total = 0.0
    start = 0
    for end, logprob in zip(ends, logprobs):
        if any(end > a and start < b for a, b in spans):
            total += logprob
        start = end
    return total


@dataclass
class RawScores:
    """Raw (uncalibrated) probabilities of one predicted state.

    location: of the stop's location. frames: per frame, outermost first, name -> probability of a
    written variable. rest: per frame, the probability of the ``..`` marker (None: no marker).
    """

    location: float
    frames: list[dict[str, float]]
    rest: list[float | None]
    return_value: float | None = None

    def variable(self, depth: int, name: str, earlier: float = 1.0) -> float:
        """The raw probability of variable `name` of frame `depth` (outermost = 0); `earlier`: its score before, if kept (min)."""
        if depth >= len(self.frames):
            return earlier
        written = self.frames[depth]
        if name in written:
            return written[name]
        rest = self.rest[depth]
        return min(earlier, rest if rest is not None else 1.0)


def raw_scores(tokenizer: Any, token_ids: Sequence[int], logprobs: Sequence[float], text: str) -> RawScores:
    """`RawScores` of a generated state from its token ids, their log-probs and their decoded text."""
    ends = token_ends(tokenizer, token_ids)
    shape = layout(text)
    frames = [{name: math.exp(span_logprob(ends, logprobs, [span])) for name, span in f.pairs.items()} for f in shape.frames]
    rest = [math.exp(span_logprob(ends, logprobs, [f.rest])) if f.rest is not None else None for f in shape.frames]
    returned = math.exp(span_logprob(ends, logprobs, [shape.return_value])) if shape.return_value else None
    return RawScores(location=math.exp(span_logprob(ends, logprobs, shape.location)), frames=frames, rest=rest, return_value=returned)


# ------------------------------------------------------------------------------ calibration


class FieldMap(BaseModel):
    """A map from raw to calibrated probability for one field.

    identity: unchanged. temperature: sigmoid(logit(p) / temperature + bias) (Platt scaling).
    isotonic: a non-decreasing piecewise-linear map through the points (xs, ys).
    """

    method: Literal["identity", "temperature", "isotonic"] = "identity"
    temperature: float = 1.0
    bias: float = 0.0
    xs: list[float] = Field(default_factory=list)
    ys: list[float] = Field(default_factory=list)

    def __call__(self, p: float) -> float:
        p = min(1.0, max(0.0, float(p)))
        if self.method == "temperature":
            return _sigmoid(_logit(p) / self.temperature + self.bias)
        if self.method == "isotonic" and self.xs:
            return _clip01(_interp(p, self.xs, self.ys))
        return p


@lru_cache(maxsize=64)
def code_kind(program: str) -> str:
    """"imports" when `program` has an import statement (anywhere; a source that does not parse: by its lines), else
    "self-contained": the synthetic generator's programs never import, users' and real code mostly do."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return "imports" if re.search(r"^\s*(?:import|from)\s+[\w.]+", program, re.MULTILINE) else "self-contained"
    return "imports" if any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.walk(tree)) else "self-contained"


class Calibration(BaseModel):
    """Calibration maps per field ("location", "variable"), as saved in a checkpoint's ``calibration.json``;
    `by_kind`: maps for one code kind (`code_kind`), where a kind or field not there uses `fields`."""

    version: int = 1
    fields: dict[str, FieldMap] = Field(default_factory=dict)
    by_kind: dict[str, dict[str, FieldMap]] = Field(default_factory=dict)
    report: dict[str, Any] = Field(default_factory=dict)  # how it was fitted: data, ECE before and after

    def field(self, name: str, kind: str | None = None) -> FieldMap:
        """The map of field `name` for values of `kind` (None: the pooled map)."""
        return self.by_kind.get(kind or "", {}).get(name) or self.fields.get(name, FieldMap())

    def location(self, p: float, kind: str | None = None) -> float:
        return self.field("location", kind)(p)

    def variable(self, p: float, kind: str | None = None) -> float:
        return self.field("variable", kind)(p)

    @classmethod
    def load(cls, folder: str | Path | None) -> "Calibration":
        """The calibration in `folder`/calibration.json; identity when there is none or it cannot be read."""
        if folder is None:
            return cls()
        path = Path(folder) / CALIBRATION_FILE
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValidationError, ValueError):
            return cls()

    def save(self, folder: str | Path) -> Path:
        path = Path(folder) / CALIBRATION_FILE
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return path


def _clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def _logit(p: float) -> float:
    p = min(1 - _EPS, max(_EPS, p))
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _interp(x: float, xs: Sequence[float], ys: Sequence[float]) -> float:
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    lo, hi = 0, len(xs) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if xs[mid] <= x:
            lo = mid
        else:
            hi = mid
    span = xs[hi] - xs[lo]
    return ys[lo] if span <= 0 else ys[lo] + (ys[hi] - ys[lo]) * (x - xs[lo]) / span


def expected_calibration_error(confidences: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS) -> float:
    """ECE: the mean over equal-width confidence bins of |accuracy - mean confidence|, weighted by bin size."""
    n = len(confidences)
    if n == 0:
        return 0.0
    sums = [[0.0, 0.0, 0] for _ in range(bins)]
    for p, ok in zip(confidences, correct):
        b = min(bins - 1, int(p * bins))
        sums[b][0] += p
        sums[b][1] += float(ok)
        sums[b][2] += 1
    return sum(abs(acc - conf) for conf, acc, _ in sums) / n


def reliability(confidences: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS) -> list[dict[str, float]]:
    """Per non-empty bin: its range, mean confidence, accuracy and count (the reliability diagram's points)."""
    rows = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        chosen = [(p, ok) for p, ok in zip(confidences, correct) if min(bins - 1, int(p * bins)) == b]
        if chosen:
            rows.append({"lo": lo, "hi": hi, "confidence": sum(p for p, _ in chosen) / len(chosen),
                         "accuracy": sum(ok for _, ok in chosen) / len(chosen), "count": len(chosen)})
    return rows


def _log_loss(xs: Sequence[float], ys: Sequence[float], a: float, b: float) -> float:
    total = 0.0
    for x, y in zip(xs, ys):
        z = a * x + b
        total += max(z, 0.0) + math.log1p(math.exp(-abs(z))) - y * z
    return total


def fit_temperature(confidences: Sequence[float], correct: Sequence[bool]) -> FieldMap:
    """Platt scaling on the logit (1/temperature and a bias), by damped Newton steps on the log-loss."""
    xs = [_logit(p) for p in confidences]
    ys = [1.0 if ok else 0.0 for ok in correct]
    a, b = 1.0, 0.0
    for _ in range(100):
        ga = gb = haa = hab = hbb = 0.0
        for x, y in zip(xs, ys):
            q = _sigmoid(a * x + b)
            r, w = q - y, max(q * (1 - q), 1e-9)
            ga += r * x
            gb += r
            haa += w * x * x
            hab += w * x
            hbb += w
        haa += 1e-6
        hbb += 1e-6
        det = haa * hbb - hab * hab
        if det <= 0:
            break
        da = (hbb * ga - hab * gb) / det
        db = (haa * gb - hab * ga) / det
        step, before = 1.0, _log_loss(xs, ys, a, b)
        while step > 1e-6 and _log_loss(xs, ys, a - step * da, b - step * db) > before:
            step /= 2  # backtracking: points at p = 0 or 1 make plain Newton steps overshoot
        a, b = a - step * da, b - step * db
        if abs(step * da) < 1e-8 and abs(step * db) < 1e-8:
            break
    if not math.isfinite(a) or not math.isfinite(b) or abs(a) < 1e-6:
        return FieldMap()
    return FieldMap(method="temperature", temperature=1.0 / a, bias=b)


def fit_isotonic(confidences: Sequence[float], correct: Sequence[bool], bins: int | None = None) -> FieldMap:
    """Isotonic regression (pool adjacent violators); the map interpolates between the blocks' means.

    bins: first pool the points, in order of confidence, into this many groups of equal size
    (a smoother map that does not chase the few items at the extremes); None: every point.
    """
    points = sorted(zip(confidences, (1.0 if ok else 0.0 for ok in correct)))
    groups: list[list[float]] = [[x, y, 1.0] for x, y in points]
    if bins is not None and len(points) > bins > 0:
        size = len(points) / bins
        groups = []
        for k in range(bins):
            chunk = points[round(k * size) : round((k + 1) * size)]
            if chunk:
                groups.append([sum(x for x, _ in chunk), sum(y for _, y in chunk), float(len(chunk))])
    blocks: list[list[float]] = []  # [sum x, sum y, count]
    for sx, sy, count in groups:
        blocks.append([sx, sy, count])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            sx, sy, c = blocks.pop()
            blocks[-1][0] += sx
            blocks[-1][1] += sy
            blocks[-1][2] += c
    if not blocks:
        return FieldMap()
    xs = [sx / c for sx, _, c in blocks]
    ys = [(sy + 0.5) / (c + 1.0) for _, sy, c in blocks]  # a block all right (or all wrong) is not taken as certain
    for i in range(1, len(ys)):  # the smoothing can undo the order of two small blocks: keep the map non-decreasing
        ys[i] = max(ys[i], ys[i - 1])
    return FieldMap(method="isotonic", xs=xs, ys=ys)


ISOTONIC_BINS = 10  # groups of equal size pooled before the smoothed isotonic fit


@dataclass
class FieldFit:
    """The chosen map of one field, its candidate's name, and the ECEs that chose it (on the evaluation half)."""

    chosen: FieldMap
    name: str  # raw | temperature | isotonic | isotonic-binned
    ece: dict[str, float]  # candidate -> ECE on the evaluation half ("raw" included)
    n_fit: int
    n_eval: int


def fit_field(fit: tuple[Sequence[float], Sequence[bool]], held: tuple[Sequence[float], Sequence[bool]]) -> FieldFit:
    """Fit temperature and isotonic maps (per point, and over equal-size groups) on `fit`; keep the lowest ECE on `held` (raw if none helps)."""
    candidates = {"raw": FieldMap(), "temperature": fit_temperature(*fit), "isotonic": fit_isotonic(*fit),
                  "isotonic-binned": fit_isotonic(*fit, bins=ISOTONIC_BINS)}  # fmt: skip
    ece = {name: expected_calibration_error([m(p) for p in held[0]], held[1]) for name, m in candidates.items()}
    best = min(ece, key=lambda name: ece[name])
    return FieldFit(chosen=candidates[best], name=best, ece=ece, n_fit=len(fit[0]), n_eval=len(held[0]))
