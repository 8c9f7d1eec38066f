"""What kind of value each function can return, from its source alone (nothing is run).

`return_kinds(program)` maps a function name to the builtin kinds (`model.static.value_kinds.KINDS`) its
return value can have, for the functions where every ``return`` is typed by these rules (others
are left out: unknown):

- literals and displays (``'a'``, ``f'..'``, ``[..]``, comprehensions), ``not``, ``in`` / ``is``;
- calls of builtins the program does not rebind (``len`` int, ``str`` str, ``sorted`` list, ...), of
  methods of a receiver of known kind (``s.upper()`` str when ``s`` is a str, ``''.join`` str), and of
  the program's own functions (their kinds);
- operators on known kinds (``str + str`` str, ``int / int`` float, ...), ``a if c else b`` and
  ``a or b`` (either side);
- a local name: every binding of it in the function (assignments, augmented assignments, loop
  targets over a string) typed; parameters, globals and anything else are unknown;
- falling off the end (or a bare ``return``) returns None; and None is always possible, because
  debugpy shows ``(return) f: None`` when f's frame is left by an exception.

Operators with one side unknown assume the other side's builtin behaviour (``s + x`` is a str when
``s`` is one) only in a *closed* program: no imports and no class defining an operator method, so
every value is a builtin or a plain user object. Generators, coroutines and lambdas are left out.
The rules are checked against recorded return values (tests/test_return_kinds.py). `local_kinds(program)` gives
the same kinds for a function's locals (every binding typed), checked against recorded locals.
"""
from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from model.static.call_args import value_repr

Kinds = frozenset[str]
STR, INT, FLOAT, BOOL, NONE = frozenset({"str"}), frozenset({"int"}), frozenset({"float"}), frozenset({"bool"}), frozenset({"None"})
LIST, TUPLE, DICT, SET, BYTES = frozenset({"list"}), frozenset({"tuple"}), frozenset({"dict"}), frozenset({"set"}), frozenset({"bytes"})
NUMBER = frozenset({"int", "float"})

_BUILTIN_CALLS: dict[str, Kinds] = {
    **dict.fromkeys(("len", "ord", "hash", "id"), INT),
    **dict.fromkeys(("str", "chr", "repr", "ascii", "format", "hex", "oct", "bin"), STR),
    **dict.fromkeys(("list", "sorted"), LIST),
    "dict": DICT, "tuple": TUPLE, "set": SET, "frozenset": frozenset({"frozenset"}), "bytes": BYTES, "float": FLOAT,
    "int": INT,
    **dict.fromkeys(("bool", "isinstance", "issubclass", "callable", "hasattr", "all", "any"), BOOL),
}

_STR_METHODS: dict[str, Kinds] = {
    **dict.fromkeys(("upper", "lower", "capitalize", "casefold", "swapcase", "title", "strip", "lstrip", "rstrip",
                     "replace", "center", "ljust", "rjust", "zfill", "expandtabs", "format", "format_map", "join",
                     "translate", "removeprefix", "removesuffix"), STR),  # fmt: skip
    **dict.fromkeys(("split", "rsplit", "splitlines"), LIST),
    **dict.fromkeys(("partition", "rpartition"), TUPLE),
    **dict.fromkeys(("count", "find", "rfind", "index", "rindex"), INT),
    **dict.fromkeys(("startswith", "endswith", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier",
                     "islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper"), BOOL),  # fmt: skip
    "encode": BYTES,
}
_METHODS: dict[str, dict[str, Kinds]] = {
    "str": _STR_METHODS,
    "list": {"copy": LIST, "count": INT, "index": INT,
             **dict.fromkeys(("append", "extend", "insert", "remove", "reverse", "sort", "clear"), NONE)},
    "dict": {"copy": DICT, "popitem": TUPLE, **dict.fromkeys(("update", "clear"), NONE)},
    "set": {**dict.fromkeys(("copy", "union", "intersection", "difference", "symmetric_difference"), SET),
            **dict.fromkeys(("issubset", "issuperset", "isdisjoint"), BOOL),
            **dict.fromkeys(("add", "remove", "discard", "clear", "update", "intersection_update",
                             "difference_update", "symmetric_difference_update"), NONE)},  # fmt: skip
    "tuple": {"count": INT, "index": INT},
    "int": {"bit_length": INT, "bit_count": INT},
    "bytes": {"decode": STR, "hex": STR},
}
_CONSTANT_KINDS = {str: "str", bytes: "bytes", bool: "bool", int: "int", float: "float", type(None): "None"}
_ARITH_INT = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)
_REFLECTED = frozenset(f"__{op}__" for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                                                 "and", "or", "xor", "lshift", "rshift")
                       for op in (name, "r" + name))  # fmt: skip


