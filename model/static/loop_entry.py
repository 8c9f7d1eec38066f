"""A `for` loop over constants or over a shown sequence: which item its header binds next, so where a step from it lands.

`for t in ["Racecar", "hello"]:` certainly binds `t` and runs its body once the header runs, and the header's
target is not yet bound the first time the frame stops on it (a name the frame does not show). From such a stop a
Step Into or a Step Over lands on the body's first line: the loop cannot end, nothing is called (the items are
constants), the frame cannot return. Later stops on the header show the item the loop is at, where only this loop
binds its targets, no other loop of the scope holds it (so the header is not reached again by a new run) and the items'
reprs differ: the step then lands on the body with the next item, or after the last one leaves the loop (its ``else``,
or the line after it). `entering_loop` narrows a `FlowSet` so; the shipped model had stepped from such a header past
the loop, and later walked a Continue round it until its time ran out (`bench/programs/palindrome.py`). Nothing is run
and no value is computed: the rule reads the source and which names and reprs the previous stop shows.

A loop over a name the frame shows with a literal repr (``for it in items:`` with ``items`` shown as ``[1, 2]``; a
list, tuple, string or dict debugpy showed in full, in a program that defines no ``__repr__``/``__iter__``/
``__getitem__`` and no class with a base outside its own) is placed on its first run (the targets not shown yet):
its first item, or past the loop when the sequence is empty. Its later runs are placed like a loop over constants
(the item after the one the targets show, in the sequence the stop shows) where the body cannot have changed the
sequence: a tuple or string, or a list or dict the body never names and cannot reach
(`model.static.loop_mutation.body_keeps_sequence`). Loops over ``range`` (ints: constants, or names the stop shows as
ints that the body never rebinds) and ``enumerate`` (of a constant display or a shown sequence) are placed the same
way, from the items the stop's values give.

`item_literals` gives the values the step binds: the reprs of the next item (parsed by `ast.literal_eval`, never run),
which the step into the body certainly shows (`model.static.line_effects.kept_locals`).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache

from model.static.flow import EXIT, Continue, FlowSet, FlowUnavailable, program_flow
from model.static.frame_names import _header_lines
from model.static.loop_mutation import body_keeps_sequence
from model.static.plain_values import plain_containers
from model.static.reach import _rebound_names
from protocol.debugger import ActionKind, Frame, State, StopReason

NARROWED = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER})


def entering_loop(flow: FlowSet, program: str, previous: State, action: ActionKind) -> FlowSet:
    """`flow` (after `action` from `previous`) with its step stops narrowed where `previous` stops on the header of a
    `for` loop whose next item `loop_position` knows: the body's first line while one is left, the loop's way out (its
    ``else`` or the line after it) once the last has run, or at once over an empty sequence.
    Breakpoint and exception stops are left as they are; unchanged whenever any of that is not certain."""
    top = previous.top
    if flow.unconstrained or action not in NARROWED or top is None or top.file is not None:
        return flow
    if previous.finished or previous.reason is StopReason.EXCEPTION:
        return flow
    lines = next_lines(program, top)
    if not lines:
        return flow
    return replace(flow, step=[Continue(len(previous.frames) - 1, lines)], returned=frozenset())


def next_lines(program: str, top: Frame) -> frozenset[int]:
    """Where the step from a stop on a loop's header (`top`) lands when `loop_position` knows the next item: the body's
    first line while one is left, else the loop's way out; empty when unknown or when the way out leaves the frame."""
    position = loop_position(program, top)
    if position is None:
        return frozenset()
    try:
        scopes = program_flow(program).scope_at(top.name, top.line)
    except FlowUnavailable:
        return frozenset()
    if len(scopes) != 1:
        return frozenset()
    node = position.loop.node
    succ = scopes[0].succ.get(top.line, set())
    if position.index < position.length:
        return frozenset(succ & _header_lines(node.body[0], scopes[0].lines))
    last = node.body[-1]
    body = set(range(node.body[0].lineno, (last.end_lineno or last.lineno) + 1))
    out = frozenset(succ - body)
    return frozenset() if EXIT in out else out  # a return: the stop is the caller's, which this rule does not place


@dataclass(frozen=True)
class Position:
    """Where a loop's header stands: the `index` of the item it binds next, of `length`; `items` their values where
    known in order (None for a set)."""

    loop: _Loop
    index: int
    length: int
    items: tuple[object, ...] | None


