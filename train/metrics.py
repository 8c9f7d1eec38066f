"""Training metrics: the JSONL log, throughput and model FLOPs utilization (MFU)."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

METRICS_FILE = "metrics.jsonl"

# Dense bf16 peak FLOP/s by GPU name fragment (no sparsity).
PEAK_BF16: dict[str, float] = {
    "H200": 989e12,
    "H100": 989e12,
    "GH200": 989e12,
    "A100": 312e12,
    "L40S": 362e12,
    "A10": 125e12,
    "4090": 165e12,
}


def peak_flops(device_name: str | None, override_tflops: float | None) -> float | None:
    """Peak FLOP/s of the device (an explicit override wins); None when unknown (no MFU shown)."""
    if override_tflops:
        return override_tflops * 1e12
    if not device_name:
        return None
    for key, value in PEAK_BF16.items():
        if key in device_name:
            return value
    return None


def flops_per_token(params: int, layers: int, width: int, seq_len: int) -> float:
    """Training FLOPs per token: 6N for the weights plus 12*L*d*T for attention (PaLM appendix B)."""
    return 6.0 * params + 12.0 * layers * width * seq_len


class MetricsLog:
    """Appends one JSON object per event to OUT/metrics.jsonl (only the main rank writes)."""

    def __init__(self, out: Path, enabled: bool) -> None:
        self.path = Path(out) / METRICS_FILE
        self.enabled = enabled

    def write(self, kind: str, **fields: Any) -> None:
        if not self.enabled:
            return
        record = {"kind": kind, "time": round(time.time(), 3), **fields}
        with self.path.open("a") as fh:
            fh.write(json.dumps(record, default=float) + "\n")


def read_metrics(out: Path) -> list[dict[str, Any]]:
    """All records of OUT/metrics.jsonl (empty when absent)."""
    path = Path(out) / METRICS_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
