"""Where an evaluation's numbers go: OUT/summary.json plus one JSON record per line (problem, step or state)."""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_results(out: Path, summary: dict[str, Any], records: Iterable[dict[str, Any]], records_file: str) -> None:
    """Write OUT/summary.json and OUT/`records_file` (JSON lines), creating OUT."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / records_file).open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
