"""`eval paired`: two runs compared item by item with the exact sign test."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from train.eval.paired import PairedError, compare, report, sign_test

ROOT = Path(__file__).resolve().parent.parent


def _run(folder: Path, lines: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "predictions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def _states(rights: list[bool], action: str = "step_over") -> list[dict]:
    return [{"trajectory": i, "step": 0, "action": action, "matched": ok, "predicted": "x"} for i, ok in enumerate(rights)]


def test_sign_test_values() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(5, 0) == pytest.approx(2 / 32)
    assert sign_test(13, 4) == pytest.approx(0.049041748046875)
    assert sign_test(4, 13) == sign_test(13, 4)
    assert sign_test(6, 6) == 1.0


def test_next_state_runs_split_by_item_and_action(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", _states([True, True, False, True]) + _states([True, False], "continue"))
    b = _run(tmp_path / "b", _states([True, False, True, True]) + _states([False, False], "continue")
             + [{"trajectory": 9, "step": 1, "action": "step_into", "matched": True}])
    result = compare(a, b)
    t = result.total
    assert (t.items, t.both, t.only_a, t.only_b, t.right_a, t.right_b) == (6, 2, 2, 1, 4, 3)
    assert result.only_in_b == 1 and result.only_in_a == 0
    assert result.by_group["continue"].only_a == 1 and result.by_group["step_over"].only_b == 1
    text = "\n".join(report(result))
    assert "only A 2, only B 1" in text and "left out: 0 item(s) only in A, 1 only in B" in text


def test_cruxeval_runs_pair_by_problem_id(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", [{"id": f"sample_{i}", "passed": i < 3, "prediction": "1"} for i in range(5)])
    b = _run(tmp_path / "b", [{"id": f"sample_{i}", "passed": i % 2 == 0, "prediction": "1"} for i in reversed(range(5))])
    t = compare(a, b).total
    assert (t.both, t.only_a, t.only_b) == (2, 1, 1)


def test_runs_that_cannot_be_compared(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", _states([True]))
    other = _run(tmp_path / "other", [{"trajectory": 5, "step": 2, "action": "step_over", "matched": True}])
    with pytest.raises(PairedError, match="share no item"):
        compare(a, other)
    odd = _run(tmp_path / "odd", [{"program": "x.py", "score": 1}])
    with pytest.raises(PairedError, match="neither a next-state run"):
        compare(a, odd)
    with pytest.raises(PairedError, match="cannot read"):
        compare(a, tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "predictions.jsonl").write_text("{not json\n")
    with pytest.raises(PairedError, match="not JSON"):
        compare(a, tmp_path / "bad")


def test_cli_prints_the_split_and_writes_json(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", _states([True] * 6 + [False]))
    b = _run(tmp_path / "b", _states([False] * 6 + [True]))
    done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "eval", "paired", str(a), str(b), "--out", str(tmp_path / "c.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "only A 6, only B 1: exact sign test p = 0.125" in done.stdout
    assert json.loads((tmp_path / "c.json").read_text())["total"]["p_value"] == 0.125
    missing = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "eval", "paired", str(a), str(tmp_path / "none")],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert missing.returncode == 2 and "error: cannot read" in missing.stderr
