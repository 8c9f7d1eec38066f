"""Variables by the type of their real value (`protocol.repr_types`, `train.eval.value_types`): the classifier, the counting, the command."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocol.compare import compare_states
from protocol.debugger import Frame, State, StopReason
from protocol.repr_types import REPR_TYPES, classify_repr
from train.eval.value_types import CONTAINER_METHOD_RESULT, STR_METHOD_RESULT, ValueTypeTable, value_type_lines, variable_type


@pytest.mark.parametrize(("text", "kind"), [
    ("None", "None"), ("True", "bool"), ("-12", "int"), ("3.5", "float"), ("-1e-05", "float"), ("inf", "float"), ("0.1", "float"),
    ("'a b'", "str"), ('"it\'s"', "str"), ("b'x'", "bytes"), ("[1, 2]", "list"), ("(1,)", "tuple"), ("{}", "dict"),
    ("{'a': 1}", "dict"), ("{1, 2}", "set"), ("set()", "set"), ("frozenset({1})", "set"),
    ("[{'price': 1.5}, {'price': 2.0}]", "nested"), ("{'k': [1]}", "nested"), ("((1, 2), 3)", "nested"),
    ("['(', '[']", "list"),  # brackets inside strings open nothing
    ("deque([1, 2])", "collections"), ("Counter({'a': 2})", "collections"), ("defaultdict(<class 'list'>, {})", "collections"),
    ("Point(x=1, y=2)", "dataclass"), ("Item(name='a', tags=[])", "dataclass"),
    ("<__main__.Cart object at 0x?>", "object"), ("<generator object f at 0x?>", "object"),
    ("Fraction(1, 3)", "call"), ("datetime.date(2020, 1, 2)", "call"), ("", "other"), ("Ellipsis", "other"),
    ("[<__main__.Item object at 0x?>]", "nested"), ("(1+2j)", "other"), ("dict_keys(['a'])", "call"), ("<function f at 0x?>", "object"),
    ("[1, 2, ...", "list"), ("{'a': 1, ...", "dict"), ("'abc...", "str"), ("Counter({'a': 1, ...", "collections"),  # cut by debugpy
])  # fmt: skip
def test_classify_repr(text: str, kind: str) -> None:
    assert classify_repr(text) == kind and kind in REPR_TYPES


def test_values_computed_by_methods_get_their_own_rows() -> None:
    assert variable_type("'AB'", changed=True, line_kind="str method") == STR_METHOD_RESULT
    assert variable_type("'AB'", changed=False, line_kind="str method") == "str"  # not this line's result
    assert variable_type("[1, 2]", changed=True, line_kind="list/dict method") == CONTAINER_METHOD_RESULT
    assert variable_type("3", changed=True, line_kind="list/dict method") == "int"


def _stop(line: int, **values: str) -> State:
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line, locals=dict(values))])


def test_table_counts_right_and_changed_variables() -> None:
    table = ValueTypeTable()
    previous = _stop(2, s="'a'", x="1.5")
    real = _stop(3, s="'A'", x="1.5", o="<C object at 0x7f00>")
    predicted = _stop(3, s="'a'", x="1.5", o="<C object at 0x7faa>")  # s wrong; the address does not count
    table.add_stop(previous, real, compare_states(predicted, real), "str method")
    got = table.to_json()
    assert got[STR_METHOD_RESULT] == {"variables": 1, "right": 0, "accuracy": 0.0, "changed": 1, "changed_accuracy": 0.0}
    assert got["float"] == {"variables": 1, "right": 1, "accuracy": 1.0, "changed": 0, "changed_accuracy": None}
    assert got["object"]["right"] == 1 and got["object"]["changed"] == 1
    lines = value_type_lines(got)
    assert lines[2].startswith("| float | 1 | 100.0% | 0 | - |")


def test_fidelity_reports_value_types(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from train.eval.cli import app

    (tmp_path / "p.py").write_text("rows = [{'p': 1.5}, {'p': 2.0}]\ntotal = 0.0\nfor r in rows:\n    total += r['p']\nname = 'ab'.upper()\nnothing = None\n")
    out = tmp_path / "fid"
    result = CliRunner().invoke(app, ["fidelity", "--programs", str(tmp_path / "p.py"), "--backend", "oracle", "--out", str(out), "--scripts", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    table = json.loads((out / "summary.json").read_text())["by_value_type"]
    assert {"nested", "float"} <= set(table) and all(r["accuracy"] == 1.0 for r in table.values())  # the oracle is always right
    assert "by the type of their real value" in result.output and "| nested |" in result.output
