"""What an interrupted evaluation leaves, and taking it up again (`eval cruxeval --resume`).

While a run goes, OUT/<name>.partial.jsonl holds one record per finished question, in order, and
OUT/<name>.partial.json the run's settings and the seconds spent so far. A run started with the same settings
(`--resume`) keeps the records whose ids match its first questions and asks only the rest, so a long evaluation (all
800 CruxEval problems of a slow model) can go on over several sittings. Settings that differ are refused, never mixed.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO


class ResumeError(ValueError):
    """The interrupted run cannot be taken up: its settings differ from this run's (the message names them)."""


@dataclass
class Taken:
    """The records kept from an interrupted run and the seconds it had spent."""

    records: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class PartialRun:
    """The partial files of one evaluation's output folder."""

    out: Path
    name: str = "predictions"

    @property
    def records_path(self) -> Path:
        return self.out / f"{self.name}.partial.jsonl"

    @property
    def meta_path(self) -> Path:
        return self.out / f"{self.name}.partial.json"

    def take(self, settings: dict[str, Any], ids: Sequence[str]) -> Taken:
        """The finished records of an interrupted run with these settings whose ids match the first of `ids`, in
        order (a half-written last line is dropped); nothing when there is no interrupted run."""
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            lines = self.records_path.read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError):
            return Taken()
        before = meta.get("settings") if isinstance(meta, dict) else None
        if before != settings:
            raise ResumeError(f"the interrupted run in {self.out} used other settings ({_differences(before, settings)}): "
                              "run without --resume to start over")  # fmt: skip
        kept: list[dict[str, Any]] = []
        for line, expected in zip(lines, ids):
            try:
                record = json.loads(line)
            except ValueError:
                break
            if not isinstance(record, dict) or record.get("id") != expected:
                break
            kept.append(record)
        return Taken(kept, float(meta.get("seconds", 0.0)) if kept else 0.0)

    @contextmanager
    def writing(self, settings: dict[str, Any], taken: Taken) -> Iterator["PartialWriter"]:
        """A writer that keeps both partial files current; they are removed by `finish` once the run is complete."""
        self.out.mkdir(parents=True, exist_ok=True)
        with self.records_path.open("w", encoding="utf-8") as fh:
            writer = PartialWriter(self, fh, settings, taken.seconds)
            for record in taken.records:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            writer.flush(0.0)
            yield writer

    def finish(self) -> None:
        self.records_path.unlink(missing_ok=True)
        self.meta_path.unlink(missing_ok=True)


@dataclass
class PartialWriter:
    run: PartialRun
    fh: TextIO
    settings: dict[str, Any]
    seconds_before: float

    def add(self, record: dict[str, Any], seconds_now: float) -> None:
        """Append one finished record; `seconds_now`: this sitting's time so far."""
        self.fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.flush(seconds_now)

    def flush(self, seconds_now: float) -> None:
        self.fh.flush()
        meta = {"settings": self.settings, "seconds": round(self.seconds_before + seconds_now, 1)}
        self.run.meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def _differences(before: Any, now: dict[str, Any]) -> str:
    if not isinstance(before, dict):
        return "none recorded"
    keys = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    return ", ".join(f"{k}: {before.get(k)!r} then, {now.get(k)!r} now" for k in keys)
