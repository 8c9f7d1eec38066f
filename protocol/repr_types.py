"""What kind of value a repr shows, read from the repr text alone (debugpy's locals are repr strings).

One classifier, two grains, so every package counts the same way (it lives in `protocol` because it only
reads text):

* `repr_kind(text)`: the fine kind, one of `REPR_KINDS` (tracegen's type coverage counts these): the
  scalars, ``complex``, the builtin containers, ``frozenset``, ``range``, ``nested`` (a container holding a
  container), ``objects in a container``, ``Counter`` / ``defaultdict`` / ``deque`` / ``OrderedDict`` /
  ``ChainMap``, ``dict view``, ``record`` (``Name(field=value, ...)``: dataclasses, namedtuples, attrs
  classes), ``other call`` (``Fraction(1, 3)``, ``datetime.date(...)``), ``object`` (``<__main__.X object at
  0x?>``), ``function/class``, ``iterator/opaque`` (any other ``<...>`` description), ``cut`` (debugpy
  shortened it: ``...``) and ``other``. The repr is parsed as a Python expression (descriptions in angle
  brackets stand in as names), so brackets inside strings open nothing.
* `classify_repr(text)`: the coarse type, one of `REPR_TYPES` (the evaluation's error analysis by value
  type): ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``list``, ``tuple``, ``dict``, ``set``,
  ``nested`` (a container holding containers or objects, e.g. a list of dicts), ``collections``,
  ``dataclass`` (records), ``object`` (instances without a ``__repr__``, functions, generators, iterators),
  ``call`` (another ``Name(...)`` repr) and ``other``. A cut repr is classified by how it starts.
"""
from __future__ import annotations

import ast
import re

from protocol.debugger import normalize_repr

REPR_TYPES = ("None", "bool", "int", "float", "str", "bytes", "list", "tuple", "dict", "set", "nested", "collections",
              "dataclass", "object", "call", "other")  # fmt: skip
_COLLECTIONS = ("Counter", "defaultdict", "deque", "OrderedDict", "ChainMap")
REPR_KINDS = ("None", "bool", "int", "float", "complex", "str", "bytes", "list", "tuple", "dict", "set", "frozenset", "range",
              "bytearray", "slice", "nested", "objects in a container", *_COLLECTIONS, "dict view", "record", "other call",
              "object", "function/class", "iterator/opaque", "cut", "other")  # fmt: skip

_OBJECT = re.compile(r"<\w+(?:\.\w+)+ object at 0x[0-9a-f?]+>")  # an instance of a class of a module: <__main__.Item object at 0x?>
_VIEWS = ("dict_keys(", "dict_values(", "dict_items(")
_ANGLE = re.compile(r"<[^<>]*>")
_OBJECT_NAME, _OPAQUE_NAME = "__object__", "__opaque__"
_FLOAT_NAMES = frozenset({"inf", "nan"})
_CONTAINER_KINDS = frozenset({"list", "tuple", "set", "dict", "nested", "objects in a container", "frozenset"})
_BUILTIN_CALLS = frozenset({"set", "frozenset", "range", "bytearray", "slice"})

_COARSE = {"complex": "other", "frozenset": "set", "range": "call", "bytearray": "call", "slice": "call",
           "objects in a container": "nested", **dict.fromkeys(_COLLECTIONS, "collections"), "dict view": "call",
           "record": "dataclass", "other call": "call", "function/class": "object", "iterator/opaque": "object"}  # fmt: skip
_CUT_OPENERS = {"[": "list", "(": "tuple", "{": "dict", "'": "str", '"': "str", "<": "object"}
_CALL = re.compile(r"([A-Za-z_][\w.]*)\(")


def repr_kind(text: str) -> str:
    """The fine kind of value `text` (a repr, as debugpy shows it) stands for; one of `REPR_KINDS`."""
    text = normalize_repr(text.strip())
    if "..." in text:
        return "cut"
    if text.startswith("<") and text.endswith(">") and text.count("<") == 1:
        if _OBJECT.fullmatch(text):
            return "object"
        if text.startswith(("<function", "<bound method", "<built-in", "<class", "<module")):
            return "function/class"
        return "iterator/opaque"
    for name in _COLLECTIONS:
        if text.startswith(name + "("):
            return name
    if text.startswith(_VIEWS):
        return "dict view"
    if text in ("inf", "-inf", "nan"):
        return "float"
    # descriptions inside a value become names, so the rest parses as Python
    plain = _ANGLE.sub(lambda m: _OBJECT_NAME if _OBJECT.fullmatch(m.group()) else _OPAQUE_NAME, text)
    try:
        node = ast.parse(plain, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return "other"
    return _node_kind(node)


def classify_repr(text: str) -> str:
    """The coarse type of value `text` stands for; one of `REPR_TYPES`."""
    kind = repr_kind(text)
    if kind == "cut":
        return _cut_type(text.strip())
    return _COARSE.get(kind, kind)


def _node_kind(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        return "None" if node.value is None else ("other" if node.value is Ellipsis else type(node.value).__name__)
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, (ast.Constant, ast.Name)):
        return _node_kind(node.operand)
    if isinstance(node, ast.BinOp):  # (1+2j)
        return "complex"
    if isinstance(node, ast.Name):
        return {_OBJECT_NAME: "object", _OPAQUE_NAME: "iterator/opaque"}.get(node.id, "float" if node.id in _FLOAT_NAMES else "other")
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        items = [*node.keys, *node.values] if isinstance(node, ast.Dict) else list(node.elts)
        kinds = {_node_kind(item) for item in items if item is not None}
        if kinds & _CONTAINER_KINDS:
            return "nested"
        if kinds & {"object", "iterator/opaque", "record", "other call"}:
            return "objects in a container"
        return {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set", ast.Dict: "dict"}[type(node)]
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name in _BUILTIN_CALLS:
            return name
        if node.keywords and not node.args:
            return "record"  # dataclass, namedtuple: Name(field=value, ...)
        return "other call"  # Fraction(1, 3), Decimal('1.5'), datetime.date(2020, 1, 1), a class's own __repr__
    return "other"


def _cut_type(text: str) -> str:
    """The coarse type of a repr debugpy cut short, by how it starts."""
    if text[:2] in ("b'", 'b"'):
        return "bytes"
    if text[:1] in _CUT_OPENERS:
        return _CUT_OPENERS[text[0]]
    call = _CALL.match(text)
    if call:
        name = call.group(1).rsplit(".", 1)[-1]
        return "set" if name in ("set", "frozenset") else "collections" if name in _COLLECTIONS else "call"
    return "other"
