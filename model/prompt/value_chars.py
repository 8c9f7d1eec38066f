"""Value chars: string contents inside state values one token per character (issue #15's lever).

A model either has this property or not, and is trained and served the same way: the flag is the key
`VALUE_CHARS_KEY` (``true``) in its ``tokenizer_config.json``, which transformers keeps through
``from_pretrained`` / ``save_pretrained`` (in ``init_kwargs``) and ``vllm serve`` ignores. Without it
(the shipped models) `encode_text` is exactly ``tokenizer.encode(text, add_special_tokens=False)``.

The rule: inside the value of a state (a local's repr, ``{"x":"'hello world'"}``, or the return
value's, ``<|return_sep|>f"'ok'"``), the contents of each Python string literal (``'...'``,
``"..."``, ``b'...'``, nested in lists, dicts, dataclass reprs) are written one token per character
of the JSON text: each character is tokenized alone (byte-level BPE: one token, or one per byte for
a character outside the merged alphabet). The quotes, every other part of the state, the listing,
names, keywords, numbers and special tokens are tokenized as before, piece by piece (each piece is
what byte-level BPE makes of it alone; pieces meet at the literal's quotes). What cannot be parsed
(an unclosed literal, a truncated value, a bad escape) is left to ordinary tokenization. Decoding is
unchanged: the ids decode to the same text. Exception messages and stdout are left as they are.

Finding the values needs no parse of the whole state (`model.prompt.state_values`), so a segment of
a document (a state, an action, a header) is encoded alike alone or within the whole text.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model.prompt.state_values import value_strings
from model.prompt.tokenizer import CONFIG_FILE

VALUE_CHARS_KEY = "neural_debugger_value_chars"  # in tokenizer_config.json: true = this model's data was packed so

# one character of a JSON string body: an escape (a \\u escape cut short by the end of a generated text too) or a raw char
_UNIT = re.compile(r"\\u[0-9a-fA-F]{4}|\\u[0-9a-fA-F]{0,3}\Z|\\.|.", re.DOTALL)
_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_PREFIX_LETTERS = frozenset("bBrRuUfF")
_QUOTES = ("'", '"')

Span = tuple[int, int]


# ---- the flag ------------------------------------------------------------------------------------------


def value_chars_enabled(tokenizer: Any) -> bool:
    """Whether `tokenizer` (a transformers tokenizer loaded from a model or data folder) carries the flag."""
    kwargs = getattr(tokenizer, "init_kwargs", None)
    return isinstance(kwargs, dict) and kwargs.get(VALUE_CHARS_KEY) is True


def mark_value_chars(tokenizer: Any, on: bool) -> None:
    """Set (or clear) the flag on a loaded transformers tokenizer; ``save_pretrained`` then writes it."""
    kwargs = getattr(tokenizer, "init_kwargs", None)
    if not isinstance(kwargs, dict):
        raise TypeError(f"{type(tokenizer).__name__} has no init_kwargs: value chars need a transformers tokenizer")
    if on:
        kwargs[VALUE_CHARS_KEY] = True
    else:
        kwargs.pop(VALUE_CHARS_KEY, None)


def folder_value_chars(folder: str | Path) -> bool:
    """The flag as written in a model or tokenizer folder (False when absent or unreadable)."""
    try:
        config = json.loads((Path(folder) / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get(VALUE_CHARS_KEY) is True


def write_value_chars(folder: str | Path, on: bool) -> None:
    """Set (or clear) the flag in a folder's ``tokenizer_config.json`` (left untouched when already so)."""
    path = Path(folder) / CONFIG_FILE
    config = json.loads(path.read_text(encoding="utf-8"))
    if (config.get(VALUE_CHARS_KEY) is True) == on and (on or VALUE_CHARS_KEY not in config):
        return
    if on:
        config[VALUE_CHARS_KEY] = True
    else:
        config.pop(VALUE_CHARS_KEY, None)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


# ---- where the string contents are -------------------------------------------------------------------


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _opens_literal(chars: Sequence[str], i: int) -> bool:
    """Whether the quote at `i` starts a string literal: not after a name character, except a prefix (b'', rb'')."""
    j = i - 1
    letters = 0
    while j >= 0 and chars[j] in _PREFIX_LETTERS and letters < 2:
        j, letters = j - 1, letters + 1
    if j >= 0 and _is_name_char(chars[j]):
        return False  # inside a name: don't, xb'
    return letters < 2 or chars[j + 1].lower() != chars[j + 2].lower()  # bb'', rr'': not a prefix


