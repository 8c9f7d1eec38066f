"""The order of line events inside a statement that spans several lines, read from its bytecode.

CPython (3.11) reports a line event when the frame executes an instruction on another line than the instruction it
executed before (or jumps back). A statement whose code has no jump, no yield and no instruction without a line (an
assignment, an expression, a return spread over lines: a list of calls, a call with its arguments on their own lines)
therefore reports its lines in one fixed order: the runs of equal line numbers in its instructions' order. examples'
``points = [Sample('left', 1e-05), ...]`` over lines 8-13 reports 9, 10, 11, 12, then 8 (the list is built and bound
on the first line, after its items); the control-flow grammar allowed any of those lines at each step, and the widened
model wrote 8 for the first.

`in_statement_order` narrows a step's stops in a frame that continues: entering such a statement from outside it, the
frame stops first on the first run's line; from a run whose line occurs once and is not the last, on the next run's
line, and no line outside it unless the statement is under a ``try`` or ``with`` of its frame (an exception may go on
there); stops back on a calling line after a return stay; pushes of called frames, breakpoints and exception stops are
left alone. Nothing is run:
the program is compiled, never executed.
"""
from __future__ import annotations

import ast
import dis
import types
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache

from model.static.flow import Continue, FlowSet, Shape
from protocol.debugger import ActionKind, State

STEPS = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN})
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)
_SUSPENDING = ("YIELD", "SEND", "GET_AWAITABLE", "RETURN_GENERATOR", "BEFORE_WITH", "SETUP", "PUSH_EXC_INFO")


def in_statement_order(flow: FlowSet, program: str, previous: State, action: ActionKind) -> FlowSet:
    """`flow` with each continuing frame's step stops inside a multi-line statement put in its line order (module doc)."""
    if flow.unconstrained or action not in STEPS or previous.finished or not previous.frames:
        return flow
    runs = statement_runs(program)
    if not runs:
        return flow
    outermost_first = list(reversed(previous.frames))
    step = [_ordered(shape, outermost_first, runs) for shape in flow.step]
    return replace(flow, step=step)


def _ordered(shape: Shape, frames: list, runs: dict[int, Statement]) -> Shape:
    if not isinstance(shape, Continue) or shape.depth >= len(frames):
        return shape
    frame = frames[shape.depth]
    if frame.file is not None:
        return shape
    on_top = shape.depth == len(frames) - 1
    lines = set(shape.lines)
    here = runs.get(frame.line)
    if here is not None and not here.guarded and here.order.count(frame.line) == 1 and here.order[-1] != frame.line:
        allowed = {here.order[here.order.index(frame.line) + 1]} | (set() if on_top else {frame.line})  # a caller: back on its line
        lines &= allowed  # the statement cannot end or be left in this frame before its next run
    for statement in {runs[line] for line in lines if line in runs}:
        if not statement.first <= frame.line <= statement.last:
            inside = {line for line in lines if statement.first <= line <= statement.last}
            lines = (lines - inside) | (inside & {statement.order[0]})
    return replace(shape, lines=frozenset(lines)) if lines else shape


@dataclass(frozen=True)
class Statement:
    """A statement over lines `first`..`last` whose line events come in `order`; `guarded`: inside a ``try`` or
    ``with`` of its scope (an exception may go on in the frame after any of its lines)."""

    first: int
    last: int
    order: tuple[int, ...]
    guarded: bool


@lru_cache(maxsize=32)
def statement_runs(program: str) -> dict[int, Statement]:
    """{line: its statement} for every line of each statement spanning several lines whose order is fixed (module
    doc); {} when the program does not compile."""
    try:
        tree = ast.parse(program)
        code = compile(program, "<program>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return {}
    by_scope = _code_by_scope(code)
    found: dict[int, Statement] = {}
    for scope, body in _scopes(tree):
        key = _scope_key(scope)
        unit = by_scope.get(key)
        if unit is None:
            continue
        statements = list(_simple_statements(body, False))
        covering = Counter(line for stmt, _ in statements for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
        for stmt, guarded in statements:
            last = stmt.end_lineno or stmt.lineno
            if last == stmt.lineno or any(covering[line] > 1 for line in range(stmt.lineno, last + 1)):
                continue  # one line, or lines shared with another statement
            order = _order(unit, stmt)
            if order is not None:
                for line in range(stmt.lineno, last + 1):
                    found[line] = Statement(stmt.lineno, last, order, guarded)
    return found


def _order(code: list[dis.Instruction], stmt: ast.stmt) -> tuple[int, ...] | None:
    """The line events of `stmt` (its instructions' runs of lines), None where its code may jump, suspend or hold an
    instruction without a line, or is not one block."""
    start, end = (stmt.lineno, stmt.col_offset), (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
    indexes = [i for i, ins in enumerate(code) if _within(ins, start, end)]
    if not indexes or indexes != list(range(indexes[0], indexes[-1] + 1)):
        return None
    lines: list[int] = []
    for ins in (code[i] for i in indexes):
        line = ins.positions.lineno if ins.positions else None
        if line is None or ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs or ins.opname.startswith(_SUSPENDING):
            return None
        if not lines or lines[-1] != line:
            lines.append(line)
    return tuple(lines) if len(lines) > 1 else None


def _within(ins: dis.Instruction, start: tuple[int, int], end: tuple[int, int]) -> bool:
    p = ins.positions
    if p is None or p.lineno is None or p.col_offset is None or p.end_lineno is None or p.end_col_offset is None:
        return False
    return start <= (p.lineno, p.col_offset) and (p.end_lineno, p.end_col_offset) <= end


def _code_by_scope(code: types.CodeType) -> dict[tuple[str, int], list[dis.Instruction]]:
    """Each code object's instructions by (name, first line); a key two code objects share is left out."""
    found: dict[tuple[str, int], list[dis.Instruction]] = {}
    shared: set[tuple[str, int]] = set()
    todo = [code]
    while todo:
        current = todo.pop()
        key = (current.co_name, current.co_firstlineno)
        if key in found:
            shared.add(key)
        found[key] = list(dis.get_instructions(current))
        todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return {k: v for k, v in found.items() if k not in shared}


def _scopes(tree: ast.Module):
    yield tree, tree.body
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node, node.body


def _scope_key(scope: ast.AST) -> tuple[str, int]:
    if isinstance(scope, ast.Module):
        return ("<module>", 1)
    first = scope.decorator_list[0].lineno if scope.decorator_list else scope.lineno  # type: ignore[attr-defined]
    return (scope.name, first)  # type: ignore[attr-defined]


def _simple_statements(body: list[ast.stmt], guarded: bool):
    """(statement, guarded) for the simple statements of a scope's body, nested blocks included (not nested scopes);
    guarded: under a ``try`` or ``with`` of the scope."""
    for stmt in body:
        if isinstance(stmt, _SIMPLE):
            yield stmt, guarded
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner = guarded or isinstance(stmt, (ast.Try, ast.With, ast.AsyncWith)) or type(stmt).__name__ == "TryStar"
        for name in ("body", "orelse", "finalbody"):
            yield from _simple_statements(getattr(stmt, name, []) or [], inner)
        for handler in getattr(stmt, "handlers", []) or []:
            yield from _simple_statements(handler.body, inner)
        for case in getattr(stmt, "cases", []) or []:
            yield from _simple_statements(case.body, inner)
