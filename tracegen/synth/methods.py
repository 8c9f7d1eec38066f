"""The str/list/dict methods CruxEval's functions were built from (69 in all).

Derived from the CruxEval paper's list and checked against the methods that actually occur in
``cruxeval.jsonl``: 47 on ``str`` (``maketrans`` counted with ``translate``), 11 on ``list``,
11 on ``dict``. The generator's coverage test checks that every one of them is produced.
"""
from __future__ import annotations

STR_METHODS: tuple[str, ...] = (
    "capitalize", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find",
    "format", "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit",
    "isidentifier", "islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper",
    "join", "ljust", "lower", "lstrip", "maketrans", "partition", "removeprefix", "removesuffix",
    "replace", "rfind", "rindex", "rjust", "rpartition", "rsplit", "rstrip", "split",
    "splitlines", "startswith", "strip", "swapcase", "title", "translate", "upper", "zfill",
)
LIST_METHODS: tuple[str, ...] = (
    "append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse", "sort",
)
DICT_METHODS: tuple[str, ...] = (
    "clear", "copy", "fromkeys", "get", "items", "keys", "pop", "popitem", "setdefault", "update", "values",
)
ALL_METHODS: frozenset[tuple[str, str]] = frozenset(
    [("str", m) for m in STR_METHODS] + [("list", m) for m in LIST_METHODS] + [("dict", m) for m in DICT_METHODS]
)
assert len(ALL_METHODS) == 69
