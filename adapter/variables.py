"""Variables as a DAP client sees them: repr strings parsed into expandable children.

A predicted state holds every value as a ``repr`` string. Containers (lists, tuples, dicts, sets,
``Name(field=value, ...)`` reprs such as namedtuples and dataclasses, ``deque([...])``-style
wrappers) are parsed with `ast.parse` (parsing only: nothing is ever evaluated) so the client can
expand them. Anything that does not parse (``<object at 0x?>``, truncated text) is a leaf.

`VariableStore` hands out ``variablesReference`` numbers for one stop: the scopes of each frame
and, lazily, every expandable child. It is cleared whenever the state changes.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

MAX_PARSE_CHARS = 200_000  # longer reprs are shown as leaves: parsing them costs more than it helps


@dataclass(frozen=True)
class Child:
    """One child of a parsed repr: its display name, its repr text, and how to index it from the parent."""

    name: str
    value: str
    accessor: str  # appended to the parent's evaluate name: "[0]", "['k']", ".x"


@dataclass(frozen=True)
class ParsedRepr:
    """A repr string split into its type name and children (empty for leaves)."""

    type_name: str
    children: tuple[Child, ...] = ()
    mapping: bool = False  # children are keyed (a dict, or a wrapper of one such as Counter({...}))

    @property
    def expandable(self) -> bool:
        return bool(self.children)


def _segment(text: str, encoded: bytes, node: ast.AST) -> str:
    """The exact source text of ``node`` inside ``text`` (offsets are UTF-8 byte columns)."""
    if node.lineno == node.end_lineno == 1:  # type: ignore[attr-defined]
        return encoded[node.col_offset : node.end_col_offset].decode("utf-8")  # type: ignore[attr-defined]
    return ast.get_source_segment(text, node) or ""


def _leaf_type(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        return type(node.value).__name__
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return type(node.operand.value).__name__
    if isinstance(node, ast.Name) and node.id in {"True", "False"}:
        return "bool"
    return ""


def _call_name(node: ast.Call) -> str:
    return ast.unparse(node.func) if isinstance(node.func, (ast.Name, ast.Attribute)) else ""


def _children_of(node: ast.expr, text: str, encoded: bytes) -> ParsedRepr | None:
    """Type name and children of a container node, or None for a leaf."""
    seg = lambda n: _segment(text, encoded, n)  # noqa: E731
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        kind = {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}[type(node)]
        return ParsedRepr(kind, tuple(Child(str(i), seg(e), f"[{i}]") for i, e in enumerate(node.elts)))
    if isinstance(node, ast.Dict):
        kids = tuple(Child(seg(k), seg(v), f"[{seg(k)}]") for k, v in zip(node.keys, node.values) if k is not None)
        return ParsedRepr("dict", kids, mapping=True)
    if isinstance(node, ast.Call) and _call_name(node):
        name = _call_name(node)
        kids = [Child(kw.arg, seg(kw.value), f".{kw.arg}") for kw in node.keywords if kw.arg]
        if len(node.args) == 1 and not kids:  # deque([1, 2]), frozenset({1}), Counter({'a': 1})
            inner = _children_of(node.args[0], text, encoded)
            if inner is not None:
                return ParsedRepr(name, inner.children, inner.mapping)
        if node.args and not kids:
            return None
        return ParsedRepr(name, tuple(kids))
    return None


def parse_repr(text: str) -> ParsedRepr:
    """Split a repr into children without evaluating anything; a leaf when it is not a container."""
    if len(text) > MAX_PARSE_CHARS:
        return ParsedRepr("")
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ParsedRepr("")
    text = text.strip()
    try:
        found = _children_of(node, text, text.encode("utf-8"))
    except (RecursionError, UnicodeDecodeError):
        return ParsedRepr("")
    return ParsedRepr(_leaf_type(node)) if found is None else found


@dataclass
class _Container:
    """What one variablesReference stands for: named values, the frame they belong to (for setVariable), evaluate names."""

    entries: list[tuple[str, str, str | None]]  # (name, repr, evaluateName or None)
    frame_index: int | None = None  # set for a frame's Locals scope: its entries are settable
    child_refs: dict[int, int] = field(default_factory=dict)  # entry index -> reference handed out


class VariableStore:
    """Variable references for one stop. Holds every container handed out so far; `clear` on each new state."""

    def __init__(self) -> None:
        self._containers: dict[int, _Container] = {}
        self._next = 1

    def clear(self) -> None:
        self._containers.clear()

    def _add(self, container: _Container) -> int:
        ref = self._next
        self._next += 1
        self._containers[ref] = container
        return ref

    def add_scope(self, entries: list[tuple[str, str, str | None]], frame_index: int | None = None) -> int:
        """Register a scope (name, repr, evaluateName) and return its reference."""
        return self._add(_Container(list(entries), frame_index))

    def add_value(self, value: str, evaluate_name: str | None) -> int:
        """Reference for one value's children (0 when it is a leaf): used by evaluate and setVariable."""
        parsed = parse_repr(value)
        if not parsed.expandable:
            return 0
        return self._add(_Container(_entries(parsed, evaluate_name)))

    def frame_of(self, ref: int) -> int | None:
        """The frame index whose locals ``ref`` lists, or None if ``ref`` is not a Locals scope."""
        container = self._containers.get(ref)
        return container.frame_index if container else None

    def update(self, ref: int, name: str, value: str) -> None:
        """Replace the value of entry ``name`` in container ``ref`` (after setVariable)."""
        container = self._containers.get(ref)
        if container is None:
            return
        for i, (entry, _, evaluate_name) in enumerate(container.entries):
            if entry == name:
                container.entries[i] = (entry, value, evaluate_name)
                container.child_refs.pop(i, None)

    def __contains__(self, ref: int) -> bool:
        return ref in self._containers

    def variables(self, ref: int, start: int = 0, count: int = 0) -> list[dict]:
        """DAP ``Variable`` objects for ``ref`` (paged by start/count; count 0 = all). KeyError if unknown."""
        container = self._containers[ref]
        end = len(container.entries) if count <= 0 else min(len(container.entries), start + count)
        return [self._variable(container, i) for i in range(max(0, start), end)]

    def _variable(self, container: _Container, index: int) -> dict:
        name, value, evaluate_name = container.entries[index]
        parsed = parse_repr(value)
        ref = 0
        if parsed.expandable:
            ref = container.child_refs.get(index) or self._add(_Container(_entries(parsed, evaluate_name)))
            container.child_refs[index] = ref
        var = {"name": name, "value": value, "variablesReference": ref}
        if parsed.type_name:
            var["type"] = parsed.type_name
        if evaluate_name:
            var["evaluateName"] = evaluate_name
        if parsed.expandable and parsed.type_name in {"list", "tuple", "set"}:
            var["indexedVariables"] = len(parsed.children)
        return var


def _entries(parsed: ParsedRepr, parent: str | None) -> list[tuple[str, str, str | None]]:
    return [(c.name, c.value, (parent + c.accessor) if parent and not parsed.type_name == "set" else None) for c in parsed.children]
