"""Evaluate (hover, watch, repl) against a predicted state: names and attribute/index paths only.

Nothing is ever run. An expression is parsed with `ast` and must be a name followed by any chain of
``.attr``, ``[int]``, ``['key']`` (or another literal key); each step walks into the children of
the parsed repr (`adapter.variables.parse_repr`). Anything else (calls, operators, comprehensions)
is refused with a message saying why.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from adapter.variables import parse_repr
from protocol.debugger import State

NOT_SUPPORTED = (
    "the neural debugger shows predicted values only: use a variable name or a path such as "
    "a[0], d['k'], obj.attr (it never runs code)"
)


class EvaluateError(Exception):
    """An expression that cannot be answered from the predicted state; the message is for the user."""


@dataclass(frozen=True)
class PathStep:
    """One step of a path: an attribute name, or an index/key given as a Python literal value."""

    attr: str | None = None
    key: object = None


def parse_path(expression: str) -> tuple[str, list[PathStep]]:
    """Split ``a.b[0]['k']`` into its root name and steps; EvaluateError for anything else."""
    text = expression.strip()
    if not text:
        raise EvaluateError("empty expression")
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        raise EvaluateError(f"not a valid expression: {text!r}") from None
    steps: list[PathStep] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute):
            steps.append(PathStep(attr=node.attr))
            node = node.value
        elif isinstance(node, ast.Subscript):
            try:
                key = ast.literal_eval(node.slice)  # literals only: a safe parse, not an evaluation of user code
            except (ValueError, TypeError, SyntaxError, RecursionError):
                raise EvaluateError(f"{text!r}: only literal indexes and keys are supported; {NOT_SUPPORTED}") from None
            steps.append(PathStep(key=key))
            node = node.value
        else:
            raise EvaluateError(f"{text!r}: {NOT_SUPPORTED}")
    steps.reverse()
    return node.id, steps


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return _Unmatchable


class _Unmatchable:
    """Stands for a key whose repr is not a literal (it can never equal a literal key)."""


def _step_into(value: str, step: PathStep, shown: str) -> str:
    parsed = parse_repr(value)
    if not parsed.expandable:
        raise EvaluateError(f"{shown}: the predicted value {value[:80]} has no parts to index")
    if step.attr is not None:
        for child in parsed.children:
            if child.accessor == f".{step.attr}":
                return child.value
        raise EvaluateError(f"{shown}: no attribute {step.attr!r} in the predicted value")
    if parsed.mapping:
        for child in parsed.children:
            key = _literal(child.name)
            if key is not _Unmatchable and type(key) is type(step.key) and key == step.key:
                return child.value
        raise EvaluateError(f"{shown}: key {step.key!r} not in the predicted value")
    if isinstance(step.key, int) and not isinstance(step.key, bool):
        items = [c for c in parsed.children if c.accessor.startswith("[")]
        if -len(items) <= step.key < len(items):
            return items[step.key].value
        raise EvaluateError(f"{shown}: index {step.key} out of range (the predicted value has {len(items)} items)")
    raise EvaluateError(f"{shown}: cannot index the predicted {parsed.type_name or 'value'} with {step.key!r}")


def lookup_name(state: State, name: str, frame_index: int = 0) -> str:
    """The repr of ``name`` in frame ``frame_index`` (its locals, then module globals, then the return value)."""
    if not state.frames:
        raise EvaluateError("the program is not stopped: nothing to evaluate")
    frame_index = min(max(frame_index, 0), len(state.frames) - 1)
    frame = state.frames[frame_index]
    if name in frame.locals:
        return frame.locals[name]
    module = module_frame_index(state, frame_index)
    if module is not None and name in state.frames[module].locals:
        return state.frames[module].locals[name]
    raise EvaluateError(f"name {name!r} is not defined in the predicted state")


def module_frame_index(state: State, frame_index: int) -> int | None:
    """The frame holding the module globals of frame `frame_index`: the nearest ``<module>`` frame of the
    same file at or below it (the program's is the bottom frame). None when that module's frame is not
    on the stack (a function of another user file called from the program): its globals are not known."""
    file = state.frames[frame_index].file
    for index in range(frame_index, len(state.frames)):
        candidate = state.frames[index]
        if candidate.name == "<module>" and candidate.file == file:
            return index
    return None


def evaluate_path(state: State, expression: str, frame_index: int = 0) -> str:
    """The predicted repr that ``expression`` (a name or attribute/index path) refers to."""
    root, steps = parse_path(expression)
    value = lookup_name(state, root, frame_index)
    shown = root
    for step in steps:
        shown += f".{step.attr}" if step.attr is not None else f"[{step.key!r}]"
        value = _step_into(value, step, shown)
    return value
