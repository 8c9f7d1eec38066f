"""Misses by what the line does (train.eval.error_analysis): the classification, the eval outputs, the card."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from protocol.debugger import Ending, ExceptionInfo, Frame, State, StopReason
from train.eval.error_analysis import KINDS, LineKindTable, kind_lines, line_kind

PROGRAM = """def f(s):
    t = s.upper()
    return t


xs = [1, 2]
xs.append(3)
n = len(xs) * 2
if n > 4:
    n = 0
for x in xs:
    n += x
r = f('a')
name = 'b'
assert n
"""


def _at(*frames: tuple[str, int], reason: StopReason = StopReason.STEP) -> State:
    return State(reason=reason, frames=[Frame(name=name, line=line) for name, line in frames])


@pytest.mark.parametrize(("line", "kind"), [(7, "list/dict method"), (8, "arithmetic"), (9, "comparison and branch"), (11, "loop exit"),
                                            (12, "arithmetic"), (13, "call and return"), (14, "other"), (15, "exception")])  # fmt: skip
def test_lines_are_classified_from_the_ast(line: int, kind: str) -> None:
    assert line_kind(PROGRAM, _at(("<module>", line)), _at(("<module>", line + 1))) == kind


def test_what_happened_counts_too() -> None:
    assert line_kind(PROGRAM, _at(("f", 2), ("<module>", 13)), _at(("f", 3), ("<module>", 13))) == "str method"
    assert line_kind(PROGRAM, _at(("f", 3), ("<module>", 13)), _at(("<module>", 13))) == "call and return"  # depth changes
    raised = State(reason=StopReason.EXITED, ending=Ending.ERROR, exception=ExceptionInfo(type="E"))
    assert line_kind(PROGRAM, _at(("<module>", 14)), raised) == "exception"
    assert line_kind("x = (", _at(("<module>", 1)), _at(("<module>", 1))) == "other"  # no AST: other, never a crash


def test_the_table_counts_misses_and_shares() -> None:
    table = LineKindTable()
    for kind, matched in [("str method", False), ("str method", True), ("arithmetic", False), ("other", True)]:
        table.add(kind, matched=matched, location_ok=True)
    data = table.to_json()
    assert list(data) == [k for k in KINDS if k in data]
    assert data["str method"] == {"stops": 2, "misses": 1, "share_of_misses": 0.5, "state": 0.5, "location": 1.0}
    assert "| arithmetic | 1 | 1 | 50.0% | 100.0% | 0.0% |" in kind_lines(data)


def test_eval_fidelity_prints_and_writes_the_table_and_the_card_shows_it(tmp_path: Path) -> None:
    """The oracle backend is right everywhere: every kind has stops and no misses; the card copies the table."""
    from train.eval.cli import app
    from train.eval.model_card import render_card

    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "p.py").write_text(PROGRAM)
    out = tmp_path / "results" / "fidelity"
    result = CliRunner().invoke(app, ["fidelity", "--programs", str(programs), "--backend", "oracle", "--out", str(out),
                                      "--scripts", "3", "--max-steps", "20", "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "misses by what the line does" in result.output
    summary = json.loads((out / "summary.json").read_text())
    table = summary["by_line_kind"]
    assert sum(r["stops"] for r in table.values()) == summary["overall"]["stops"] and len(table) >= 4
    assert all(r["misses"] == 0 for r in table.values())
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    card = render_card(ckpt, tmp_path / "results", "")
    assert "Misses by what the line the action runs does" in card and "| line kind | stops | misses |" in card