def loop_position(program: str, top: Frame) -> Position | None:
    """The loop whose header `top` stops on and the item its header binds next (see the module docstring): over a display
    of constants, the first item when the frame does not show the targets yet, else one past the item whose reprs the
    targets show (where only this loop binds them, no other loop holds it, and the items' reprs tell them apart); over
    a name the frame shows with a literal repr, the same, its later runs only where the body keeps the sequence
    (`body_keeps_sequence`). None when not certain."""
    loop = _loops(program).get(top.line)
    if loop is None:
        return None
    shown = loop.names & set(top.locals)
    sequence = _sequence(program, loop, top, later=bool(shown))
    if sequence is None:
        return None
    length, items = sequence
    if not shown:
        return Position(loop, 0, length, items)
    if shown != loop.names or not loop.alone or items is None:
        return None
    reprs = [_unpacked(loop.node.target, item) for item in items]
    if not all(len(r) == len(loop.names) for r in reprs):
        return None
    current = {name: top.locals[name] for name in loop.names}
    matches = [i for i, r in enumerate(reprs) if r == current]
    return Position(loop, matches[0] + 1, length, items) if len(matches) == 1 else None


MAX_RANGE = 1_000  # items of a range a rule lists (a longer one is left to the model: each stop matches the targets against them)


def _sequence(program: str, loop: _Loop, top: Frame, later: bool) -> tuple[int, tuple[object, ...] | None] | None:
    """How many items the loop's header walks and their values in order, as the stop `top` shows what it iterates; on a
    `later` run (the targets shown), only where the body cannot have changed that (`body_keeps_sequence`)."""
    node = loop.node.iter
    if isinstance(node, ast.Name):
        items = _shown_sequence(program, loop, top, node.id, later)
        return None if items is None else (len(items), items)
    if isinstance(node, ast.Call):
        items = _builtin_items(program, loop, top, later)
        return None if items is None else (len(items), items)
    return _constant_items(loop.node)


def _shown_sequence(program: str, loop: _Loop, top: Frame, name: str, later: bool) -> tuple[object, ...] | None:
    """The items of the sequence `name` holds as `top` shows it (`shown_items`), when it is the one the loop walks."""
    text = top.locals.get(name)
    items = shown_items(text) if plain_containers(program) else None
    if items is None or (later and not body_keeps_sequence(program, loop.node, loop.scope, name, mutable=text[:1] in "[{")):  # type: ignore[index]
        return None
    return items


