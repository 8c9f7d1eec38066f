"""Where an evaluation's numbers go: OUT/summary.json plus one JSON record per line (problem, step or state).

A summary names the checkpoint it measured (`model`, a folder path) and, since a path outlives the weights behind it
(`checkpoints/default` changes with each shipped model), the weights themselves (`model_sha256`, see `weights_id`).
Tables and cards compare that with the folder's weights today (`measured_here`), so a figure of an earlier model is
never shown as the current one's.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

WEIGHTS_FILE = "model.safetensors"
ID_CHARS = 12


def weights_id(folder: str | Path) -> str | None:
    """The first 12 hex digits of the sha256 of the folder's model.safetensors; None when it has none."""
    path = Path(folder) / WEIGHTS_FILE
    if not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:ID_CHARS]


def with_weights_id(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary with `model_sha256` of its `model` folder added (unchanged when it names none or already has one)."""
    model = summary.get("model")
    if not isinstance(model, str) or summary.get("model_sha256"):
        return summary
    found = weights_id(model)
    return summary if found is None else {**summary, "model_sha256": found}


def measured_here(summary: dict[str, Any]) -> bool:
    """False only when the summary names weights and its `model` folder now holds other ones (an earlier model's figure)."""
    recorded, model = summary.get("model_sha256"), summary.get("model")
    if not recorded or not isinstance(model, str):
        return True
    now = weights_id(model)
    return now is None or now == recorded


def write_results(out: Path, summary: dict[str, Any], records: Iterable[dict[str, Any]], records_file: str) -> None:
    """Write OUT/summary.json (with the measured weights' id) and OUT/`records_file` (JSON lines), creating OUT."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / records_file).open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    (out / "summary.json").write_text(json.dumps(with_weights_id(summary), indent=2) + "\n", encoding="utf-8")


def stamp(results: Path, model: Path) -> list[Path]:
    """Give every summary under `results` that names `model` but no weights the id of `model`'s weights now: run it
    before a new model replaces that folder, so the figures it leaves stay tied to the model they measured."""
    found = weights_id(model)
    if found is None:
        raise FileNotFoundError(f"{model} holds no {WEIGHTS_FILE}")
    stamped = []
    for path in sorted(Path(results).glob("**/summary.json")):
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(summary, dict) or summary.get("model_sha256") or not isinstance(summary.get("model"), str):
            continue
        if Path(summary["model"]).resolve() != Path(model).resolve():
            continue
        path.write_text(json.dumps({**summary, "model_sha256": found}, indent=2) + "\n", encoding="utf-8")
        stamped.append(path)
    return stamped
