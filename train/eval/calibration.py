"""Calibration of the model's confidence on held-out, teacher-forced states (`neural-debugger eval calibration`).

The questions are those of `train.eval.next_state` (every predicted state of held-out trajectories, a
seeded sample round-robin over actions). Each is answered by the real inference path (a
`NeuralDebugger`'s own generate/retry/parse); the generation's log-probs give raw probabilities
(`model.decode.confidence.raw_scores`) of

* the location (reason and stack): correct when reason and location match the recorded state;
* each top-frame variable of the prediction: correct when the recorded top frame has the same name
  with the same value (addresses normalized).

The programs are split in two halves by a hash of their text: maps are fitted on one half
(`model.decode.confidence.fit_field`: temperature vs isotonic, the lower ECE wins) and every ECE is
reported on the other half. Writes summary.json, records.jsonl (one line per question with its raw
scores, for refitting), reliability.png, and optionally the fitted ``calibration.json``.

The fitting data may come from several sets (each question carries its `source`: synthetic dev
programs, a dev slice of real code, ...): both halves of every source are pooled, and the summary
reports the ECE of each source on its own (`by_source`). Each question also carries its program's code
kind (`model.decode.confidence.code_kind`, as a session computes it): besides the pooled maps, each kind with
at least `MIN_KIND_ITEMS` items of a field in both halves gets maps of its own (`Calibration.by_kind`), kept
only where they beat the pooled map on that kind's evaluation half. `check` applies given calibrations to the
records of other sets (hand-written programs, held-out synthetic states): the before/after measure of a refit.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.decode.confidence import (
    FIELDS, Calibration, FieldFit, code_kind, expected_calibration_error, fit_field, raw_scores, reliability,
)
from model.prompt.value_chars import encode_text
from protocol.debugger import State


@dataclass
class Scored:
    """One question's raw scores and whether each part was right."""

    trajectory: int
    step: int
    action: str
    half: int  # 0: fit half, 1: evaluation half (by program hash)
    location: tuple[float, bool] | None  # None when the prediction was no state
    variables: list[tuple[str, float, bool, str]] = field(default_factory=list)  # (name, raw, correct, "written" | "kept")
    source: str = ""  # which set the question came from (a trajectories or records folder's name)
    kind: str = ""  # the program's code kind (`code_kind`); "" in records written before kinds, which the pooled maps serve

    def to_json(self) -> dict[str, Any]:
        return {"trajectory": self.trajectory, "step": self.step, "action": self.action, "half": self.half,
                "location": list(self.location) if self.location else None,
                "variables": [list(v) for v in self.variables], "source": self.source, "kind": self.kind}  # fmt: skip


def read_records(path: Path) -> list[Scored]:
    """The scored questions of an earlier run's records.jsonl (ValueError naming the bad line); each from the
    source recorded, else the records' folder name."""
    scored: list[Scored] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            location = item["location"]
            scored.append(Scored(int(item["trajectory"]), int(item["step"]), str(item["action"]), int(item["half"]),
                                 (float(location[0]), bool(location[1])) if location else None,
                                 [(str(n), float(p), bool(ok), str(kind)) for n, p, ok, kind in item["variables"]],
                                 str(item.get("source") or Path(path).parent.name), str(item.get("kind") or "")))  # fmt: skip
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"line {number}: {exc}") from None
    if not scored:
        raise ValueError("no records")
    return scored


def program_half(program: str) -> int:
    """0 or 1, from a hash of the program text: questions of one program stay in one half."""
    return hashlib.sha256(program.encode("utf-8")).digest()[0] & 1


