"""String literals written with double quotes, as much of the code people write is (Black's style).

The generators write every string literal as ``repr`` does, in single quotes, so a model trained on their programs has
never read ``"apple"`` in a program whose frames show ``'apple'``. `double_quoted(source)` rewrites the single-quoted
literals of a program with double quotes where that changes nothing but the spelling (no ``"`` and no escaped quote
inside, not triple-quoted); the program runs exactly as before. `tracegen synth --double-quotes P` applies it to that
share of the generated programs (`tracegen.dataset.SynthConfig.double_quotes`).
"""
from __future__ import annotations

import io
import re
import tokenize

_PREFIX = re.compile(r"^([rRbBuUfF]*)'(.*)'$", re.DOTALL)


def _swapped(token: str) -> str | None:
    """`token` (a STRING token) with double quotes, or None when it is not a plain single-quoted literal."""
    match = _PREFIX.match(token)
    if match is None or token.startswith(match.group(1) + "'''"):
        return None
    body = match.group(2)
    if '"' in body or "\\'" in body or "\n" in body:
        return None
    return f'{match.group(1)}"{body}"'


def double_quoted(source: str) -> str:
    """`source` with its single-quoted string literals in double quotes (unchanged where it does not tokenize)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    pieces, last = [], 0
    for tok in tokens:
        if tok.type != tokenize.STRING or tok.start[0] != tok.end[0]:
            continue
        swapped = _swapped(tok.string)
        if swapped is None:
            continue
        start = offsets[tok.start[0] - 1] + tok.start[1]
        pieces.append(source[last:start] + swapped)
        last = start + len(tok.string)
    return "".join(pieces) + source[last:]
