"""Which function a Step Into from the start of a line certainly enters: the line's first call, when nothing before it
can run code.

Python evaluates a call's function, then its arguments left to right, then calls. In
``checks.append(is_palindrome(t))`` nothing runs before ``is_palindrome(t)`` (a name, an attribute of a list, a name),
and ``is_palindrome`` is a plain function of the program: the first code that runs after a line event there is that
function's first line, so a Step Into stops there (or on an exception on the way). The shipped model answered such a
Step Into with a frame of a generator expression of another function (`bench/programs/palindrome.py`), which the
control-flow grammar allowed because a call of library code (``append``) may resume a generator.

`first_call` reads the source only (nothing is run, no value is computed): the statement that starts on the line, in
evaluation order, until its first call. It answers only where every part evaluated before that call is quiet
(constants, names, displays of them, attributes where the program defines nothing that attribute access runs, and
operators, comparisons and subscripts of those where it defines no dunder: session 35) and the
call is ``name(...)`` of a function the program defines once under that name with ``def`` (no decorator, not a generator
or coroutine, never rebound). A list, set or dict comprehension runs in a frame of its own, entered as soon as its first
iterable is evaluated and iterated: where that iterable is quiet and iterating it runs no code of the program (no
``__iter__`` or ``__getitem__`` of its own, no class with a base outside it: `plain_values.plain_containers`), the
comprehension is the first frame entered (`bench/programs/temps.py`'s ``hot = [r for r in readings if r > 25]``: the
shipped model stepped to the next line and rewrote ``readings``; a generator expression is only created there, its frame
runs later). A call ``C(...)`` of a class of the program enters its ``__init__`` first where nothing else can run before:
the class bound once by an undecorated ``class`` statement without keywords (no metaclass), its bases such classes of
the program (or ``object``), one each, none defining or assigning ``__new__`` or ``__init__`` by assignment, and the
nearest ``__init__`` a plain ``def`` (session 38: the demo's ``counter = Counter()`` was stepped over by the widened
model). `entering_first_call` narrows a Step Into's `FlowSet` to that frame (its name and lines).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from functools import lru_cache

from model.static.flow import COMPREHENSIONS, FlowSet, FlowUnavailable, ProgramFlow, Push, _statements, program_flow
from model.static.plain_values import plain_containers
from protocol.debugger import State, StopReason

QUIET = "quiet"  # evaluating the node runs no code
LOUD = "loud"  # it may run code of the program before any call the walk could name
# statements whose one-line head starts by evaluating one expression
_HEADS = {ast.Expr: "value", ast.Assign: "value", ast.AnnAssign: "value", ast.AugAssign: "value", ast.Return: "value",
          ast.If: "test", ast.While: "test", ast.Raise: "exc"}  # fmt: skip
LINE_EVENTS = frozenset({StopReason.STEP, StopReason.BREAKPOINT, StopReason.ENTRY})


def entering_first_call(flow: FlowSet, program: str, previous: State, returned: str | None) -> FlowSet:
    """`flow` (after Step Into from `previous`) with its step stops narrowed to entering the first call of `previous`'s
    line (`first_call`), when `previous` is a line event (not a stop back on the line after a call came back: `returned`
    None and no return value shown). Breakpoint and exception stops are left as they are; unchanged when unsure."""
    top = previous.top
    if flow.unconstrained or top is None or top.file is not None or returned is not None or not at_line_start(previous):
        return flow
    entry = first_entry(program, top.name, top.line)
    if entry is None:
        return flow
    depth = len(previous.frames)
    pushes = [Push(depth, entry.of(shape.frames)) for shape in flow.step if isinstance(shape, Push) and shape.depth == depth]
    pushes = [shape for shape in pushes if shape.frames]
    if not pushes:
        return flow
    return replace(flow, step=pushes, exit=False, returned=frozenset())


@dataclass(frozen=True)
class Entry:
    """The code object a line certainly enters first: its name and the lines of its source."""

    name: str
    first: int
    last: int

    def of(self, frames: frozenset[tuple[str, frozenset[int]]]) -> frozenset[tuple[str, frozenset[int]]]:
        """The pushed frames `(name, lines)` of this code object: its name, on its own lines (the flow names frames by
        code object name, so two classes' ``__init__`` share one entry)."""
        found = ((name, frozenset(n for n in lines if self.first <= n <= self.last)) for name, lines in frames if name == self.name)
        return frozenset(frame for frame in found if frame[1])


def first_entry(program: str, frame: str, line: int) -> Entry | None:
    """The code object the statement starting on `line` (of code object `frame`) certainly enters before running any
    other code of the program (a function, a class's ``__init__``, or a comprehension's ``<listcomp>``...), or None."""
    entered = _first_entered(program, frame, line)
    if entered is None:
        return None
    if isinstance(entered, ast.Call):
        code = _entered_defs(program)[entered.func.id]  # type: ignore[attr-defined]
        return Entry(code.name, code.lineno, code.end_lineno or code.lineno)
    return Entry(COMPREHENSIONS[type(entered)], entered.lineno, entered.end_lineno or entered.lineno)


def first_call(program: str, frame: str, line: int) -> str | None:
    """The name of `first_entry`'s code object (``__init__`` for a class's call), or None."""
    entry = first_entry(program, frame, line)
    return None if entry is None else entry.name


def at_line_start(previous: State) -> bool:
    """Whether `previous` is a line event (its line's statement has not begun): a step, breakpoint or entry stop that shows
    no return value (a stop back on a calling line after a call came back shows one)."""
    return not previous.finished and previous.reason in LINE_EVENTS and previous.return_value is None


def first_call_node(program: str, frame: str, line: int) -> ast.Call | None:
    """`first_call`'s call expression (its arguments are quiet: names, constants and displays of them), or None (also
    where the line first enters a comprehension)."""
    entered = _first_entered(program, frame, line)
    return entered if isinstance(entered, ast.Call) else None


def statements_on(program: str, frame: str, line: int) -> tuple[ProgramFlow, ast.Module, list[ast.stmt]] | None:
    """(the program's flow, its tree, the statements starting on `line` in code object `frame`, a module or function
    body, nested blocks included); None when the program cannot be analysed or `frame` on `line` is not one such scope."""
    try:
        flow = program_flow(program)
        tree = ast.parse(program)
    except (FlowUnavailable, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    scopes = flow.scope_at(frame, line)
    if len(scopes) != 1 or scopes[0].kind not in ("module", "function"):
        return None
    body = tree.body if scopes[0].kind == "module" else scopes[0].node.body  # type: ignore[attr-defined]
    return flow, tree, [s for s in _statements(body) if s.lineno == line]


@lru_cache(maxsize=256)
def _first_entered(program: str, frame: str, line: int) -> ast.Call | ast.ListComp | ast.SetComp | ast.DictComp | None:
    """The call or comprehension that the statement starting on `line` certainly enters first (see the module docstring)."""
    found = statements_on(program, frame, line)
    if found is None:
        return None
    flow, heads = found[0], found[2]
    if len(heads) != 1 or type(heads[0]) not in _HEADS:
        return None
    stmt = heads[0]
    expr = getattr(stmt, _HEADS[type(stmt)])
    if expr is None or (expr.end_lineno or expr.lineno) != line or expr.lineno != line:
        return None
    if isinstance(stmt, ast.AugAssign) and not isinstance(stmt.target, ast.Name):
        return None  # the target's object is read first
    found = _walk(expr, _Program(flow, frozenset(_entered_defs(program)), plain_containers(program)))
    return None if isinstance(found, str) else found


class _Program:
    def __init__(self, flow: ProgramFlow, functions: frozenset[str], plain_iteration: bool) -> None:
        self.functions = functions  # names whose call certainly enters a function of the program (`_entered_defs`)
        self.quiet_attributes = not flow.anywhere  # no property, dunder or descriptor of the program runs on access
        self.plain_iteration = plain_iteration  # iterating a value runs no code of the program


Entered = ast.Call | ast.ListComp | ast.SetComp | ast.DictComp


def _walk(node: ast.expr, program: _Program) -> str | Entered:
    """QUIET, LOUD, or the first call (of a plain function of the program) or comprehension frame entered, following
    Python's evaluation order."""
    if isinstance(node, ast.Constant) or (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
        return QUIET
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        inner = _walk(node.value, program)
        return inner if inner != QUIET else (QUIET if program.quiet_attributes else LOUD)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        parts = [p for pair in zip(node.keys, node.values) for p in pair] if isinstance(node, ast.Dict) else node.elts
        if any(p is None or isinstance(p, ast.Starred) for p in parts):
            return LOUD  # unpacking runs the iteration / mapping protocol
        inner = _sequence(parts, program)
        hashed = node.keys if isinstance(node, ast.Dict) else node.elts if isinstance(node, ast.Set) else []
        if inner == QUIET and not all(isinstance(k, ast.Constant) for k in hashed):
            return LOUD  # building it hashes its keys, maybe with the program's __hash__
        return inner
    if isinstance(node, ast.Call):
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return LOUD
        inner = _sequence([node.func, *node.args, *(k.value for k in node.keywords)], program)
        if inner != QUIET:
            return inner
        if isinstance(node.func, ast.Name) and node.func.id in program.functions:
            return node
        return LOUD
    if isinstance(node, _OPERATIONS):
        return _operation(node, program)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        first = node.generators[0]
        inner = _walk(first.iter, program)
        if inner != QUIET or not program.plain_iteration or first.is_async:
            return inner if inner != QUIET else LOUD
        return QUIET if isinstance(node, ast.GeneratorExp) else node  # a generator's frame runs when it is resumed
    return LOUD


_OPERATIONS = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Subscript, ast.Slice)


def _operation(node: ast.expr, program: _Program) -> str | Entered:
    """An operator, comparison, condition or subscript: its operands in evaluation order. On values of a program that
    defines no dunder, property or descriptor (`quiet_attributes`), operators run none of its code (builtin values
    compute, its own objects raise), so such an operation of quiet parts is quiet; where an operand is evaluated only
    on some runs (after ``and`` / ``or``, a chained comparison's later parts, either branch of ``x if c else y``), it
    must be quiet, or the walk cannot say what runs first."""
    if not program.quiet_attributes:
        return LOUD
    if isinstance(node, ast.BinOp):
        always, sometimes = [node.left, node.right], []
    elif isinstance(node, ast.UnaryOp):
        always, sometimes = [node.operand], []
    elif isinstance(node, ast.Compare):
        always, sometimes = [node.left, node.comparators[0]], node.comparators[1:]
    elif isinstance(node, ast.BoolOp):
        always, sometimes = node.values[:1], node.values[1:]
    elif isinstance(node, ast.IfExp):
        always, sometimes = [node.test], [node.body, node.orelse]
    elif isinstance(node, ast.Subscript):
        if not isinstance(node.ctx, ast.Load):
            return LOUD
        always, sometimes = [node.value, node.slice], []
    else:  # a slice: its bounds, left to right
        always, sometimes = [part for part in (node.lower, node.upper, node.step) if part is not None], []  # type: ignore[attr-defined]
    first = _sequence(always, program)
    if first != QUIET:
        return first
    return QUIET if _sequence(sometimes, program) == QUIET else LOUD


def _sequence(nodes: list[ast.expr], program: _Program) -> str | Entered:
    for node in nodes:
        found = _walk(node, program)
        if found != QUIET:
            return found
    return QUIET


@lru_cache(maxsize=32)
def _entered_defs(program: str) -> dict[str, ast.FunctionDef]:
    """{name: the function its call enters first} for the names bound once in the whole program, by an undecorated
    ``def`` of a plain function (not a generator, not async) or by a class statement whose call runs a plain
    ``__init__`` first (`_class_init`)."""
    from model.static.reach import _rebound_names

    tree = ast.parse(program)
    defined: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.setdefault(node.name, []).append(node)
    once = {name: nodes[0] for name, nodes in defined.items() if len(nodes) == 1 and name not in _rebound_names(tree)}
    classes = {name: node for name, node in once.items() if isinstance(node, ast.ClassDef)}
    out: dict[str, ast.FunctionDef] = {}
    for name, node in once.items():
        entered = _class_init(node, classes) if isinstance(node, ast.ClassDef) else node
        if isinstance(entered, ast.FunctionDef) and _plain_def(entered):
            out[name] = entered
    return out


def _plain_def(node: ast.FunctionDef) -> bool:
    return not node.decorator_list and not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(node))


_BEFORE_INIT = frozenset({"__new__", "__init__"})  # a class that assigns these (not by def) may run anything


def _class_init(node: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> ast.AST | None:
    """The ``__init__`` a call of class `node` runs first, where its single-inheritance chain is all the program's
    undecorated classes without keywords, none with a ``__new__``; None otherwise (or where no class defines one)."""
    chain: list[ast.ClassDef] = []
    current: ast.ClassDef | None = node
    while current is not None:
        if current in chain or len(chain) > 16 or current.decorator_list or current.keywords or len(current.bases) > 1:
            return None
        chain.append(current)
        base = current.bases[0] if current.bases else None
        if base is None or (isinstance(base, ast.Name) and base.id == "object"):
            current = None
        elif isinstance(base, ast.Name) and base.id in classes:
            current = classes[base.id]
        else:
            return None
    for cls in chain:
        defs = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assigned = {t.id for s in cls.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                    for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) if isinstance(t, ast.Name)}  # fmt: skip
        if "__new__" in defs or assigned & _BEFORE_INIT:
            return None
        if "__init__" in defs:
            return defs["__init__"]
    return None


def own_nodes(function: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of `function`'s own code (not of functions, classes or lambdas nested in it)."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = list(function.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return found
