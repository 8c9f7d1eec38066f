"""What a function's body says about the kind of each argument, as evidence to rank answers by (nothing is run).

`model.static.param_kinds` narrows ``inv_step_call``'s answer by what the body *certainly* evaluates; this
module gathers softer evidence from *every* use of a parameter the body makes before rebinding it,
in any branch or loop: ``text.endswith(suffix)`` says that ``suffix`` is a str or a tuple,
``'-'.join(items)`` that ``items`` holds strs, ``range(n)`` that ``n`` is an int, ``x + 'a'`` that
``x`` is a str. A use in a branch that never ran proves nothing, so the evidence is not a
constraint: `model.decode.rerank` prefers, among several drawn answers, the one that contradicts fewer
uses (`violations`), and its likelihood decides among equals.

Each use is a `Use`: the parameter, the builtin kinds (`model.static.value_kinds.KINDS`) its value may have
for that use to succeed, and whether it applies to the value itself or to each of its elements (the
items of a list, tuple or set, the keys of a dict, the characters of a str). Only closed programs
(`model.static.param_kinds.closed_program`: no imports, no classes) are read, where every value is a builtin
one. A parameter the body tests with ``isinstance``/``type`` or reuses as a loop variable gives no
evidence, nor do uses inside a ``try`` body (a failure there may be caught) or after the parameter
is rebound by a statement the body always runs.
"""
from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from model.static.param_kinds import bound_names, closed_program
from model.static.value_kinds import KIND_TYPES, KINDS, repr_kind

NUMBER = frozenset({"int", "float", "bool"})
INTEGER = frozenset({"int", "bool"})
INDEX = frozenset({"int", "bool", "None"})
STRING = frozenset({"str", "bytes"})
CONTAINER = frozenset({"str", "bytes", "list", "tuple", "dict", "set", "frozenset"})
SEQUENCE = frozenset({"str", "bytes", "list", "tuple", "dict"})  # what reversed() takes
ALL_KINDS = frozenset(KINDS)  # a use any builtin value passes says nothing

# builtins whose one argument must be iterable / an int / a str / a number
_ITERATING = frozenset({"sorted", "list", "tuple", "set", "frozenset", "enumerate", "sum", "any", "all", "zip", "iter", "map", "filter"})
_CALL_KINDS: dict[str, frozenset[str]] = {"range": INTEGER, "chr": INTEGER, "ord": STRING, "abs": NUMBER, "reversed": SEQUENCE}
# methods only the str family has (or, for insert, only list): the kinds of their positional arguments
_METHOD_ARGS: dict[str, tuple[frozenset[str], ...]] = {
    "endswith": (STRING | {"tuple"}, INDEX, INDEX),
    "startswith": (STRING | {"tuple"}, INDEX, INDEX),
    "replace": (STRING, STRING, INTEGER),
    "split": (STRING | {"None"}, INTEGER),
    "rsplit": (STRING | {"None"}, INTEGER),
    "strip": (STRING | {"None"},),
    "lstrip": (STRING | {"None"},),
    "rstrip": (STRING | {"None"},),
    "partition": (STRING,),
    "rpartition": (STRING,),
    "removeprefix": (STRING,),
    "removesuffix": (STRING,),
    "center": (INTEGER, STRING),
    "ljust": (INTEGER, STRING),
    "rjust": (INTEGER, STRING),
    "zfill": (INTEGER,),
    "expandtabs": (INTEGER,),
    "insert": (INTEGER,),
    "find": (STRING, INDEX, INDEX),
    "rfind": (STRING, INDEX, INDEX),
}
# methods whose first argument must be iterable (dict.fromkeys, list.extend, set.union...)
_ITERABLE_ARGS = frozenset({"fromkeys", "extend", "union", "intersection", "difference", "symmetric_difference",
                            "issubset", "issuperset", "isdisjoint", "intersection_update", "difference_update"})


@dataclass(frozen=True)
class _Scope:
    """What the reading of one function knows: the builtins the program rebinds, and the kinds of its fixed locals."""

    shadowed: frozenset[str]
    known: dict[str, frozenset[str]]


@dataclass(frozen=True)
class Use:
    """One use of a parameter: the kinds its value (or, with `elements`, each element) may have for it to succeed."""

    param: str
    kinds: frozenset[str]
    elements: bool = False

    def allows(self, value: object) -> bool | None:
        """Whether a value (a Python object read from a repr) fits; None when its kind says nothing."""
        if not self.elements:
            kind = _kind(value)
            return None if kind is None else kind in self.kinds
        items = _elements(value)
        if items is None:
            return None
        return all(_kind(item) in self.kinds for item in items if _kind(item) is not None)


