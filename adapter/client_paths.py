"""Source paths as the client writes them: plain paths, or file URIs when initialize says pathFormat "uri".

DAP lets a client ask for ``pathFormat: "uri"``; every ``source.path`` then travels as a URI both
ways. Incoming paths are read leniently (a ``file:`` URI is understood whatever was negotiated).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname


def path_from_client(text: str) -> str:
    """The absolute file path a client's ``source.path`` names (a plain path or a ``file:`` URI)."""
    if text.startswith("file:"):
        parsed = urlparse(text)
        local = url2pathname(unquote(parsed.path)) if parsed.netloc in ("", "localhost") else text
        return str(Path(local).resolve())
    return str(Path(text).resolve())


def path_to_client(path: str | Path, as_uri: bool) -> str:
    """`path` as the client asked to receive paths: a ``file://`` URI or the plain absolute path."""
    absolute = Path(path).resolve()
    return absolute.as_uri() if as_uri else str(absolute)