def _literal_contents(text: str, start: int, end: int, closed: bool, partial: bool) -> list[tuple[int, int, bool]]:
    """(start, end, closed) in `text` of the contents of each string literal in the value body ``text[start:end]``.

    A literal not closed inside a closed body (a truncated repr) ends the search; with `partial`, a
    literal still open at the end of an open body is given (closed False).
    """
    offsets: list[int] = []
    chars: list[str] = []
    broken = False
    for m in _UNIT.finditer(text, start, end):
        unit = m.group()
        if unit.startswith("\\u"):
            ch = chr(int(unit[2:], 16)) if len(unit) == 6 else "\ufffd"  # cut short: one character still coming
        elif unit.startswith("\\") and len(unit) == 2:
            if unit[1] not in _JSON_ESCAPES:
                broken = True  # not JSON: leave the rest of the value alone
                break
            ch = _JSON_ESCAPES[unit[1]]
        else:
            ch = unit
        offsets.append(m.start())
        chars.append(ch)
    offsets.append(end)
    found: list[tuple[int, int, bool]] = []
    i, n = 0, len(chars)
    while i < n:
        quote = chars[i]
        if quote not in _QUOTES or not _opens_literal(chars, i):
            i += 1
            continue
        j = i + 1
        while j < n and chars[j] != quote:
            j += 2 if chars[j] == "\\" else 1
        if j >= n:
            if partial and not closed and not broken and end == len(text):
                found.append((offsets[i + 1], len(text), False))
            break
        if j > i + 1:
            found.append((offsets[i + 1], offsets[j], True))
        i = j + 1
    return found


def content_spans(text: str, *, partial: bool = False) -> list[Span]:
    """(start, end) of the string contents inside state values in `text`, in order, not overlapping.

    With `partial` (`text` a state being generated), a literal still open at the end of the text is
    included, up to the end; without, only closed literals of closed values count.
    """
    spans: list[Span] = []
    for value in value_strings(text, partial=partial):
        start, end = value.body
        for a, b, _ in _literal_contents(text, start, end, value.closed, partial):
            if b > a:
                spans.append((a, b))
    return spans


def split_pieces(text: str) -> list[tuple[str, bool]]:
    """`text` cut into (piece, is_one_character_of_string_contents); joined, the pieces give `text` back."""
    pieces: list[tuple[str, bool]] = []
    at = 0
    for a, b in content_spans(text):
        if a > at:
            pieces.append((text[at:a], False))
        pieces.extend((ch, True) for ch in text[a:b])
        at = b
    if at < len(text) or not pieces:
        pieces.append((text[at:], False))
    return pieces


# ---- encoding --------------------------------------------------------------------------------------------


def _backend(tokenizer: Any) -> Any:
    """The `tokenizers.Tokenizer` behind a transformers fast tokenizer (or the tokenizer itself)."""
    from tokenizers import Tokenizer

    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise TypeError(f"{type(tokenizer).__name__} is not a fast tokenizer: value chars need one (tokenizer.json)")
    return backend


def encode_value_chars(tokenizer: Any, text: str) -> list[int]:
    """Token ids of `text` with string contents inside state values one token per character (see the module doc)."""
    words = [piece for piece, _ in split_pieces(text) if piece]
    if not words:
        return []
    return list(_backend(tokenizer).encode(words, is_pretokenized=True, add_special_tokens=False).ids)


def encode_text(tokenizer: Any, text: str, value_chars: bool | None = None) -> list[int]:
    """Token ids of model text (no BOS/EOS added), the way the model was trained: with value chars when
    `value_chars` (None: when the tokenizer carries the flag), else exactly ``tokenizer.encode(text)``."""
    from model.prompt.tokenizer import encode

    if value_chars is None:
        value_chars = value_chars_enabled(tokenizer)
    return encode_value_chars(tokenizer, text) if value_chars else encode(tokenizer, text)


def keeps_value_chars(text: str, added: str) -> bool:
    """Whether a generated token adding the characters `added` after the state text `text` keeps the value-chars
    tokenization: it lies wholly outside string contents, or it is one character inside them (a byte token
    of an unfinished character counts as that character, written U+FFFD)."""
    if not added:
        return True
    new = text + added
    start, end = len(text), len(new)
    for a, b in content_spans(new, partial=True):
        if a < end and b > start:
            return a <= start and end <= b and end - start == 1
    return True