def _kind(value: object) -> str | None:
    kind = "None" if value is None else type(value).__name__
    return kind if kind in KIND_TYPES else None


def _elements(value: object) -> list[object] | None:
    return list(value) if isinstance(value, (list, tuple, set, frozenset, dict, str)) else None


def attribute_kinds(attr: str) -> frozenset[str]:
    """The builtin kinds whose values have attribute `attr`."""
    return frozenset(kind for kind, t in KIND_TYPES.items() if hasattr(t, attr))


def function_uses(node: ast.FunctionDef | ast.AsyncFunctionDef, shadowed: frozenset[str] = frozenset()) -> tuple[Use, ...]:
    """Every distinct use of `node`'s parameters before they are rebound (see the module docstring)."""
    args = node.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    firsts = _first_stores(node)
    tested = _type_tested(node) | (_loop_targets(node) & params)  # a parameter reused as a loop variable: its uses are of other values
    in_try = _try_nodes(node)
    stores = _store_counts(node)
    loops = _element_names(node, params, firsts, stores)
    scope = _Scope(shadowed, _fixed_locals(node, params | set(loops), shadowed, stores))
    uses: dict[Use, None] = {}
    for name_node, parent in _name_loads(node):
        if id(name_node) in in_try:
            continue
        name = name_node.id
        if name in params:
            target, elements = name, False
        elif name in loops:
            target, elements = loops[name], True
        else:
            continue
        if target in tested or name in tested or (not elements and _after(name_node, firsts.get(name))):
            continue
        for kinds in _use_kinds(name_node, parent, scope):
            if kinds and kinds != ALL_KINDS:
                uses[Use(target, kinds, elements)] = None
        if not elements:
            for kinds in _element_kinds(name_node, parent, scope):
                uses[Use(target, kinds, True)] = None
    return tuple(uses)


