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
from collections.abc import Callable
from dataclasses import dataclass, field

from adapter.confidence import LOW_CONFIDENCE, alternative_name, mark_variable

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


def _child_nodes(node: ast.expr) -> list[ast.expr] | None:
    """The nodes of a container's children, in the order `_children_of` lists them (None for a leaf)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.Dict):
        return [v for k, v in zip(node.keys, node.values) if k is not None]
    if isinstance(node, ast.Call) and _call_name(node):
        kids = [kw.value for kw in node.keywords if kw.arg]
        if len(node.args) == 1 and not kids:
            return _child_nodes(node.args[0])
        if node.args and not kids:
            return None
        return kids
    return None


def replace_child(text: str, index: int, value: str) -> str | None:
    """`text` (a container's repr) with its `index`-th child (as `parse_repr` lists them) replaced by `value`; None if it has none."""
    text = text.strip()
    if len(text) > MAX_PARSE_CHARS:
        return None
    try:
        kids = _child_nodes(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if kids is None or not 0 <= index < len(kids):
        return None
    node = kids[index]
    if node.lineno != 1 or node.end_lineno != 1:  # type: ignore[attr-defined]
        return None
    encoded = text.encode("utf-8")
    start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    return (encoded[:start] + value.encode("utf-8") + encoded[end:]).decode("utf-8")


def replace_path(text: str, path: list[int], value: str) -> str | None:
    """`text` with the descendant at `path` (child indices, outermost first) replaced by `value`; None if there is none."""
    if not path:
        return value
    children = parse_repr(text).children
    if not 0 <= path[0] < len(children):
        return None
    inner = replace_path(children[path[0]].value, path[1:], value)
    return None if inner is None else replace_child(text, path[0], inner)


@dataclass
class _Container:
    """What one variablesReference stands for: named values, the frame they belong to (for setVariable), evaluate names."""

    entries: list[tuple[str, str, str | None]]  # (name, repr, evaluateName or None)
    frame_index: int | None = None  # set for a frame's Locals scope: its entries are settable
    child_refs: dict[int, int] = field(default_factory=dict)  # entry index -> reference handed out
    confidence: list[float | None] | None = None  # per entry: the model's calibrated confidence (None: not predicted)
    alternatives: Callable[[str], list[tuple[str, float]]] | None = None  # a local's name -> the model's other values
    pending: Callable[[], list[tuple[str, str, float]]] | None = None  # alternatives to add when first listed
    parent: tuple[int, int] | None = None  # (container ref, entry index) this one lists the children of
    fixed: bool = False  # rows shown as given (not reprs): their values are text, their children the refs in child_refs


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

    def add_scope(self, entries: list[tuple[str, str, str | None]], frame_index: int | None = None,
                  confidence: list[float | None] | None = None,
                  alternatives: Callable[[str], list[tuple[str, float]]] | None = None) -> int:  # fmt: skip
        """Register a scope (name, repr, evaluateName) and return its reference.

        confidence: per entry, the model's confidence (``neuralConfidence``); alternatives: for a
        low-confidence entry, the model's other values, listed (lazily) among its children.
        """
        return self._add(_Container(list(entries), frame_index, confidence=confidence, alternatives=alternatives))

    def add_value(self, value: str, evaluate_name: str | None, confidence: float | None = None,
                  alternatives: Callable[[str], list[tuple[str, float]]] | None = None) -> int:  # fmt: skip
        """Reference for one value's children (0 when it is a leaf): used by evaluate and setVariable.

        confidence: the value's (its children share it as ``neuralConfidence``); None: not predicted.
        alternatives: given for a local (``evaluate_name`` is its name) under `LOW_CONFIDENCE`, its
        children end with the model's other values, as in the Variables view (so a hover shows them).
        """
        parsed = parse_repr(value)
        offers = alternatives is not None and evaluate_name is not None and confidence is not None and confidence < LOW_CONFIDENCE
        if not parsed.expandable and not offers:
            return 0
        kids = _entries(parsed, evaluate_name) if parsed.expandable else []
        container = _Container(kids, confidence=[confidence] * len(kids) if confidence is not None else None)
        if offers and alternatives is not None and evaluate_name is not None:
            container.pending = _alternatives_of(alternatives, evaluate_name)
        return self._add(container)

    def add_rows(self, rows: list[tuple[str, str, int]]) -> int:
        """Register rows shown as given, (name, text, reference of its children or 0), e.g. a value's history."""
        return self._add(_Container([(name, text, None) for name, text, _ in rows], fixed=True,
                                    child_refs={i: ref for i, (_, _, ref) in enumerate(rows) if ref}))

    def frame_of(self, ref: int) -> int | None:
        """The frame index whose locals ``ref`` lists, or None if ``ref`` is not a Locals scope."""
        container = self._containers.get(ref)
        return container.frame_index if container else None

    def update(self, ref: int, name: str, value: str) -> None:
        """Replace the value of entry ``name`` in container ``ref`` (after setVariable); the user's value is certain."""
        container = self._containers.get(ref)
        if container is None:
            return
        for i, (entry, _, evaluate_name) in enumerate(container.entries):
            if entry == name:
                container.entries[i] = (entry, value, evaluate_name)
                container.child_refs.pop(i, None)
                if container.confidence is not None:
                    container.confidence[i] = 1.0

    def pending(self, ref: int) -> bool:
        """Whether listing ``ref`` first asks the model for alternatives (slow: do it off the event loop)."""
        container = self._containers.get(ref)
        return container is not None and container.pending is not None

    def owner(self, ref: int) -> tuple[int, int] | None:
        """(container ref, entry index) whose value container ``ref`` lists the children of; None for a scope."""
        container = self._containers.get(ref)
        return container.parent if container else None

    def entry(self, ref: int, index: int) -> tuple[str, str, str | None]:
        """(name, repr, evaluateName) of entry `index` of container `ref` (KeyError/IndexError if unknown)."""
        return self._containers[ref].entries[index]

    def index_of(self, ref: int, name: str) -> int | None:
        container = self._containers.get(ref)
        if container is None:
            return None
        return next((i for i, (entry, _, _) in enumerate(container.entries) if entry == name), None)

    def __contains__(self, ref: int) -> bool:
        return ref in self._containers

    def variables(self, ref: int, start: int = 0, count: int = 0) -> list[dict]:
        """DAP ``Variable`` objects for ``ref`` (paged by start/count; count 0 = all). KeyError if unknown."""
        container = self._containers[ref]
        if container.pending is not None:
            pending, container.pending = container.pending, None
            extra = pending()
            container.entries += [(alt_name, alt_value, None) for alt_name, alt_value, _ in extra]
            if container.confidence is None:
                container.confidence = [None] * (len(container.entries) - len(extra))
            container.confidence += [p for _, _, p in extra]
        end = len(container.entries) if count <= 0 else min(len(container.entries), start + count)
        return [self._variable(container, i, ref) for i in range(max(0, start), end)]

    def _variable(self, container: _Container, index: int, own_ref: int = 0) -> dict:
        name, value, evaluate_name = container.entries[index]
        if container.fixed:
            return {"name": name, "value": value, "variablesReference": container.child_refs.get(index, 0)}
        confidence = container.confidence[index] if container.confidence is not None and index < len(container.confidence) else None
        parsed = parse_repr(value)
        offers = (container.alternatives is not None and evaluate_name is not None  # a local (not "(return) f")
                  and confidence is not None and confidence < LOW_CONFIDENCE)
        ref = 0
        if parsed.expandable or offers:
            ref = container.child_refs.get(index) or 0
            if not ref:
                kids = _entries(parsed, evaluate_name) if parsed.expandable else []
                child = _Container(kids, confidence=[confidence] * len(kids) if confidence is not None else None,
                                   parent=(own_ref, index))  # fmt: skip
                if offers and container.alternatives is not None:
                    child.pending = _alternatives_of(container.alternatives, name)
                ref = self._add(child)
            container.child_refs[index] = ref
        var = {"name": name, "value": value, "variablesReference": ref}
        if parsed.type_name:
            var["type"] = parsed.type_name
        if evaluate_name:
            var["evaluateName"] = evaluate_name
        if parsed.expandable and parsed.type_name in {"list", "tuple", "set"} and not offers:
            var["indexedVariables"] = len(parsed.children)
        return mark_variable(var, confidence)


def _alternatives_of(find: Callable[[str], list[tuple[str, float]]], name: str) -> Callable[[], list[tuple[str, str, float]]]:
    def listed() -> list[tuple[str, str, float]]:
        return [(alternative_name(rank, p), value, p) for rank, (value, p) in enumerate(find(name), start=1)]

    return listed


def _entries(parsed: ParsedRepr, parent: str | None) -> list[tuple[str, str, str | None]]:
    return [(c.name, c.value, (parent + c.accessor) if parent and not parsed.type_name == "set" else None) for c in parsed.children]