def _builtin_items(program: str, loop: _Loop, top: Frame, later: bool) -> tuple[object, ...] | None:
    """The items of ``range(...)`` over ints (constants or names the stop shows as ints) and of ``enumerate(seq)`` (a
    constant display or a shown sequence, a constant ``start``); None for any other call."""
    call: ast.Call = loop.node.iter  # type: ignore[assignment]
    func = call.func.id  # type: ignore[attr-defined]
    if func == "range":
        bounds = []
        for arg in call.args:
            if isinstance(arg, ast.Name):
                if not _int_repr(top.locals.get(arg.id)) or (later and not body_keeps_sequence(program, loop.node, loop.scope, arg.id, mutable=False)):
                    return None
                bounds.append(int(top.locals[arg.id]))
            else:
                value = _literal(arg) if _constant(arg) else None
                if not isinstance(value, int) or isinstance(value, bool):
                    return None
                bounds.append(value)
        try:
            numbers = range(*bounds)
        except (TypeError, ValueError):  # range(1, 2, 0)
            return None
        return tuple(numbers) if 0 < len(bounds) <= 3 and len(numbers) <= MAX_RANGE else None
    if func != "enumerate" or len(call.args) != 1:
        return None
    start = next((k.value for k in call.keywords if k.arg == "start"), ast.Constant(0))
    arg = call.args[0]
    if isinstance(arg, ast.Name):
        sequence: object = _shown_sequence(program, loop, top, arg.id, later)
    elif isinstance(arg, (ast.List, ast.Tuple)) or (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        sequence = _literal(arg)
    else:
        return None
    first = _literal(start)
    if not isinstance(sequence, (tuple, list, str)) or not isinstance(first, int) or isinstance(first, bool):
        return None
    return tuple(enumerate(sequence, first))


def _literal(node: ast.expr) -> object:
    """The value of a constant expression (parsed, never run), or None when it does not build (a set of lists)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def iterates_shown_sequence(program: str, top: Frame) -> bool:
    """Whether `top` stops on the header of a loop whose step runs no code of the program, on any run: over a name the
    frame shows as a list, tuple, string or dict (`shown_items`, in a program whose such reprs are the builtins'), or
    over a builtin that iterates such names or ints (`ITERATION_BUILTINS`: ``enumerate(rows)``, ``zip(a, b)``,
    ``range(n)``; the program never rebinds it, no keyword but ``enumerate``'s constant ``start``)."""
    loop = _loops(program).get(top.line)
    if loop is not None and isinstance(loop.node.iter, ast.Name) and plain_containers(program):
        return shown_items(top.locals.get(loop.node.iter.id)) is not None
    node = _iteration_loops(program).get(top.line)
    if node is None or not plain_containers(program):
        return False
    call: ast.Call = node.iter  # type: ignore[assignment]
    for arg in call.args:
        if isinstance(arg, ast.Name):
            shown = top.locals.get(arg.id)
            if shown_items(shown) is None and not (call.func.id == "range" and _int_repr(shown)):  # type: ignore[attr-defined]
                return False
        elif not _constant(arg):
            return False
    return True


def shown_targets(program: str, top: Frame) -> tuple[frozenset[str], frozenset[int]]:
    """For a stop on the header of a loop `iterates_shown_sequence` accepts: its target names and the lines a step lands
    on when it enters the body. Every item of such a loop is a plain value debugpy shows (an element or key of a shown
    literal, an int, or a tuple of those), so a step into the body shows every target. Empty anywhere else."""
    if not iterates_shown_sequence(program, top):
        return frozenset(), frozenset()
    node = _header_loop(program, top.line)
    names = _target_names(node.target) if node is not None else None
    if node is None or not names or any(n.startswith("__") for n in names):
        return frozenset(), frozenset()
    try:
        scopes = program_flow(program).scope_at(top.name, top.line)
    except FlowUnavailable:
        return frozenset(), frozenset()
    if len(scopes) != 1:
        return frozenset(), frozenset()
    succ = scopes[0].succ.get(top.line, set())
    return frozenset(names), frozenset(succ & _header_lines(node.body[0], scopes[0].lines))


def _header_loop(program: str, line: int) -> ast.For | None:
    """The one-line `for` header on `line` that `_loops` or `_iteration_loops` knows."""
    loop = _loops(program).get(line)
    return loop.node if loop is not None else _iteration_loops(program).get(line)


ITERATION_BUILTINS = frozenset({"enumerate", "zip", "reversed", "range", "sorted"})
PLACED_BUILTINS = frozenset({"enumerate", "range"})  # loops over them `loop_position` places (their items read from the stop)


@lru_cache(maxsize=32)
def _iteration_loops(program: str) -> dict[int, ast.For]:
    """Header line -> each one-line `for` header over a call of a builtin of `ITERATION_BUILTINS` that the program never
    binds, with names and constants for arguments (see `iterates_shown_sequence`), whose targets are plain names no
    statement deletes or declares `global` / `nonlocal`."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    bound = _rebound_names(tree) | {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    unsafe = _unsafe_targets(tree)
    out = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.For) or node.iter.lineno != node.lineno or node.iter.end_lineno != node.lineno:
            continue
        call = node.iter
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in ITERATION_BUILTINS):
            continue
        start = [k for k in call.keywords if k.arg == "start" and call.func.id == "enumerate" and _constant(k.value)]
        if call.func.id in bound or len(start) != len(call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        names = _target_names(node.target)
        if names and not names & unsafe and all(isinstance(a, ast.Name) or _constant(a) for a in call.args):
            out[node.lineno] = node
    return out


def _int_repr(text: str | None) -> bool:
    """Whether `text` is an int's repr (range's arguments)."""
    return text is not None and text.lstrip("-").isdigit()


def item_literals(program: str, top: Frame) -> dict[str, str]:
    """Target name -> the repr debugpy shows for it after the step from `top` on a loop's header binds its next item
    (`loop_position`; a string runs over its characters; a tuple target takes a tuple item's elements), for the names
    whose value `model.static.call_args.value_repr` writes in full. Empty anywhere else."""
    position = loop_position(program, top)
    if position is None or position.items is None or position.index >= position.length:
        return {}
    return _unpacked(position.loop.node.target, position.items[position.index])


def _constant_items(node: ast.For) -> tuple[int, tuple[object, ...] | None] | None:
    """How many items a loop over constants runs, and their values in order (None for a set: its hash order); None
    when the display does not build (a set of lists raises)."""
    try:
        value = ast.literal_eval(node.iter)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(node.iter, ast.Set):
        return len(value), None
    return len(value), tuple(value)


def shown_items(text: str | None) -> tuple[object, ...] | None:
    """The items of a list, tuple, string or dict (its keys) whose shown repr is `text`, when debugpy showed it in
    full (`model.static.call_args.value_repr` would write it so, and no string in it holds "..." as a cut one does)."""
    from model.static.call_args import value_repr

    if text is None or len(text) > 10_000 or text[:1] not in "[({'\"":
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, (list, tuple, str, dict)) or value_repr(value) != text or "..." in text:
        return None
    return tuple(value)


def _unpacked(target: ast.expr, item: object) -> dict[str, str]:
    """Name -> repr for `target` bound to the literal value `item` (a name, or a tuple / list of names over a tuple or
    list of as many items)."""
    from model.static.call_args import value_repr

    if isinstance(target, ast.Name):
        text = value_repr(item)
        return {} if text is None else {target.id: text}
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(item, (tuple, list)) and len(item) == len(target.elts):
        out: dict[str, str] = {}
        for inner, value in zip(target.elts, item):
            out |= _unpacked(inner, value)
        return out
    return {}


@dataclass(frozen=True)
class _Loop:
    """A one-line `for` header over constants: its target `names`, the loop, and whether it is `alone` (no other loop
    of its scope holds it, no other statement of its scope binds its targets)."""

    names: frozenset[str]
    node: ast.For = field(compare=False)
    alone: bool
    scope: ast.AST = field(compare=False)  # the module or function whose own code holds the loop


@lru_cache(maxsize=32)
def _loops(program: str) -> dict[int, _Loop]:
    """Header line -> each one-line `for` header over a non-empty display of constants, over a plain name, or over
    ``range`` / ``enumerate`` as `_iteration_loops` accepts them, whose target names are plain names no statement
    deletes or declares `global` / `nonlocal` anywhere in the program."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    unsafe = _unsafe_targets(tree)
    builtin = _iteration_loops(program)
    out = {}
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        for node, looped in _scope_loops(scope):
            over_name = isinstance(node.iter, ast.Name) and bool(node.body) and _target_names(node.target) is not None
            counted = node.lineno in builtin and builtin[node.lineno].iter.func.id in PLACED_BUILTINS  # type: ignore[attr-defined]
            if not (constant_loop(node) or over_name or counted) or node.iter.lineno != node.lineno or node.iter.end_lineno != node.lineno:
                continue
            names = _target_names(node.target) or set()
            if not names or names & unsafe or any(n.startswith("__") for n in names):
                continue
            alone = not looped and not (_bound_in(scope, node.target) & names)
            out[node.lineno] = _Loop(frozenset(names), node, alone, scope)
    return out


def _unsafe_targets(tree: ast.Module) -> set[str]:
    """Names some statement deletes or declares `global` / `nonlocal`: no loop target the rules here place."""
    unsafe: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            unsafe.update(node.names)
        elif isinstance(node, ast.Delete):
            unsafe.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return unsafe


def _scope_loops(scope: ast.AST) -> Iterator[tuple[ast.For, bool]]:
    """Each `for` of `scope`'s own code, with whether another loop of the scope holds it."""
    todo: list[tuple[ast.AST, bool]] = [(child, False) for child in ast.iter_child_nodes(scope)]
    while todo:
        node, looped = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.For):
            yield node, looped
        inner = looped or isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        todo.extend((child, inner) for child in ast.iter_child_nodes(node))


def _bound_in(scope: ast.AST, target: ast.expr) -> set[str]:
    """Names bound in `scope`'s own code (parameters included) by anything but `target`."""
    mine = {id(n) for n in ast.walk(target)}
    out: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        out |= {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)}
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in mine:
            out.add(node.id)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        todo.extend(ast.iter_child_nodes(node))
    return out


def constant_loop(node: ast.For) -> bool:
    """A `for` with a body over a non-empty display of constants, binding plain names (its header runs no code)."""
    return bool(node.body) and _target_names(node.target) is not None and _non_empty_constants(node.iter)


def _target_names(target: ast.expr) -> set[str] | None:
    """The names a loop target binds when it is a name or a (nested) tuple / list of names; None otherwise."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        names: set[str] = set()
        for element in target.elts:
            inner = _target_names(element)
            if inner is None:
                return None
            names |= inner
        return names
    return None


def _non_empty_constants(node: ast.expr) -> bool:
    """A non-empty list, tuple or set display of constants (nested displays too), or a non-empty str / bytes constant."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes)) and len(node.value) > 0
    return isinstance(node, (ast.List, ast.Tuple, ast.Set)) and bool(node.elts) and all(_constant(e) for e in node.elts)


def _constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    return isinstance(node, (ast.List, ast.Tuple, ast.Set)) and all(_constant(e) for e in node.elts)

