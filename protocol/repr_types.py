"""What kind of value a repr shows, read from the repr text alone (debugpy's locals are repr strings).

`classify_repr(text)` names one of `REPR_TYPES`: the scalars (``None``, ``bool``, ``int``, ``float``,
``str``, ``bytes``), the builtin containers (``list``, ``tuple``, ``dict``, ``set``; ``nested`` when a
container holds another container, e.g. a list of dicts), ``collections`` (``deque([...])``,
``Counter({...})``, ``defaultdict(...)``, ``OrderedDict(...)``, ``namedtuple``s look like dataclasses),
``dataclass`` (``Name(field=value, ...)``: dataclasses, namedtuples, attrs classes), ``object`` (a
``<... object at 0x?>`` or any ``<...>`` description: instances without a ``__repr__``, functions,
generators, iterators), ``call`` (another ``Name(...)`` repr: ``Fraction(1, 3)``, ``datetime.date(...)``)
and ``other``. A repr cut by debugpy (``...``) is classified by how it starts.

One function so every package (the evaluation's error analysis, tracegen's coverage of the types users'
programs hold) counts the same way; it lives in `protocol` because it only reads text.
"""
from __future__ import annotations

import re

REPR_TYPES = ("None", "bool", "int", "float", "str", "bytes", "list", "tuple", "dict", "set", "nested", "collections",
              "dataclass", "object", "call", "other")  # fmt: skip

_INT = re.compile(r"-?\d+")
_FLOAT = re.compile(r"-?(?:\d+\.\d*(?:e[-+]?\d+)?|\d+e[-+]?\d+|inf|nan)")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\(")
_FIELD = re.compile(r"\(\s*[A-Za-z_]\w*=")
_COLLECTIONS = frozenset({"deque", "Counter", "defaultdict", "OrderedDict", "ChainMap", "array"})
_SETS = frozenset({"set", "frozenset"})  # set() and frozenset({...})
_OPENERS = {"[": "list", "(": "tuple", "{": "dict"}


def classify_repr(text: str) -> str:
    """The kind of value `text` (a repr, as debugpy shows it) stands for; one of `REPR_TYPES`."""
    text = text.strip()
    if not text:
        return "other"
    if text == "None":
        return "None"
    if text in ("True", "False"):
        return "bool"
    if _INT.fullmatch(text):
        return "int"
    if _FLOAT.fullmatch(text):
        return "float"
    if text[0] in "'\"":
        return "str"
    if text[:2] in ("b'", 'b"'):
        return "bytes"
    if text[0] == "<":
        return "object"
    if text[0] in _OPENERS:
        return "nested" if _holds_container(text[1:]) else _container(text)
    call = _CALL.match(text)
    if call:
        name = call.group(1).rsplit(".", 1)[-1]
        if name in _SETS:
            return "set"
        if name in _COLLECTIONS:
            return "collections"
        return "dataclass" if _FIELD.match(text, call.end() - 1) else "call"
    return "other"


def _container(text: str) -> str:
    """list, tuple, dict or set, for a repr opening with a bracket and holding no container."""
    if text[0] == "{":
        return "dict" if text == "{}" or ":" in _outside_strings(text) else "set"
    return _OPENERS[text[0]]


def _holds_container(body: str) -> bool:
    """Whether the rest of a container's repr (after its opening bracket) opens another bracket outside strings."""
    return any(char in "[({" for char in _outside_strings(body))


def _outside_strings(text: str) -> str:
    """`text` with the contents of its quoted strings dropped (quotes and escapes of a repr)."""
    out = []
    quote = ""
    escaped = False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "'\"":
            quote = char
            continue
        out.append(char)
    return "".join(out)
