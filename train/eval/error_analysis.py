"""Misses by what the line does: which kind of step a model gets wrong, so the next lever is chosen from data.

`line_kind(program, previous, expected)` classifies one question by the line the action runs (the
previous stop's top frame line, read from the program's AST) and what happened: the first kind that
applies, in this order:

- ``exception``: the stop is an exception (or carries one, or the run ends in error), or the line raises or asserts;
- ``loop exit``: the line is a ``for``/``while`` header, ``break`` or ``continue``;
- ``call and return``: the stack depth changes, or the line returns, defines a function or class, or calls a function of the program;
- ``str method``: the line calls a method only strings have (``upper``, ``split``, ``join``...);
- ``list/dict method``: the line calls a list, dict or set method (``append``, ``pop``, ``get``, ``items``...);
- ``comparison and branch``: an ``if``/``elif``/``match`` line, or a comparison, ``and``/``or``, ``not`` or conditional expression;
- ``arithmetic``: a binary or augmented operator;
- ``other``: anything else (plain assignments, prints of names, the module's first line...).

`LineKindTable` counts stops and misses per kind; `lines()` renders it as a markdown table (the
`eval` commands print it and put it in summary.json; `train/eval/model_card.py` copies it into the card).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from protocol.debugger import Ending, State, StopReason

KINDS = ("str method", "list/dict method", "arithmetic", "comparison and branch", "call and return", "loop exit", "exception", "other")

STR_METHODS = frozenset({
    "upper", "lower", "capitalize", "casefold", "title", "swapcase", "strip", "lstrip", "rstrip", "split", "rsplit",
    "splitlines", "join", "replace", "find", "rfind", "startswith", "endswith", "format", "format_map", "center", "ljust",
    "rjust", "zfill", "partition", "rpartition", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower",
    "istitle", "isnumeric", "isdecimal", "isidentifier", "isprintable", "expandtabs", "encode", "removeprefix",
    "removesuffix", "translate", "maketrans", "rindex",
})  # fmt: skip
CONTAINER_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear", "copy", "count", "index", "keys",
    "values", "items", "get", "update", "setdefault", "popitem", "fromkeys", "add", "discard", "union", "intersection",
    "difference", "symmetric_difference", "issubset", "issuperset", "isdisjoint", "appendleft", "popleft",
    "most_common",
})  # fmt: skip


@dataclass(frozen=True)
class _Program:
    statements: dict[int, ast.stmt]  # line -> the innermost statement starting or spanning it (own lines)
    functions: frozenset[str]


@lru_cache(maxsize=64)
def _program(source: str) -> _Program | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    statements: dict[int, ast.stmt] = {}
    functions: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            functions.add(node.name)
        if isinstance(node, ast.stmt):
            end = _header_end(node)
            for line in range(node.lineno, end + 1):
                current = statements.get(line)
                if current is None or _span(current) >= _span(node):  # the innermost statement owns the line
                    statements[line] = node
    return _Program(statements, frozenset(functions))


def _header_end(node: ast.stmt) -> int:
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return max(node.lineno, body[0].lineno - 1)
    return node.end_lineno or node.lineno


def _span(node: ast.stmt) -> int:
    return (node.end_lineno or node.lineno) - node.lineno


def _own_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates on its own lines (a compound statement's header only)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
        return []
    return [stmt]


def line_kind(program: str, previous: State | None, expected: State) -> str:
    """The kind of the line `previous` stops on (see the module docstring); ``other`` when unknown."""
    if expected.reason is StopReason.EXCEPTION or expected.exception is not None or expected.ending is Ending.ERROR:
        return "exception"
    info = _program(program)
    top = previous.frames[0] if previous is not None and previous.frames else None
    stmt = info.statements.get(top.line) if info is not None and top is not None and top.file is None else None
    if isinstance(stmt, (ast.Raise, ast.Assert)):
        return "exception"
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.Break, ast.Continue)):
        return "loop exit"
    depth_changed = previous is not None and len(previous.frames) != len(expected.frames) and not expected.finished
    if depth_changed or isinstance(stmt, (ast.Return, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return "call and return"
    if stmt is None or info is None:
        return "other"
    nodes = [n for root in _own_nodes(stmt) for n in ast.walk(root)]
    calls = [n for n in nodes if isinstance(n, ast.Call)]
    if any(isinstance(c.func, ast.Name) and c.func.id in info.functions for c in calls):
        return "call and return"
    methods = {c.func.attr for c in calls if isinstance(c.func, ast.Attribute)}
    if methods & STR_METHODS:
        return "str method"
    if methods & CONTAINER_METHODS:
        return "list/dict method"
    if isinstance(stmt, (ast.If, ast.Match)) or any(isinstance(n, (ast.Compare, ast.BoolOp, ast.IfExp)) or
                                                   (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)) for n in nodes):  # fmt: skip
        return "comparison and branch"
    if isinstance(stmt, ast.AugAssign) or any(isinstance(n, ast.BinOp) for n in nodes):
        return "arithmetic"
    return "other"


@dataclass
class KindCounts:
    stops: int = 0
    misses: int = 0  # whole state wrong
    location_misses: int = 0


@dataclass
class LineKindTable:
    """Stops and misses per line kind."""

    counts: dict[str, KindCounts] = field(default_factory=dict)

    def add(self, kind: str, *, matched: bool, location_ok: bool) -> None:
        entry = self.counts.setdefault(kind, KindCounts())
        entry.stops += 1
        entry.misses += 0 if matched else 1
        entry.location_misses += 0 if location_ok else 1

    def to_json(self) -> dict[str, dict[str, Any]]:
        total = sum(c.misses for c in self.counts.values())
        return {kind: {"stops": c.stops, "misses": c.misses, "share_of_misses": round(c.misses / max(1, total), 4),
                       "state": round(1 - c.misses / max(1, c.stops), 4), "location": round(1 - c.location_misses / max(1, c.stops), 4)}
                for kind in KINDS if (c := self.counts.get(kind))}  # fmt: skip


def kind_lines(table: dict[str, dict[str, Any]]) -> list[str]:
    """A markdown table of a `LineKindTable.to_json()` (as summary.json holds it)."""
    lines = ["| line kind | stops | misses | share of misses | location | whole state |", "|---|---|---|---|---|---|"]
    for kind, r in table.items():
        lines.append(f"| {kind} | {r['stops']} | {r['misses']} | {100 * r['share_of_misses']:.1f}% | "
                     f"{100 * r['location']:.1f}% | {100 * r['state']:.1f}% |")  # fmt: skip
    return lines
