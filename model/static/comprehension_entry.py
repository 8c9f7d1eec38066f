"""A comprehension's frame shows its iterator as ``.0``: which kind it is, read from the source and the shown values.

``[rec.sensor for rec in samples]`` runs in a frame of its own (`<listcomp>` in Python 3.11) whose first stop shows one
local, ``.0``, the iterator of ``samples`` that the calling line built: ``<list_iterator object at 0x?>`` when ``samples``
is shown as a list. The kind follows from the iterable alone: a name the frame shows as a list, tuple, dict or ASCII
string (in a program whose reprs of that shape are the builtins': `model.static.plain_values.plain_containers`), a
shown dict's ``items()``/``keys()``/``values()``, ``zip``/``enumerate``/``map``/``filter``/``range`` calls the program
does not rebind, a display of constants (which Python folds into a tuple), a shown generator (its own iterator). The
shipped model wrote ``tuple_iterator`` for lists it had never seen in a comprehension. Nothing is run: a kind is read
from a repr's syntax. `comprehension_entries` gives, per comprehension frame name the line can start once, its ``.0``;
for a list, set or dict comprehension that reads no variable of the function around it, that is the whole first stop
(it cannot be suspended); otherwise only ``.0`` (a resumed generator shows its loop names too, a closure its free
variables).
"""
from __future__ import annotations

import ast
import re
import symtable
from functools import lru_cache

from model.static.call_args import KnownEntry
from model.static.flow import COMPREHENSIONS
from model.static.line_nodes import statements_at
from protocol.debugger import State

# a builtin call in a comprehension's first `for` -> the repr of the iterator it gives (an object that is its own iterator)
CALL_ITERATORS = {"zip": "<zip object at 0x?>", "enumerate": "<enumerate object at 0x?>", "map": "<map object at 0x?>",
                  "filter": "<filter object at 0x?>", "range": "<range_iterator object at 0x?>"}  # fmt: skip
SHOWN_ITERATORS = {list: "<list_iterator object at 0x?>", tuple: "<tuple_iterator object at 0x?>",
                   dict: "<dict_keyiterator object at 0x?>", str: "<str_ascii_iterator object at 0x?>"}  # fmt: skip
DICT_VIEWS = {"items": "<dict_itemiterator object at 0x?>", "keys": "<dict_keyiterator object at 0x?>",
              "values": "<dict_valueiterator object at 0x?>"}  # fmt: skip
GENERATOR_RE = re.compile(r"<generator object [A-Za-z_][A-Za-z0-9_.<>]* at 0x\?>")


def comprehension_entries(program: str, previous: State) -> dict[str, KnownEntry]:
    """Comprehension frame name -> its known ``.0`` for a Step Into from `previous` (see the module docstring)."""
    if previous.finished or not previous.frames or previous.frames[0].file is not None:
        return {}
    top = previous.frames[0]
    if top.name in COMPREHENSIONS.values():
        return {}  # the iterables of comprehensions nested in this one are read in its frame: left to the model
    out = {}
    closures = _closures(program, top.line)
    for name, iterable in _line_comprehensions(program, top.line):
        text = _iterator_repr(program, iterable, top.locals)
        if text is not None:
            out[name] = KnownEntry({".0": text}, complete=name != "<genexpr>" and name not in closures)
    return out


@lru_cache(maxsize=256)
def _closures(program: str, line: int) -> frozenset[str]:
    """Frame names of the comprehensions on `line` that read a variable of the function around them (a free variable,
    which their frame shows among its locals); all of them when the program's symbol table cannot be read."""
    try:
        todo = [symtable.symtable(program, "<program>", "exec")]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(COMPREHENSIONS.values())
    out = set()
    while todo:
        table = todo.pop()
        todo.extend(table.get_children())
        if table.get_lineno() == line and f"<{table.get_name()}>" in COMPREHENSIONS.values():
            if isinstance(table, symtable.Function) and table.get_frees():
                out.add(f"<{table.get_name()}>")
    return frozenset(out)


@lru_cache(maxsize=256)
def _line_comprehensions(program: str, line: int) -> tuple[tuple[str, ast.expr], ...]:
    """(frame name, first iterable) of each comprehension of the one-line statement on `line` that is not inside
    another comprehension or a lambda, for the frame names that occur once there."""
    try:
        statements = [n for n in statements_at(program).get(line, ()) if n.lineno == line]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    found: list[tuple[str, ast.expr]] = []
    if len(statements) != 1 or isinstance(statements[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return ()
    stmt = statements[0]
    if hasattr(stmt, "body") and not isinstance(stmt, (ast.If, ast.While, ast.For)):
        return ()  # with / try headers: left alone
    heads = [stmt.test] if isinstance(stmt, (ast.If, ast.While)) else [stmt.iter] if isinstance(stmt, ast.For) else [stmt]
    if any((h.end_lineno or h.lineno) != line for h in heads):
        return ()
    for head in heads:
        found.extend(_outer_comprehensions(head))
    names = [name for name, _ in found]
    return tuple((name, iterable) for name, iterable in found if names.count(name) == 1)


def _outer_comprehensions(node: ast.AST) -> list[tuple[str, ast.expr]]:
    if isinstance(node, ast.Lambda):
        return []
    kind = COMPREHENSIONS.get(type(node))
    if kind is not None:
        return [(kind, node.generators[0].iter)] + _outer_comprehensions(node.generators[0].iter)  # type: ignore[attr-defined]
    out: list[tuple[str, ast.expr]] = []
    for child in ast.iter_child_nodes(node):
        out.extend(_outer_comprehensions(child))
    return out


def _iterator_repr(program: str, node: ast.expr, shown: dict[str, str]) -> str | None:
    """The repr of ``iter(node)`` as debugpy shows it, when its kind is certain; None otherwise."""
    from model.static.loop_entry import shown_items
    from model.static.plain_values import plain_containers

    if isinstance(node, ast.Name):
        text = shown.get(node.id)
        if text is not None and GENERATOR_RE.fullmatch(text):
            return text
        if text is None or not plain_containers(program) or shown_items(text) is None:
            return None
        value = ast.literal_eval(text)
        if isinstance(value, str) and not value.isascii():
            return None
        return SHOWN_ITERATORS.get(type(value))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CALL_ITERATORS:
        return CALL_ITERATORS[node.func.id] if node.func.id not in _bound_names(program) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DICT_VIEWS and not node.args:
        owner = node.func.value
        if isinstance(owner, ast.Name) and plain_containers(program) and isinstance(_shown_value(shown.get(owner.id)), dict):
            return DICT_VIEWS[node.func.attr]
        return None
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(isinstance(e, ast.Constant) for e in node.elts):
        return SHOWN_ITERATORS[tuple]  # a display of constants is folded into a tuple constant
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value and node.value.isascii():
        return SHOWN_ITERATORS[str]
    return None


def _shown_value(text: str | None) -> object:
    from model.static.loop_entry import shown_items

    if text is None or shown_items(text) is None:
        return None
    return ast.literal_eval(text)


@lru_cache(maxsize=32)
def _bound_names(program: str) -> frozenset[str]:
    """Every name the program binds (so a builtin of that name may not be the builtin)."""
    from model.static.reach import _rebound_names

    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(CALL_ITERATORS)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return frozenset(_rebound_names(tree) | defined)