def score_prediction(tokenizer: Any, outcome: Any, expected: State) -> tuple[tuple[float, bool] | None, list[tuple[str, float, bool, str]]]:
    """Raw scores of a session's `StateRecord` (or failure text) against the recorded state."""
    predicted = getattr(outcome, "state", None)
    gen = getattr(outcome, "generation", None)
    if predicted is None or gen is None:
        return None, []
    closed = bool(getattr(outcome, "note", None))
    scores = raw_scores(tokenizer, gen.token_ids, gen.logprobs, outcome.text)
    p, r = predicted.normalized(), expected.normalized()
    location_ok = p.reason == r.reason and p.location == r.location
    location = (0.0 if closed else scores.location, location_ok)
    variables: list[tuple[str, float, bool, str]] = []
    if p.frames:
        depth = len(p.frames) - 1
        real_top = r.frames[0].locals if r.frames else {}
        written = scores.frames[depth] if depth < len(scores.frames) else {}
        for name, value in p.frames[0].locals.items():
            raw = 0.0 if closed else scores.variable(depth, name)
            variables.append((name, raw, real_top.get(name) == value, "written" if name in written else "kept"))
    return location, variables


def collect(questions: list[Any], sessions: Any, *, progress: bool = True, source: str = "") -> list[Scored]:
    """Answer each question greedily with a model session and score its confidence (`source`: the set's label)."""
    from tqdm import tqdm

    from model.session import SessionError

    context = int(getattr(sessions.backend, "max_model_len", None) or 2048)
    out: list[Scored] = []
    session: Any = None
    bar = tqdm(questions, desc="calibration", unit="state", disable=not progress, dynamic_ncols=True)
    for question in bar:
        ex = question.example
        ids = encode_text(sessions.tokenizer, ex.prompt)  # as the model was trained (model.prompt.value_chars)
        if len(ids) >= context:
            continue
        if session is None or session.program != ex.program:
            session = sessions(ex.program)
        previous = State.model_validate_json(ex.previous) if ex.previous else None
        try:
            outcome: Any = session._generate_state(ids, previous)  # the session's own step: generate, retry, close, parse
        except SessionError as exc:
            outcome = f"error: {exc}"
        location, variables = score_prediction(sessions.tokenizer, outcome, State.model_validate_json(ex.target))
        out.append(Scored(question.trajectory, question.step, ex.action, program_half(ex.program), location, variables, source,
                          code_kind(ex.program)))
    bar.close()
    return out


MIN_KIND_ITEMS = 150  # items of a field a code kind needs in each half for maps of its own


def field_data(scored: list[Scored], name: str, half: int | None) -> tuple[list[float], list[bool]]:
    """(raw confidences, correct) of one field over the questions of one half (None: both)."""
    confs, oks, _ = _items(scored, name, half)
    return confs, oks


def _items(scored: list[Scored], name: str, half: int | None) -> tuple[list[float], list[bool], list[str]]:
    """`field_data` and each item's code kind."""
    confs: list[float] = []
    oks: list[bool] = []
    kinds: list[str] = []
    for item in scored:
        if half is not None and item.half != half:
            continue
        if name == "location":
            raw, ok = item.location if item.location is not None else (0.0, False)
            confs.append(raw)
            oks.append(ok)
            kinds.append(item.kind)
        else:
            for _, raw, ok, _ in item.variables:
                confs.append(raw)
                oks.append(ok)
                kinds.append(item.kind)
    return confs, oks, kinds


def calibrated(scored: list[Scored], name: str, half: int | None, calibration: Calibration) -> tuple[list[float], list[bool]]:
    """(calibrated confidences, correct) of one field: each item mapped by its code kind's map."""
    confs, oks, kinds = _items(scored, name, half)
    return [calibration.field(name, kind)(p) for p, kind in zip(confs, kinds)], oks


def fit(scored: list[Scored]) -> tuple[Calibration, dict[str, FieldFit]]:
    """Per field: fit on half 0, choose and report on half 1; then per code kind with enough items, its own fit, kept
    where it beats the pooled map on the kind's half 1 (`Calibration.by_kind`; the fits' keys "field/kind")."""
    fits = {name: fit_field(field_data(scored, name, 0), field_data(scored, name, 1)) for name in FIELDS}
    calibration = Calibration(fields={name: f.chosen for name, f in fits.items()})
    for kind in sorted({s.kind for s in scored} - {""}):
        mine = [s for s in scored if s.kind == kind]
        for name in FIELDS:
            fitting, held = field_data(mine, name, 0), field_data(mine, name, 1)
            if min(len(fitting[0]), len(held[0])) < MIN_KIND_ITEMS:
                continue
            own = fit_field(fitting, held)
            pooled = expected_calibration_error([calibration.fields[name](p) for p in held[0]], held[1])
            if own.ece[own.name] < pooled:
                calibration.by_kind.setdefault(kind, {})[name] = own.chosen
                fits[f"{name}/{kind}"] = own
    return calibration, fits