def return_kinds(program: str) -> dict[str, Kinds]:
    """Function name -> the kinds its return value can have (only the functions whose every return is typed)."""
    return dict(_analyse(program))


def return_literals(program: str) -> dict[str, frozenset[str]]:
    """Function name -> the reprs its return value can show, for the functions defined once under their name (not a
    generator, coroutine or lambda) whose every ``return`` returns a constant (``"A"``, ``3``, ``-1.5``, ``None``,
    ``True``) debugpy shows in full: those reprs and ``None`` (a bare ``return``, falling off the end, or an exception
    leaving the frame). Nothing is run; the values are the source's own literals."""
    return dict(_literals(program))


@lru_cache(maxsize=64)
def _literals(program: str) -> tuple[tuple[str, frozenset[str]], ...]:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    counts = Counter(n.name for n in functions if not isinstance(n, ast.Lambda))
    out = []
    for node in functions:
        if not isinstance(node, ast.FunctionDef) or counts[node.name] != 1:
            continue
        reprs = {"None"}
        for sub in _own_nodes(node):
            if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await)):
                break
            if isinstance(sub, ast.Return) and sub.value is not None:
                text = _constant_repr(sub.value)
                if text is None:
                    break
                reprs.add(text)
        else:
            out.append((node.name, frozenset(reprs)))
    return tuple(sorted(out))


def _constant_repr(node: ast.expr) -> str | None:
    """The repr debugpy shows for a constant expression (a literal, or a negated number), or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        return value_repr(-value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return value_repr(node.value)
    return None


def local_kinds(program: str) -> dict[str, dict[str, Kinds]]:
    """Function name -> {local: the kinds its value can have}, for the locals every binding of which is typed by the
    rules above (a local's value is always one of its bindings'); only functions defined once under their name (a
    frame is named by its function), never a name some function declares ``nonlocal`` (it may rebind it); and
    ``"<module>"`` -> the same for the module's globals (names a function declares ``global`` left out)."""
    return {name: dict(kinds) for name, kinds in _locals(program)}


@lru_cache(maxsize=64)
def _locals(program: str) -> tuple[tuple[str, tuple[tuple[str, Kinds], ...]], ...]:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    world = _World.of(tree)
    shared = {name for node in ast.walk(tree) if isinstance(node, ast.Nonlocal) for name in node.names}
    scopes = [(name, _Function(world, defs[0])) for name, defs in sorted(world.functions.items()) if len(defs) == 1]
    module = _module_scope(world, tree)
    if module is not None:
        scopes.append(("<module>", module))
    out = []
    for name, function in scopes:
        function._settle()
        typed = tuple(sorted((n, k) for n, k in function.env.items() if k and n not in shared))
        if typed:
            out.append((name, typed))
    return tuple(out)


_DYNAMIC = frozenset({"globals", "vars", "exec", "eval", "__import__"})  # ways to bind a module's name unseen


def _module_scope(world: _World, tree: ast.Module) -> "_Function | None":
    """The module's globals as one more scope: its own bindings, any name a function declares ``global`` left
    untyped; a function defined once (and nothing else bound to its name) is called as such. None when the program
    may bind globals dynamically."""
    if any(isinstance(n, ast.Name) and n.id in _DYNAMIC for n in ast.walk(tree)):
        return None
    body = ast.FunctionDef(name="<module>", args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                           kw_defaults=[], kwarg=None, defaults=[]), body=tree.body, decorator_list=[], returns=None)  # fmt: skip
    scope = _Function(world, body)
    declared = {name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names}
    defined = Counter(node.name for node in tree.body if isinstance(node, ast.FunctionDef))
    for name, count in defined.items():
        sites = scope.bindings.get(name, [])
        if count == 1 and len(sites) == 1 and name not in declared:
            del scope.bindings[name]  # a plain function: its calls are typed by its returns
            scope.opaque.discard(name)
    scope.opaque |= declared
    return scope


