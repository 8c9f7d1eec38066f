"""Which lines of a program can hold a breakpoint: the lines its compiled code objects execute.

The program is compiled, never run. A line is executable when some code object (the module, every
function, class body and comprehension nested in it) has an instruction on it, as `co_lines`
reports. Blank lines, comments and the inside of multi-line strings are not.
"""
from __future__ import annotations

from types import CodeType


def executable_lines(source: str, filename: str = "<program>") -> set[int]:
    """1-based lines that hold an instruction; empty when the source does not compile."""
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    lines: set[int] = set()
    stack: list[CodeType] = [code]
    while stack:
        current = stack.pop()
        lines.update(line for _, _, line in current.co_lines() if line is not None and line > 0)
        stack.extend(const for const in current.co_consts if isinstance(const, CodeType))
    return lines


def describe_unverified(line: int, executable: set[int]) -> str:
    """The message shown on a breakpoint that cannot be hit, pointing at the nearest executable line."""
    after = sorted(n for n in executable if n > line)
    hint = f" (the next executable line is {after[0]})" if after else ""
    return f"line {line} has no code to stop on{hint}"
