"""The builtin kind of a value, told by the first characters of its repr (``'`` str, ``[`` list...).

A static analysis that knows a value's kind (`model.static.return_kinds`) narrows the value's text in the
state grammar to reprs that begin the way that kind's reprs begin (`kinds_value_regex`), so the
model cannot write ``False`` where a function can only return a string. `repr_kind` reads the kind
back from a recorded repr (to check the analysis against real recordings).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from model.prompt import language as lang

# the builtin types whose kind a repr's first characters tell
KIND_TYPES: dict[str, type] = {"str": str, "bytes": bytes, "int": int, "float": float, "bool": bool, "None": type(None),
                               "list": list, "tuple": tuple, "dict": dict, "set": set, "frozenset": frozenset}
KINDS: tuple[str, ...] = tuple(KIND_TYPES)

# the start of each kind's repr, as JSON-string content (a double quote is written \" inside the JSON string)
_STARTS: dict[str, tuple[str, ...]] = {
    "str": ("'", r"\\\""),
    "bytes": ("b'", r"b\\\""),
    "int": ("-?[0-9]",),
    "float": ("-?[0-9]", "-?inf", "nan"),
    "bool": ("True", "False"),
    "None": ("None",),
    "list": (r"\[",),
    "tuple": (r"\(",),
    "dict": (r"\{",),
    "set": (r"\{", r"set\(\)"),
    "frozenset": (r"frozenset\(",),
}
# the other builtin values a closed program can hold, with their repr's starts
OTHER_TYPES: tuple[tuple[type, tuple[str, ...]], ...] = (
    (range, (r"range\(",)),
    (complex, ("-?[0-9]", r"\(", "-?inf", "nan")),
    (type({}.keys()), (r"dict_keys\(",)), (type({}.values()), (r"dict_values\(",)), (type({}.items()), (r"dict_items\(",)),
    (slice, (r"slice\(",)),
    *((t, ("<",)) for t in (map, filter, zip, enumerate, reversed, type(iter([])), type(iter("")), type(iter(())),
                            type(iter(range(0))), type((i for i in ())), type, type(len), type(lambda: 0), memoryview,
                            property, staticmethod, classmethod, object)),
    (bytearray, (r"bytearray\(b'", r"bytearray\(b\\\"")),  # bytearray(b'...'): its repr holds a bytes literal
)


def kinds_value_regex(kinds: Iterable[str]) -> str:
    """A JSON string (as `language.JSON_STRING_RE`) whose content begins like a repr of one of `kinds`."""
    return starts_value_regex(start for kind in kinds for start in _STARTS[kind])


def starts_with_attribute(attr: str) -> tuple[str, ...]:
    """The repr starts of the builtin values (kinds and `OTHER_TYPES`) that have attribute `attr`."""
    starts = {start for kind, t in KIND_TYPES.items() if hasattr(t, attr) for start in _STARTS[kind]}
    starts |= {start for t, other in OTHER_TYPES if hasattr(t, attr) for start in other}
    return tuple(sorted(starts))


def starts_value_regex(starts: Iterable[str]) -> str:
    """A JSON string whose content begins with one of `starts` (regexes of JSON-string content)."""
    starts = sorted(set(starts))
    if not starts:
        raise ValueError("no starts")
    return f'"(?:{"|".join(starts)}){lang.JSON_CHAR_RE}*"'


def repr_kind(text: str) -> str | None:
    """The builtin kind of a repr (``"'a'"`` -> ``"str"``), or None for anything else (objects, cut values)."""
    for kind in ("set", "frozenset"):  # set() and frozenset({..}) are calls, not literals
        if text.startswith(kind + "("):
            return kind
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _float_word(text)
    kind = "None" if value is None else type(value).__name__
    return kind if kind in KINDS else None


def _float_word(text: str) -> str | None:
    return "float" if re.fullmatch(r"-?inf|nan", text) else None


def repr_fits(text: str, kinds: Iterable[str]) -> bool:
    """Whether a repr's text begins the way one of `kinds` begins (the check `kinds_value_regex` makes)."""
    return re.fullmatch(kinds_value_regex(kinds), lang.json_string(text), re.DOTALL) is not None
