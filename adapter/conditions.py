"""Conditional breakpoints, hit counts and logpoints, judged on the predicted state (nothing is run).

A breakpoint's ``condition`` is a Python expression over the predicted variables. It is evaluated
by walking its syntax tree: names and paths (``a``, ``obj.attr``, ``d['k']``) take the predicted
repr read back as a literal (`ast.literal_eval`), and only pure operations on such values are
allowed (comparisons, ``and``/``or``/``not``, arithmetic with size limits, indexing, and a few
builtins such as ``len``). A condition that cannot be judged this way (a call, a value whose repr
is not a literal) raises `ConditionError`, and the adapter stops there with a note; one that would
raise in the program too (an undefined name, a missing key, ``1/0``) raises `ConditionRaised`, and
the adapter goes on, as debugpy does.

``hitCondition`` follows debugpy: ``5`` or ``== 5`` (the fifth hit), ``>= 5``, ``> 5``, ``< 5``,
``<= 5``, ``% 5`` (every fifth). Every arrival at the line counts as a hit; debugpy stops when the
hit condition holds, else (if there is one) when the condition holds. A ``logMessage`` turns the
breakpoint into a logpoint: ``{expression}`` parts are replaced by predicted values, the line is
written to the output, and the program goes on.
"""
from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable

from adapter.evaluate import EvaluateError, evaluate_path
from protocol.debugger import State

MAX_SIZE = 100_000  # longest string/sequence a condition may build
_HIT_RE = re.compile(r"^\s*(==|>=|<=|>|<|%)?\s*(\d+)\s*$")

_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos,
                                            ast.Invert: operator.invert}
_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len, "abs": abs, "min": min, "max": max, "sum": sum, "any": any, "all": all, "sorted": sorted,
    "int": int, "float": float, "bool": bool, "str": str, "round": round,
}
_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "tuple": tuple, "dict": dict,
          "set": set, "bytes": bytes, "NoneType": type(None)}


class ConditionError(Exception):
    """A condition that cannot be judged from the predicted state; the message is for the user."""


class ConditionRaised(ConditionError):
    """A condition that would raise in the real program too (an undefined name, a missing key, 1/0).

    debugpy does not stop on such a breakpoint, and neither does the adapter."""


_LOOKUP_FAILURES = ("is not defined", "no attribute", "not in the predicted value", "out of range")


@dataclass
class BreakpointRule:
    """One source breakpoint with what decides whether it stops, and how often it was reached."""

    line: int
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    hits: int = 0
    noted: bool = False  # a note about a condition that raised was already written

    @property
    def plain(self) -> bool:
        return not (self.condition or self.hit_condition or self.log_message)


def check_hit_condition(text: str) -> None:
    """ConditionError unless `text` is a hit condition the adapter understands."""
    if not _HIT_RE.match(text):
        raise ConditionError(f"hit condition {text!r} not understood: use N, == N, >= N, > N, < N, <= N or % N")


def hit_matches(text: str, hits: int) -> bool:
    """Whether the `hits`-th arrival satisfies the hit condition `text` (debugpy's forms)."""
    found = _HIT_RE.match(text)
    if not found:
        raise ConditionError(f"hit condition {text!r} not understood")
    op, number = found.group(1) or "==", int(found.group(2))
    if op == "%":
        return number > 0 and hits % number == 0
    return {"==": hits == number, ">=": hits >= number, "<=": hits <= number, ">": hits > number, "<": hits < number}[op]


def should_stop(rule: BreakpointRule, state: State, frame_index: int = 0) -> bool:
    """Count the hit and decide as pydevd does: the hit condition, else the condition (judged in frame
    `frame_index`), else stop."""
    rule.hits += 1
    if rule.hit_condition:
        if hit_matches(rule.hit_condition, rule.hits):
            return True
        if not rule.condition:
            return False
    if rule.condition:
        return bool(evaluate_condition(rule.condition, state, frame_index))
    return True