@lru_cache(maxsize=64)
def _analyse(program: str) -> tuple[tuple[str, Kinds], ...]:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    world = _World.of(tree)
    out: dict[str, Kinds | None] = {}
    for name, defs in world.functions.items():
        kinds: set[str] = set()
        for node in defs:
            found = world.returns_of(node)
            if found is None:
                kinds = set()
                break
            kinds |= found
        if kinds:
            out[name] = frozenset(kinds) | NONE  # a frame left by an exception shows None (pydevd's return event)
    return tuple(sorted((k, v) for k, v in out.items() if v))


@dataclass
class _World:
    """The program-wide facts the rules need: its functions, rebound builtin names, and whether it is closed."""

    functions: dict[str, list[ast.FunctionDef]]
    rebound: frozenset[str]
    closed: bool
    _busy: set[int] = field(default_factory=set)
    _memo: dict[int, Kinds | None] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: ast.Module) -> "_World":
        functions: dict[str, list[ast.FunctionDef]] = {}
        bound: set[str] = set()
        closed = True
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                functions.setdefault(node.name, []).append(node)
            if isinstance(node, (ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bound.add(node.id)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                closed = False
                bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            if isinstance(node, ast.FunctionDef) and node.name in _REFLECTED:
                closed = False
        bound |= {name for name in functions if name in _BUILTIN_CALLS or hasattr(builtins, name)}  # a def shadowing a builtin
        return cls(functions, frozenset(bound), closed)

    def returns_of(self, node: ast.FunctionDef) -> Kinds | None:
        """The kinds `node` can return, or None when some return is untyped (or it is a generator)."""
        key = id(node)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return None  # recursion: typed by its other returns only if those settle it; be safe
        self._busy.add(key)
        try:
            result = _Function(self, node).returns()
        finally:
            self._busy.discard(key)
        self._memo[key] = result
        return result

    def builtin(self, name: str) -> bool:
        return name not in self.rebound and hasattr(builtins, name)


class _Function:
    """One function's locals and returns."""

    def __init__(self, world: _World, node: ast.FunctionDef) -> None:
        self.world = world
        self.node = node
        self.body = list(_own_nodes(node))
        self.params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        declared = {n for s in self.body if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
        self.bindings: dict[str, list[ast.AST]] = {}
        for sub in self.body:
            for name, site in _bindings(sub):
                self.bindings.setdefault(name, []).append(site)
        self.opaque = declared | self.params | {n for n, sites in self.bindings.items() if any(s is None for s in sites)}
        self.env: dict[str, Kinds | None] = {}

    def returns(self) -> Kinds | None:
        if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in self.body):
            return None
        self._settle()
        kinds: set[str] = set()
        for sub in self.body:
            if isinstance(sub, ast.Return):
                found = NONE if sub.value is None else self.expr(sub.value)
                if not found:
                    return None
                kinds |= found
        if _falls_off(self.node.body):
            kinds |= NONE
        return frozenset(kinds)

    def _settle(self) -> None:
        """Locals' kinds to a fixed point: start from nothing, add each binding's kind until nothing changes."""
        names = [n for n in self.bindings if n not in self.opaque]
        self.env = {n: frozenset() for n in names}
        for _ in range(8):
            changed = False
            for name in names:
                current = self.env[name]
                if current is None:
                    continue
                new: set[str] | None = set(current)
                for site in self.bindings[name]:
                    found = self._site(name, site)
                    if found is None:
                        new = None
                        break
                    new |= found
                value = None if new is None else frozenset(new)
                if value != current:
                    self.env[name], changed = value, True
            if not changed:
                break
        else:
            self.env = {n: None for n in names}
        for name, kinds in list(self.env.items()):
            if kinds is not None and not kinds:
                self.env[name] = None  # never bound to a typed value (e.g. only in its own loop): unknown

    def _site(self, name: str, site: ast.AST) -> Kinds | None:
        if isinstance(site, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            return self.expr(site.value) if site.value is not None else None
        if isinstance(site, ast.AugAssign):
            return self._binop(self.env.get(name), site.op, site.value)
        if isinstance(site, ast.For):  # the target of `for ch in <str>` or `for i in range(..)`
            it = site.iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and self.world.builtin("range"):
                return INT
            return STR if self.expr(it) == STR else None
        return None

    # ------------------------------------------------------------------ expressions

    def expr(self, node: ast.expr) -> Kinds | None:
        """The kinds `node` evaluates to, or None (unknown)."""
        if isinstance(node, ast.Constant):
            kind = _CONSTANT_KINDS.get(type(node.value))
            return frozenset({kind}) if kind else None
        simple = {ast.JoinedStr: STR, ast.List: LIST, ast.ListComp: LIST, ast.Tuple: TUPLE, ast.Dict: DICT,
                  ast.DictComp: DICT, ast.Set: SET, ast.SetComp: SET}  # fmt: skip
        if type(node) in simple:
            return simple[type(node)]
        if isinstance(node, ast.Name):
            return self.env.get(node.id) if node.id not in self.opaque else None
        if isinstance(node, ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BoolOp):
            return _union(self.expr(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return _union((self.expr(node.body), self.expr(node.orelse)))
        if isinstance(node, ast.BinOp):
            return self._binop(self.expr(node.left), node.op, node.right)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        return None

    def _unary(self, node: ast.UnaryOp) -> Kinds | None:
        if isinstance(node.op, ast.Not):
            return BOOL
        operand = self.expr(node.operand)
        if operand is None or not operand <= NUMBER | BOOL:
            return None
        if isinstance(node.op, ast.Invert):
            return INT if operand <= INT | BOOL else None
        return frozenset("int" if k == "bool" else k for k in operand)

    def _compare(self, node: ast.Compare) -> Kinds | None:
        if all(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in node.ops):
            return BOOL
        sides = [self.expr(e) for e in (node.left, *node.comparators)]
        return BOOL if all(s is not None for s in sides) else None

    def _binop(self, left: Kinds | None, op: ast.operator, right_node: ast.expr) -> Kinds | None:
        right = self.expr(right_node)
        if left is None or (right is None and not self.world.closed):
            return None
        if not left or right == frozenset():
            return frozenset()  # not settled yet (`_settle`)
        out: set[str] = set()
        for a in left:
            for b in (right if right is not None else (None,)):
                kind = _binop_kind(a, op, b)
                if kind is None:
                    return None
                out |= kind
        return frozenset(out) if out else None

    def _call(self, node: ast.Call) -> Kinds | None:
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in _BUILTIN_CALLS and self.world.builtin(func.id):
                return _BUILTIN_CALLS[func.id]
            if func.id in ("abs", "round") and self.world.builtin(func.id) and node.args and not node.keywords:
                arg = self.expr(node.args[0])
                if arg is not None and arg <= NUMBER | BOOL:
                    return INT if func.id == "round" and len(node.args) == 1 else frozenset("int" if k == "bool" else k for k in arg)
                return None
            defs = self.world.functions.get(func.id)
            if defs and func.id not in self.opaque and func.id not in self.bindings and func.id not in self.world.rebound:
                return _union(self.world.returns_of(d) for d in defs)
            return None
        if isinstance(func, ast.Attribute):
            receiver = self.expr(func.value)
            if not receiver:
                return receiver
            return _union(_METHODS.get(kind, {}).get(func.attr) for kind in receiver)
        return None

    def _subscript(self, node: ast.Subscript) -> Kinds | None:
        value = self.expr(node.value)
        if not value:
            return value
        if isinstance(node.slice, ast.Slice):
            return value if value <= STR | LIST | TUPLE | BYTES else None
        if value == STR:
            return STR
        if value == BYTES:
            return INT
        return None


def _binop_kind(a: str, op: ast.operator, b: str | None) -> Kinds | None:
    """The kind of ``a <op> b`` for builtin kinds (b None: unknown, in a closed program), or None."""
    numeric = {"int", "bool", "float"}
    if a in ("str", "bytes"):
        if isinstance(op, ast.Add) and b in (a, None):
            return frozenset({a})
        if isinstance(op, ast.Mult) and b in ("int", "bool", None):
            return frozenset({a})
        if isinstance(op, ast.Mod):
            return frozenset({a})
        return None
    if a in ("list", "tuple"):
        if isinstance(op, ast.Add) and b in (a, None):
            return frozenset({a})
        if isinstance(op, ast.Mult) and b in ("int", "bool", None):
            return frozenset({a})
        return None
    if a in ("set", "dict") and isinstance(op, (ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor)):
        if a == "dict" and not isinstance(op, ast.BitOr):
            return None
        return frozenset({a}) if b in (a, None) else None
    if a in numeric:
        if b is None:
            return None if isinstance(op, ast.Mult) else _number_result(a, op, None)
        if b in ("str", "bytes", "list", "tuple") and isinstance(op, ast.Mult):
            return frozenset({b})
        if b in numeric:
            return _number_result(a, op, b)
    return None


def _number_result(a: str, op: ast.operator, b: str | None) -> Kinds | None:
    if isinstance(op, ast.Div):
        return FLOAT
    if isinstance(op, ast.Pow):  # int ** -1 is a float; a negative float ** 0.5 a complex
        return NUMBER if a in ("int", "bool") and b in ("int", "bool") else None
    if not isinstance(op, _ARITH_INT):
        return None
    if b is None:
        return NUMBER if a != "float" else FLOAT
    if "float" in (a, b):
        return FLOAT if not isinstance(op, (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)) else None
    if a == b == "bool" and isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return BOOL
    return INT


def _union(parts: Iterator[Kinds | None] | tuple[Kinds | None, ...] | list[Kinds | None]) -> Kinds | None:
    """The union of `parts`; None when one is unknown (empty: nothing settled yet, see `_Function._settle`)."""
    out: set[str] = set()
    for part in parts:
        if part is None:
            return None
        out |= part
    return frozenset(out)


def _own_nodes(node: ast.FunctionDef) -> Iterator[ast.AST]:
    """Every node of the function's body, not descending into nested functions, classes, lambdas or comprehensions."""
    todo: list[ast.AST] = list(node.body)
    while todo:
        sub = todo.pop()
        yield sub
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue  # the name it binds; its body is another scope
        if isinstance(sub, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            todo.extend(n for n in ast.walk(sub) if isinstance(n, ast.NamedExpr))  # walrus binds in the function
            continue
        todo.extend(ast.iter_child_nodes(sub))


def _bindings(node: ast.AST) -> Iterator[tuple[str, ast.AST | None]]:
    """(name, binding site) for what `node` binds in its function; site None: an untyped binding."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                yield target.id, node
            else:
                yield from ((n.id, None) for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
        yield node.target.id, (node if not isinstance(node, ast.AnnAssign) or node.value is not None else None)
    elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
        yield node.target.id, node
    elif isinstance(node, ast.For):
        if isinstance(node.target, ast.Name):
            yield node.target.id, node
        else:
            yield from ((n.id, None) for n in ast.walk(node.target) if isinstance(n, ast.Name))
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name, None
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        yield from (((a.asname or a.name).split(".")[0], None) for a in node.names)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name, None
    elif isinstance(node, (ast.With, ast.AsyncWith, ast.AsyncFor)):
        for item in getattr(node, "items", []) or []:
            if item.optional_vars is not None:
                yield from ((n.id, None) for n in ast.walk(item.optional_vars) if isinstance(n, ast.Name))
        if isinstance(node, ast.AsyncFor):
            yield from ((n.id, None) for n in ast.walk(node.target) if isinstance(n, ast.Name))
    elif isinstance(node, ast.Delete):
        yield from ((t.id, None) for t in node.targets if isinstance(t, ast.Name))
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name, None
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest, None


def _falls_off(body: list[ast.stmt]) -> bool:
    """Whether control may reach the end of `body` (conservative: only a last return / raise, or an if whose branches all end, ends it)."""
    if not body:
        return True
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return False
    if isinstance(last, ast.If):
        return _falls_off(last.body) or _falls_off(last.orelse)
    if isinstance(last, ast.While) and isinstance(last.test, ast.Constant) and last.test.value is True:
        return any(isinstance(n, ast.Break) for n in ast.walk(last))
    return True
