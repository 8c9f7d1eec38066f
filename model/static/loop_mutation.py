"""Whether a loop's body can change the list or dict its header iterates (a plain name), read from the source alone.

`for price, qty in items:` walks `items` by position, so the item its header binds next is the one after the item its
targets show only while the body leaves `items` as it was: no item added, removed or replaced. `body_keeps_sequence`
says so when nothing the body runs can reach a list or dict it was not given as a fresh container of its own:

* the body never names the iterated name (so it neither rebinds nor mutates it by that name);
* the program defines no special method but ``__init__`` (operators, ``print`` and comparisons then run no code of
  the program), no decorator but ``dataclass``, ``staticmethod`` and ``classmethod`` (no property runs code where an
  attribute is read), and the body calls no class;
* every call is a builtin of `SAFE_BUILTINS` the program never rebinds, a method of a string constant or of a *fresh*
  local (one every binding of which, in its scope, is a display, a comprehension or a constant: never a parameter or
  another name, so never an alias of the iterated object), or a function of the program that passes the same test
  (its own calls too) and reads no module-level name but functions and builtins; a function named anywhere else (a
  ``key=`` passed on) passes the same test, and no class is named (its ``__init__`` may run);
* subscript assignments and deletions touch fresh locals only.

It is deliberately narrow: anything else (a method of an object that came from elsewhere, ``global``, a lambda)
answers False, and `model.static.loop_entry` then does not place the loop's later runs. Nothing is run.
"""
from __future__ import annotations

import ast
import builtins
from functools import lru_cache

from model.static.first_call import own_nodes
from model.static.reach import _rebound_names

SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "chr", "divmod", "enumerate", "float", "format", "hash", "int", "isinstance", "len",
    "list", "dict", "max", "min", "ord", "pow", "print", "range", "repr", "reversed", "round", "set", "sorted", "str",
    "sum", "tuple", "zip",
})
PLAIN_DECORATORS = frozenset({"dataclass", "staticmethod", "classmethod"})  # they add no code that changes a list
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


def body_keeps_sequence(program: str, loop: ast.For, scope: ast.AST, name: str, *, mutable: bool = True) -> bool:
    """Whether, after running `loop`'s body (a loop of `scope`'s own code), `name` still holds what the loop's header
    read from it, as it was (see the module docstring): for a list or dict (`mutable`), that the body never names it
    and cannot reach it; for an immutable value (a tuple, a string, an int of ``range``), that the body never binds it
    and no function declares it ``global`` / ``nonlocal``. False whenever unsure."""
    facts = _facts(program)
    if facts is None:
        return False
    body = [node for statement in loop.body for node in ast.walk(statement)]
    if not mutable:
        return name not in facts.declared and not any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in body)
    if not facts.plain or any(isinstance(n, ast.Name) and n.id == name for n in body):
        return False
    return _harmless(body, _fresh_names(scope), facts, set())


