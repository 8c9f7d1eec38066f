"""Right and wrong variables by the type of their real value: which values a model gets wrong.

For each compared stop, every variable of the real state's top frame (what the Variables view shows
first) is counted under the type of its real value (`protocol.repr_types.classify_repr`: float, None,
tuple, nested containers, objects, dataclasses, ...) and is right when the prediction shows the same
repr (`protocol.compare.FieldDiff.wrong_variables`, addresses normalized). A variable the step changed
(new, or another value than at the previous real stop) on a line that calls a str method and now holds
a str is counted as ``str from a str method``; one on a line that calls a list/dict/set method and holds
a container as ``container from a method`` (`train.eval.error_analysis.line_kind`): the values computed by
methods, which the line-kind table says are almost never right.

`ValueTypeTable` counts; `to_json()` is ``by_value_type`` in the summary.json of `eval fidelity` and
`eval next-state`; `value_type_lines` renders it (the commands print it, `train/eval/model_card.py` copies it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol.compare import FieldDiff
from protocol.debugger import State, normalize_repr
from protocol.repr_types import REPR_TYPES, classify_repr

STR_METHOD_RESULT = "str from a str method"
CONTAINER_METHOD_RESULT = "container from a method"
ORDER = (*REPR_TYPES, STR_METHOD_RESULT, CONTAINER_METHOD_RESULT)
_CONTAINERS = frozenset({"list", "tuple", "dict", "set", "nested", "collections"})


def variable_type(value: str, *, changed: bool, line_kind: str | None) -> str:
    """The row a variable holding `value` is counted in (see the module docstring)."""
    kind = classify_repr(value)
    if changed and line_kind == "str method" and kind == "str":
        return STR_METHOD_RESULT
    if changed and line_kind == "list/dict method" and kind in _CONTAINERS:
        return CONTAINER_METHOD_RESULT
    return kind


@dataclass
class TypeCounts:
    variables: int = 0
    right: int = 0
    changed: int = 0  # variables the step changed (new, or another value)
    changed_right: int = 0


@dataclass
class ValueTypeTable:
    """Variables and right predictions per value type."""

    counts: dict[str, TypeCounts] = field(default_factory=dict)

    def add_stop(self, previous: State | None, real: State, diff: FieldDiff, line_kind: str | None = None) -> None:
        """Count the top-frame variables of `real` (`previous`: the real stop before it; `diff`: prediction vs `real`)."""
        if not real.frames:
            return
        top = real.frames[0]
        before = previous.frames[0] if previous is not None and previous.frames else None
        old = before.locals if before is not None and (before.name, before.file) == (top.name, top.file) else {}
        wrong = set(diff.wrong_variables)
        for name, value in top.locals.items():
            changed = name not in old or normalize_repr(old[name]) != normalize_repr(value)
            entry = self.counts.setdefault(variable_type(value, changed=changed, line_kind=line_kind), TypeCounts())
            right = name not in wrong
            entry.variables += 1
            entry.right += right
            entry.changed += changed
            entry.changed_right += changed and right

    def to_json(self) -> dict[str, dict[str, Any]]:
        return {kind: {"variables": c.variables, "right": c.right, "accuracy": round(c.right / c.variables, 4),
                       "changed": c.changed, "changed_accuracy": round(c.changed_right / c.changed, 4) if c.changed else None}
                for kind in ORDER if (c := self.counts.get(kind)) and c.variables}  # fmt: skip


def value_type_lines(table: dict[str, dict[str, Any]]) -> list[str]:
    """A markdown table of a `ValueTypeTable.to_json()` (as summary.json holds it)."""
    lines = ["| value type | variables | right | changed by the step | right among changed |", "|---|---|---|---|---|"]
    for kind, r in table.items():
        changed = "-" if r.get("changed_accuracy") is None else f"{100 * r['changed_accuracy']:.1f}%"
        lines.append(f"| {kind} | {r['variables']} | {100 * r['accuracy']:.1f}% | {r['changed']} | {changed} |")
    return lines