def summarize(scored: list[Scored], calibration: Calibration, fits: dict[str, FieldFit], **settings: Any) -> dict[str, Any]:
    """summary.json: per field, raw and calibrated ECE on the evaluation half, accuracy, counts, the chosen method."""
    fields: dict[str, Any] = {}
    for name in FIELDS:
        confs, oks = field_data(scored, name, 1)
        mapped, _ = calibrated(scored, name, 1, calibration)
        fields[name] = {
            "method": fits[name].name,
            "ece_raw": round(expected_calibration_error(confs, oks), 4),
            "ece_calibrated": round(expected_calibration_error(mapped, oks), 4),
            "ece_by_method": {k: round(v, 4) for k, v in fits[name].ece.items()},
            "accuracy": round(sum(oks) / len(oks), 4) if oks else None,
            "mean_raw": round(sum(confs) / len(confs), 4) if confs else None,
            "mean_calibrated": round(sum(mapped) / len(mapped), 4) if mapped else None,
            "n_fit": fits[name].n_fit, "n_eval": fits[name].n_eval,
            "reliability_raw": reliability(confs, oks), "reliability_calibrated": reliability(mapped, oks),
        }  # fmt: skip
    sources = sorted({s.source for s in scored})
    by_source = {source: check([s for s in scored if s.source == source], calibration, half=1) for source in sources} if len(sources) > 1 else {}
    kinds = sorted({s.kind for s in scored} - {""})
    by_kind = {kind: check([s for s in scored if s.kind == kind], calibration, half=1) for kind in kinds}
    own_maps = {key: fit.name for key, fit in fits.items() if "/" in key}
    return {"fields": fields, "questions": len(scored), "by_source": by_source, "by_kind": by_kind, "kind_maps": own_maps,
            "unparsed": sum(1 for s in scored if s.location is None), **settings}  # fmt: skip


def check(scored: list[Scored], calibration: Calibration, half: int | None = None) -> dict[str, dict[str, Any]]:
    """Per field: items, accuracy, ECE raw and under `calibration` (`half`: only that half; None: every item)."""
    out: dict[str, dict[str, Any]] = {}
    for name in FIELDS:
        confs, oks = field_data(scored, name, half)
        mapped, _ = calibrated(scored, name, half, calibration)
        out[name] = {"n": len(confs), "accuracy": round(sum(oks) / len(oks), 4) if oks else None,
                     "ece_raw": round(expected_calibration_error(confs, oks), 4) if confs else None,
                     "ece_calibrated": round(expected_calibration_error(mapped, oks), 4) if confs else None}  # fmt: skip
    return out


def plot(summary: dict[str, Any], path: Path) -> Path:
    """The reliability diagram: per field, accuracy against confidence, raw and calibrated."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(summary["fields"])
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 5), squeeze=False)
    for ax, name in zip(axes[0], names):
        info = summary["fields"][name]
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect")
        for key, label, style in (("reliability_raw", f"raw (ECE {info['ece_raw']:.3f})", "o--"),
                                  ("reliability_calibrated", f"{info['method']} (ECE {info['ece_calibrated']:.3f})", "s-")):
            rows = info[key]
            ax.plot([r["confidence"] for r in rows], [r["accuracy"] for r in rows], style, label=label)
        rows = info["reliability_calibrated"]
        total = max(1, sum(r["count"] for r in rows))
        ax.bar([(r["lo"] + r["hi"]) / 2 for r in rows], [r["count"] / total for r in rows], width=1 / 15, alpha=0.2,
               color="tab:orange", label="share of items (calibrated)")
        ax.set_title(f"{name}: {info['n_eval']} held-out items")
        ax.set_xlabel("confidence")
        ax.set_ylabel("accuracy")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