class _Facts:
    """What the checks need of the whole program: its module-level functions by name, its classes, the names it binds,
    the names some function declares ``global`` / ``nonlocal``, and whether it is `plain`: no special method but
    ``__init__``, no decorator but `PLAIN_DECORATORS`, each module-level function defined once and never rebound."""

    def __init__(self, tree: ast.Module) -> None:
        self.functions = {n.name: n for n in tree.body if isinstance(n, _SCOPES)}
        self.classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        self.declared = {name for n in ast.walk(tree) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        self.bound = _rebound_names(tree) | {n.name for n in ast.walk(tree) if isinstance(n, (*_SCOPES, ast.ClassDef))}
        defined = [n.name for n in tree.body if isinstance(n, _SCOPES)]
        stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        self.plain = len(defined) == len(set(defined)) and not (self.functions.keys() & stored) and not any(
            _special(node) for node in ast.walk(tree))


def _special(node: ast.AST) -> bool:
    """A special method other than ``__init__``, or a decorator that may add code (a property runs where an attribute
    is only read)."""
    if isinstance(node, _SCOPES) and node.name.startswith("__") and node.name.endswith("__") and node.name != "__init__":
        return True
    return isinstance(node, (*_SCOPES, ast.ClassDef)) and any(_decorator_name(d) not in PLAIN_DECORATORS for d in node.decorator_list)


@lru_cache(maxsize=32)
def _facts(program: str) -> _Facts | None:
    """The program's `_Facts`, or None when it cannot be read."""
    try:
        return _Facts(ast.parse(program))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _decorator_name(node: ast.expr) -> str | None:
    """``dataclass`` for ``@dataclass``, ``@dataclass(...)`` and ``@dataclasses.dataclass``; None for other shapes."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "dataclasses":
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _fresh_names(scope: ast.AST) -> frozenset[str]:
    """Names of `scope`'s own code every binding of which is a display, a comprehension or a constant (parameters,
    ``global`` / ``nonlocal`` names and every other binding rule a name out)."""
    fresh: set[str] = set()
    spoiled: set[str] = set()
    if isinstance(scope, _SCOPES):
        spoiled |= {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)}
    made: set[int] = set()  # the target nodes of fresh bindings
    nodes = own_nodes(scope)
    for node in nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            spoiled.update(node.names)
        elif isinstance(node, ast.Assign) and _fresh_value(node.value) and all(isinstance(t, ast.Name) for t in node.targets):
            fresh.update(t.id for t in node.targets)  # type: ignore[union-attr]
            made.update(id(t) for t in node.targets)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None and _fresh_value(node.value):
            fresh.add(node.target.id)
            made.add(id(node.target))
    spoiled |= {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in made}
    return frozenset(fresh - spoiled)


def _fresh_value(node: ast.expr) -> bool:
    return isinstance(node, (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp, ast.Constant))


def _harmless(nodes: list[ast.AST], fresh: frozenset[str], facts: _Facts, seen: set[str]) -> bool:
    """Whether the code of `nodes` changes no list or dict but the `fresh` locals' (see the module docstring); the
    functions it calls are checked once each (`seen`)."""
    for node in nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.Lambda, *_SCOPES, ast.ClassDef, ast.Await, ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            if not (isinstance(node.value, ast.Name) and node.value.id in fresh):
                return False
        if isinstance(node, ast.Call) and not _harmless_call(node, fresh, facts, seen):
            return False
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):  # a function passed on may be called there
            if node.id in facts.classes or (node.id in facts.functions and not _harmless_function(node.id, facts, seen)):
                return False
    return True


def _harmless_call(call: ast.Call, fresh: frozenset[str], facts: _Facts, seen: set[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        receiver = func.value
        return isinstance(receiver, ast.Constant) and isinstance(receiver.value, str) or (
            isinstance(receiver, ast.Name) and receiver.id in fresh)
    if not isinstance(func, ast.Name):
        return False
    if func.id in SAFE_BUILTINS and func.id not in facts.bound and hasattr(builtins, func.id):
        return True
    return func.id in facts.functions and _harmless_function(func.id, facts, seen)


def _harmless_function(name: str, facts: _Facts, seen: set[str]) -> bool:
    """Whether calling the program's function `name` changes no list or dict it did not make (each checked once)."""
    if name in seen:
        return True
    seen.add(name)
    function = facts.functions[name]
    return _reads_no_module_data(function, facts) and _harmless(
        [node for statement in function.body for node in ast.walk(statement)], _fresh_names(function), facts, seen)


def _reads_no_module_data(function: ast.FunctionDef | ast.AsyncFunctionDef, facts: _Facts) -> bool:
    """Whether every name `function` reads is its own, a module-level function or a builtin: it reaches no list or
    dict but what it is given and makes."""
    own = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    own |= {n.id for n in own_nodes(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for node in own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in own:
            if node.id not in facts.functions and not (hasattr(builtins, node.id) and node.id not in facts.bound):
                return False
    return True