def violations(uses: Iterable[Use], values: Mapping[str, str]) -> int:
    """How many uses the arguments (name -> repr) contradict; a repr that is not a literal contradicts nothing."""
    parsed: dict[str, object] = {}
    for name, text in values.items():
        if repr_kind(text) is None:
            continue
        try:
            parsed[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return sum(1 for use in uses if use.param in parsed and use.allows(parsed[use.param]) is False)


@lru_cache(maxsize=64)
def program_uses(program: str) -> dict[tuple[str, int], tuple[Use, ...]]:
    """Per (function name, line of its first body statement): its uses; empty for a program that is not closed."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    if not closed_program(tree):
        return {}
    shadowed = bound_names(tree)
    out: dict[tuple[str, int], tuple[Use, ...]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            try:
                out[(node.name, node.body[0].lineno)] = function_uses(node, shadowed)
            except RecursionError:
                continue
    return out


def uses_at(program: str, name: str, line: int) -> tuple[Use, ...]:
    """The uses of the function `name` whose first stop is `line` (its first body line, or a later one after a docstring)."""
    table = program_uses(program)
    if (name, line) in table:
        return table[(name, line)]
    earlier = [uses for (fname, first), uses in table.items() if fname == name and first <= line]
    return earlier[0] if len(earlier) == 1 else ()


# ------------------------------------------------------------------------------------ reading the body
def _own_nodes(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(child, parent) pairs under `node`, not entering nested functions, classes or lambdas."""
    todo: list[ast.AST] = [node]
    while todo:
        parent = todo.pop()
        for child in ast.iter_child_nodes(parent):
            yield child, parent
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                todo.append(child)


def _name_loads(node: ast.AST) -> Iterator[tuple[ast.Name, ast.AST]]:
    for child, parent in _own_nodes(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            yield child, parent
        elif isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Name):
            yield child.target, child  # x += v reads x


def _first_stores(node: ast.AST) -> dict[str, tuple[int, int]]:
    """Per name: the position of its first rebinding in the body (a store, a del, an augmented assignment) by a
    statement the body always runs (a rebinding in a branch or a loop may not run: the argument's uses still count)."""
    firsts: dict[str, tuple[int, int]] = {}
    top = [stmt for stmt in getattr(node, "body", []) if not isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.TryStar, ast.Match))]
    for child, parent in (pair for stmt in top for pair in _own_nodes(stmt)):
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            position = (child.lineno, child.col_offset)
            if isinstance(parent, (ast.AugAssign, ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                position = (parent.end_lineno or child.lineno, parent.end_col_offset or 0)  # the value is read first
            if child.id not in firsts or position < firsts[child.id]:
                firsts[child.id] = position
    return firsts


def _after(name: ast.Name, first: tuple[int, int] | None) -> bool:
    return first is not None and (name.lineno, name.col_offset) > first


def _type_tested(node: ast.AST) -> set[str]:
    names = set()
    for child, _ in _own_nodes(node):
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in ("isinstance", "type", "callable", "hasattr"):
            names.update(a.id for a in child.args[:1] if isinstance(a, ast.Name))
    return names


def _loop_targets(node: ast.AST) -> set[str]:
    """Names a ``for`` loop or a comprehension binds."""
    return {n.id for child, _ in _own_nodes(node) if isinstance(child, (ast.For, ast.AsyncFor, ast.comprehension))
            for n in ast.walk(child.target) if isinstance(n, ast.Name)}  # fmt: skip


def _try_nodes(node: ast.AST) -> set[int]:
    """ids of every node inside the body of a ``try`` (not its handlers)."""
    inside: set[int] = set()
    for child, _ in _own_nodes(node):
        if isinstance(child, (ast.Try, ast.TryStar)):
            for stmt in child.body:
                inside.update(id(n) for n in ast.walk(stmt))
    return inside


def _store_counts(node: ast.AST) -> Counter[str]:
    """How many times the body binds or deletes each name."""
    return Counter(c.id for c, _ in _own_nodes(node) if isinstance(c, ast.Name) and isinstance(c.ctx, (ast.Store, ast.Del)))


def _element_names(node: ast.AST, params: set[str], firsts: dict[str, tuple[int, int]], stores: Counter[str]) -> dict[str, str]:
    """Loop variables bound once, directly over a parameter not yet rebound: variable -> parameter."""
    targets: dict[str, list[str]] = {}
    for child, _ in _own_nodes(node):
        if isinstance(child, (ast.For, ast.comprehension)) and isinstance(child.target, ast.Name) and isinstance(child.iter, ast.Name):
            if child.iter.id in params and not _after(child.iter, firsts.get(child.iter.id)):
                targets.setdefault(child.target.id, []).append(child.iter.id)
    return {var: iters[0] for var, iters in targets.items() if len(iters) == 1 and stores[var] == 1 and var not in params}


def _constant_kinds(node: ast.AST, scope: _Scope | None = None) -> frozenset[str] | None:
    """The kind of a literal operand (a constant, an f-string, a display) or of a fixed local, None for anything else."""
    if isinstance(node, ast.Name) and scope is not None:
        return scope.known.get(node.id)
    if isinstance(node, ast.Constant):
        kind = "None" if node.value is None else type(node.value).__name__
        return frozenset({kind}) if kind in KIND_TYPES else None
    if isinstance(node, ast.JoinedStr):
        return frozenset({"str"})
    if isinstance(node, (ast.List, ast.ListComp)):
        return frozenset({"list"})
    if isinstance(node, ast.Tuple):
        return frozenset({"tuple"})
    return None


def _use_kinds(name: ast.Name, parent: ast.AST, scope: _Scope) -> Iterator[frozenset[str]]:
    """The kinds `name`'s value may have for the use `parent` makes of it to succeed."""
    if isinstance(parent, ast.Attribute) and parent.value is name:
        yield attribute_kinds(parent.attr)
    elif isinstance(parent, ast.Subscript) and parent.value is name:
        yield attribute_kinds("__getitem__" if isinstance(parent.ctx, ast.Load) else "__setitem__")
    elif isinstance(parent, ast.Slice):
        yield INDEX
    elif isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is name:
        yield attribute_kinds("__iter__")
    elif isinstance(parent, ast.Call) and name in parent.args:
        yield from _argument_kinds(name, parent, scope.shadowed)
    elif isinstance(parent, (ast.BinOp, ast.AugAssign)):
        yield from _operand_kinds(name, parent, scope)
    elif isinstance(parent, ast.Compare):
        yield from _compared_kinds(name, parent, scope)
    elif isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd, ast.Invert)):
        yield NUMBER if not isinstance(parent.op, ast.Invert) else INTEGER


