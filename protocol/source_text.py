"""A Python program's text, decoded the way the interpreter decodes it.

Python reads source files as UTF-8 unless a PEP 263 coding declaration (``# -*- coding: latin-1 -*-``)
says otherwise, skips a UTF-8 byte-order mark, and translates ``\\r\\n`` and ``\\r`` to ``\\n``. Every
part that shows, records or prompts with a program's lines uses these functions, so line numbers and
texts agree with what the real debugger executed. This module imports nothing of ours.
"""
from __future__ import annotations

import io
import tokenize
from pathlib import Path


def decode_source(data: bytes, errors: str = "strict") -> str:
    """The text of Python source bytes.

    Raises UnicodeDecodeError for bytes the declared (or default UTF-8) encoding cannot decode, and
    SyntaxError for an unknown or contradictory coding declaration, unless ``errors`` is lenient
    (``"replace"``), in which case an unusable declaration falls back to UTF-8.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        if errors == "strict":
            data.decode("utf-8-sig")  # undecodable first lines: say so with the byte's position
            raise
        encoding = "utf-8-sig"
    text = data.decode(encoding, errors)  # "utf-8-sig" drops the byte-order mark
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_source(path: str | Path, errors: str = "strict") -> str:
    """The text of the Python file at ``path`` (OSError if it cannot be read; see `decode_source`)."""
    return decode_source(Path(path).read_bytes(), errors)