def evaluate_condition(expression: str, state: State, frame_index: int = 0) -> Any:
    """The value of `expression` computed from the predicted reprs (ConditionError if it cannot be)."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        raise ConditionError(f"not a valid expression: {expression!r}") from None
    try:
        return _Evaluator(state, frame_index).visit(tree.body)
    except ConditionError:
        raise
    except RecursionError:
        raise ConditionError(f"{expression!r} is nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - TypeError, ZeroDivisionError, ... in the user's expression
        raise ConditionRaised(f"{expression!r} raised {type(exc).__name__}: {exc}") from None


def format_log_message(message: str, state: State, frame_index: int = 0) -> str:
    """A logpoint's text: each ``{expression}`` replaced by its predicted value (``{{``/``}}`` are braces)."""
    out: list[str] = []
    i = 0
    while i < len(message):
        ch = message[i]
        if message.startswith("{{", i) or message.startswith("}}", i):
            out.append(ch)
            i += 2
            continue
        if ch == "{":
            end = message.find("}", i + 1)
            if end < 0:
                out.append(message[i:])
                break
            out.append(_shown(message[i + 1:end], state, frame_index))
            i = end + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _shown(expression: str, state: State, frame_index: int) -> str:
    try:
        return evaluate_path(state, expression, frame_index)
    except EvaluateError:
        pass
    try:
        value = evaluate_condition(expression, state, frame_index)
    except ConditionError as exc:
        return f"<error: {exc}>"
    return repr(value)


def _bounded(value: Any) -> Any:
    if isinstance(value, (str, bytes, list, tuple, set, dict)) and len(value) > MAX_SIZE:
        raise ConditionError(f"the expression builds a value longer than {MAX_SIZE:,}")
    if isinstance(value, int) and value.bit_length() > 10_000:
        raise ConditionError("the expression builds a number too large to compare")
    return value


class _Evaluator(ast.NodeVisitor):
    def __init__(self, state: State, frame_index: int) -> None:
        self.state = state
        self.frame_index = frame_index

    def generic_visit(self, node: ast.AST) -> Any:
        raise ConditionError(f"{type(node).__name__} is not supported in a condition on predicted values "
                             "(names, literals, comparisons, arithmetic, indexing, len/min/max/...)")

    def _predicted(self, node: ast.expr) -> Any:
        text = ast.unparse(node)
        try:
            shown = evaluate_path(self.state, text, self.frame_index)
        except EvaluateError as exc:
            failed = ConditionRaised if any(part in str(exc) for part in _LOOKUP_FAILURES) else ConditionError
            raise failed(str(exc)) from None
        try:
            return ast.literal_eval(shown)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise ConditionError(f"the predicted value of {text} ({shown[:60]}) is not a literal to compute with") from None

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        return self._predicted(node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        return self._predicted(node)

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> Any:
        return [self.visit(e) for e in node.elts]

    def visit_Set(self, node: ast.Set) -> Any:
        return {self.visit(e) for e in node.elts}

    def visit_Dict(self, node: ast.Dict) -> Any:
        if any(k is None for k in node.keys):
            raise ConditionError("** in a dict is not supported in a condition")
        return {self.visit(k): self.visit(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        try:
            return self._predicted(node)  # a path into a predicted value: d['k'], a[0]
        except ConditionError:
            pass
        return _bounded(self.visit(node.value)[self.visit(node.slice)])

    def visit_Slice(self, node: ast.Slice) -> Any:
        parts = [self.visit(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def visit_Compare(self, node: ast.Compare) -> Any:
        left = self.visit(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.visit(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        value: Any = None
        for operand in node.values:
            value = self.visit(operand)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        return _UNARY[type(node.op)](self.visit(node.operand))

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        if type(node.op) not in _BINARY:
            raise ConditionError(f"operator {type(node.op).__name__} is not supported in a condition")
        left, right = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > 1000:
            raise ConditionError("exponent too large in a condition")
        if isinstance(node.op, ast.Mult):
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, bytes, list, tuple)) and isinstance(times, int) and len(seq) * times > MAX_SIZE:
                    raise ConditionError(f"the expression builds a value longer than {MAX_SIZE:,}")
        return _bounded(_BINARY[type(node.op)](left, right))

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        return self.visit(node.body) if self.visit(node.test) else self.visit(node.orelse)

    def visit_Call(self, node: ast.Call) -> Any:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _BUILTINS and name != "isinstance" or node.keywords and name not in ("sorted", "round", "min", "max"):
            raise ConditionError(f"calls are not supported in a condition on predicted values, except "
                                 f"{', '.join(sorted([*_BUILTINS, 'isinstance']))}")
        if name == "isinstance":
            if len(node.args) != 2 or not isinstance(node.args[1], ast.Name) or node.args[1].id not in _TYPES:
                raise ConditionError("isinstance(x, T) needs a builtin type name such as int, str, list")
            return isinstance(self.visit(node.args[0]), _TYPES[node.args[1].id])
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords if k.arg is not None}
        if "key" in kwargs:
            raise ConditionError("key= functions are not supported in a condition")
        return _bounded(_BUILTINS[name](*args, **kwargs))