def _argument_kinds(name: ast.Name, call: ast.Call, shadowed: frozenset[str]) -> Iterator[frozenset[str]]:
    index = call.args.index(name)
    if isinstance(call.func, ast.Name) and call.func.id not in shadowed and len(call.args) == 1 and not call.keywords:
        builtin = call.func.id
        if builtin == "len":
            yield attribute_kinds("__len__")
        elif builtin in _ITERATING or (builtin in ("min", "max")):
            yield attribute_kinds("__iter__")
        elif builtin in _CALL_KINDS:
            yield _CALL_KINDS[builtin]
    elif isinstance(call.func, ast.Name) and call.func.id == "range" and "range" not in shadowed:
        yield INTEGER
    elif isinstance(call.func, ast.Attribute):
        method = call.func.attr
        if (method == "join" or method in _ITERABLE_ARGS) and index == 0:
            yield attribute_kinds("__iter__")
        elif method in _METHOD_ARGS and index < len(_METHOD_ARGS[method]):
            yield _METHOD_ARGS[method][index]


def _element_kinds(name: ast.Name, parent: ast.AST, scope: _Scope) -> Iterator[frozenset[str]]:
    """Kinds each element of `name`'s value must have (``sep.join(name)``: strs)."""
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == "join" and parent.args[:1] == [name]:
        receiver = _constant_kinds(parent.func.value)
        yield receiver if receiver in (frozenset({"str"}), frozenset({"bytes"})) else STRING


def _operand_kinds(name: ast.Name, node: ast.BinOp | ast.AugAssign, scope: _Scope) -> Iterator[frozenset[str]]:
    if isinstance(node, ast.AugAssign):
        other, left = node.value, True
    else:
        other, left = (node.right, True) if node.left is name else (node.left, False)
    kinds = _constant_kinds(other, scope)
    if kinds is None:
        return
    op = node.op
    if isinstance(op, ast.Add):
        yield NUMBER if kinds <= NUMBER else kinds
    elif isinstance(op, (ast.Sub, ast.Div, ast.FloorDiv, ast.Pow)) and kinds <= NUMBER:
        yield NUMBER
    elif isinstance(op, ast.Mod) and left and kinds <= NUMBER:
        yield NUMBER
    elif isinstance(op, ast.Mult) and kinds & STRING | kinds & {"list", "tuple"}:
        yield INTEGER
    elif isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)) and kinds <= INTEGER:
        yield INTEGER


def _compared_kinds(name: ast.Name, node: ast.Compare, scope: _Scope) -> Iterator[frozenset[str]]:
    operands = [node.left, *node.comparators]
    position = next(i for i, o in enumerate(operands) if o is name)
    for i, op in enumerate(node.ops):
        left, right = operands[i], operands[i + 1]
        if position not in (i, i + 1):
            continue
        other = right if position == i else left
        if isinstance(op, (ast.In, ast.NotIn)):
            if position == i + 1:
                yield CONTAINER
            elif _constant_kinds(other, scope) == frozenset({"str"}):
                yield frozenset({"str"})
        elif isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            kinds = _constant_kinds(other, scope)
            if kinds is not None:
                yield NUMBER if kinds <= NUMBER else kinds


# what a fixed local holds: a builtin conversion, a str method that returns an index or a str, a literal
_CONVERSIONS: dict[str, frozenset[str]] = {"str": frozenset({"str"}), "len": frozenset({"int"}), "int": frozenset({"int"}),
                                           "float": frozenset({"float"}), "list": frozenset({"list"}), "sorted": frozenset({"list"}),
                                           "dict": frozenset({"dict"}), "set": frozenset({"set"}), "tuple": frozenset({"tuple"}),
                                           "repr": frozenset({"str"}), "chr": frozenset({"str"}), "ord": frozenset({"int"})}  # fmt: skip
_INDEX_METHODS = frozenset({"find", "rfind", "index", "rindex", "count"})


def _fixed_locals(node: ast.AST, excluded: set[str], shadowed: frozenset[str], stores: Counter[str]) -> dict[str, frozenset[str]]:
    """Locals bound once in the body, by a plain assignment whose value's kind is plain (``n = len(xs)``: int)."""
    values = {target.id: parent.value for target, parent in _own_nodes(node)
              if isinstance(target, ast.Name) and isinstance(parent, ast.Assign) and parent.targets == [target]}  # fmt: skip
    out = {}
    for name, value in values.items():
        if stores[name] != 1 or name in excluded:
            continue
        kinds = _value_kinds(value, shadowed)
        if kinds is not None:
            out[name] = kinds
    return out


def _value_kinds(value: ast.expr, shadowed: frozenset[str]) -> frozenset[str] | None:
    literal = _constant_kinds(value)
    if literal is not None:
        return literal
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return frozenset({"dict"})
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _CONVERSIONS and value.func.id not in shadowed:
        return _CONVERSIONS[value.func.id]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _INDEX_METHODS:
        return frozenset({"int"})
    return None
