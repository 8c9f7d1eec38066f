"""Static control flow: where the next stop can be, from the program's AST (nothing is ever run).

`next_locations(program, previous, action, breakpoints)` returns a `FlowSet`: the stacks the stop
after `action` can show, as a few `Shape`s over the previous stack (outermost first):

- `Continue(depth, lines)`: frames ``0..depth-1`` unchanged, frame ``depth`` (the same function)
  moves to one of `lines` (a control-flow successor; the same line is a return stop);
- `Push(depth, frames)`: frames ``0..depth-1`` unchanged, one new frame on top, a `(name, lines)`
  of `frames` (the first line event of a user function the line can call, or a generator resuming);
- `AnyStack(top_lines, top_names)`: any stack whose top frame stops on one of `top_lines` (a
  breakpoint, a generator resumed by anyone, an uncaught exception's traceback).

Per reason: `step` (the shapes of the action), `breakpoint` (any stack, top on a breakpoint line),
`exception` (any stack), and whether the program may exit. The rules restate debugpy's stepping (see
`tracegen.fast`) over a per-function line graph built from the AST (`ScopeFlow`): each statement's
lines, branch and loop edges (a loop's last line goes back to its header), ``break``/``continue``,
``try``/``except``/``finally`` (any line of a ``try`` body may go to any handler or the ``finally``),
``with`` (its line again on the way out), ``match``, ``return``/``raise``, and the calls each line
can make, resolved by name: functions and methods, a class's ``__init__``/``__new__``/
``__post_init__``, comprehensions and generator expressions on the line, class bodies, lambdas and
functions passed around as values (any line with a call may run them), dunder methods and properties
(any line), and generators resuming (any line that calls or iterates).

It is a superset by construction where Python's rules are known and conservative where they are
not: a wrong exclusion would make a correct prediction impossible. Programs it cannot follow
(``async``/``await``, threads, a frame of another file, a frame it cannot place) get
``FlowSet.unconstrained``. `bench/flow_coverage.py` measures the superset property against the fast
recorder and `tests/test_flow.py` property-tests it.
"""
from __future__ import annotations

import ast
import bisect
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from protocol.debugger import Action, ActionKind, Ending, State, StopReason, normalize_repr

# Frames a breakpoint or exception stop may have above the previous stack: deeper call chains between
# two stops (recursion) are not predicted; the bound keeps a model that wants to stop early from
# writing frames forever under a stack it cannot end (`bench/flow_coverage.py` counts what it cuts).
MAX_NEW_FRAMES = 6
EXIT = 0  # a successor marker: the frame returns normally (falls off its end or returns)
COMPREHENSIONS = {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>", ast.DictComp: "<dictcomp>", ast.GeneratorExp: "<genexpr>"}
INIT_METHODS = frozenset({"__init__", "__new__", "__post_init__"})
# names whose presence means a stop may be anywhere or the program may end at any call
EXIT_NAMES = frozenset({"exit", "_exit", "quit", "abort", "kill", "raise_signal", "execv", "execve", "execl"})
UNFOLLOWABLE_MODULES = frozenset({"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "signal", "atexit", "sys.settrace"})


# ------------------------------------------------------------------------------------ shapes


@dataclass(frozen=True)
class Continue:
    """Frames ``0..depth-1`` of the previous stack unchanged; frame ``depth`` (same name) on one of `lines`."""

    depth: int
    lines: frozenset[int]


@dataclass(frozen=True)
class Push:
    """Frames ``0..depth-1`` unchanged, then one new frame: a ``(name, lines)`` of `frames`."""

    depth: int
    frames: frozenset[tuple[str, frozenset[int]]]


@dataclass(frozen=True)
class KnownReturn:
    """The return value a step stop in frame `depth` shows: function `name`'s, one of the reprs `values`."""

    depth: int
    name: str
    values: frozenset[str]


@dataclass(frozen=True)
class AnyStack:
    """Any stack whose top frame is on one of `top_lines` (None: any) and named one of `top_names` (None: any)."""

    top_lines: frozenset[int] | None = None
    top_names: frozenset[str] | None = None
    max_new: int | None = None  # at most this many frames above the continued ones (None: any number)


Shape = Continue | Push | AnyStack


@dataclass
class FlowSet:
    """The possible next stops: shapes per reason, and whether the program may exit instead."""

    step: list[Shape] = field(default_factory=list)
    breakpoint: list[Shape] = field(default_factory=list)
    exception: list[Shape] = field(default_factory=list)
    exit: bool = True
    unconstrained: bool = False
    why: str = ""  # for an unconstrained set: why
    # depths of `Continue` step shapes reached only by leaving the top frame, a function (not a generator)
    # that returns or raises: debugpy then shows its return value (``(return) f``, None after an exception)
    returned: frozenset[int] = frozenset()
    # depths of `Continue` step shapes reached only as an exception passes through the frame: the value shown is None
    raised: frozenset[int] = frozenset()
    # a return value every `Continue` step stop at its depth shows (`model.static.class_returns`: a class body's)
    known_return: KnownReturn | None = None
    # whether the run may end at a limit instead (the recorder's time, memory or event limits: anywhere, `exit_never`);
    # off only for a session's own fine step that must enter a call (`model.static.reach.entering`)
    limit_end: bool = True

    @classmethod
    def anything(cls, why: str) -> "FlowSet":
        return cls(step=[AnyStack()], breakpoint=[AnyStack()], exception=[AnyStack()], exit=True, unconstrained=True, why=why)

    def shapes(self, reason: StopReason) -> list[Shape]:
        return {StopReason.STEP: self.step, StopReason.BREAKPOINT: self.breakpoint,
                StopReason.EXCEPTION: self.exception}.get(reason, [])  # fmt: skip

    def allows(self, previous: State, state: State) -> bool:
        """Whether `state` is one of the stops this set describes (after `previous`)."""
        if self.unconstrained:
            return True
        if state.finished:  # a limit (time, memory, events) can end the run anywhere: exit_never
            return self.exit or (self.limit_end and state.ending is Ending.NEVER)
        if any(f.file is not None for f in state.frames):
            return True  # frames of other files are outside this analysis (never generated by the grammar)
        old = [(f.name, f.line) for f in reversed(previous.frames)]
        new = [(f.name, f.line) for f in reversed(state.frames)]
        return any(shape_allows(shape, old, new) and (state.return_value is not None or not self.must_return(shape, state.reason))
                   and self._shows_known(shape, state) for shape in self.shapes(state.reason))  # fmt: skip

    def _shows_known(self, shape: Shape, state: State) -> bool:
        known, shown = self.known_return, state.return_value
        if known is None or state.reason is not StopReason.STEP or not self.knows_return(shape) or shown is None:
            return True
        return shown.name == known.name and normalize_repr(shown.value) in known.values

    def must_return(self, shape: Shape, reason: StopReason = StopReason.STEP) -> bool:
        """Whether a stop of `shape` for `reason` shows a return value (see `returned` and `known_return`)."""
        return reason is StopReason.STEP and isinstance(shape, Continue) and (shape.depth in self.returned or self.knows_return(shape))

    def knows_return(self, shape: Shape) -> bool:
        """Whether a step stop of `shape` shows `known_return`."""
        return self.known_return is not None and isinstance(shape, Continue) and shape.depth == self.known_return.depth

    def top_lines(self, reason: StopReason = StopReason.STEP) -> set[int] | None:
        """Every line the top frame may stop on for `reason` (None: any line)."""
        out: set[int] = set()
        for shape in self.shapes(reason):
            if isinstance(shape, Continue):
                out |= shape.lines
            elif isinstance(shape, Push):
                for _, lines in shape.frames:
                    out |= lines
            elif shape.top_lines is None:
                return None
            else:
                out |= shape.top_lines
        return out


def shape_allows(shape: Shape, old: list[tuple[str, int]], new: list[tuple[str, int]]) -> bool:
    if isinstance(shape, AnyStack):
        if not new:
            return False
        name, line = new[-1]
        if shape.max_new is not None and new_frames(old, new) > shape.max_new:
            return False
        return (shape.top_lines is None or line in shape.top_lines) and (shape.top_names is None or name in shape.top_names)
    depth = shape.depth
    if len(new) != depth + 1 or new[:depth] != old[:depth]:
        return False
    name, line = new[depth]
    if isinstance(shape, Continue):
        return depth < len(old) and name == old[depth][0] and line in shape.lines
    return any(name == n and line in lines for n, lines in shape.frames)


def new_frames(old: list[tuple[str, int]], new: list[tuple[str, int]]) -> int:
    """How many frames of `new` (outermost first) come after the deepest frame that continues one of `old`."""
    best = 0
    for depth in range(min(len(old), len(new))):
        if new[depth][0] == old[depth][0]:
            best = depth + 1
        if new[depth] != old[depth]:
            break
    return len(new) - best


# ------------------------------------------------------------------------- per-scope graph


@dataclass
class ScopeFlow:
    """One code object's line graph: successors per line (`EXIT`: a normal return), calls per line."""

    name: str
    kind: str  # module | function | class | lambda | comprehension
    node: ast.AST
    lines: frozenset[int]  # executable lines (from the code object's line table)
    succ: dict[int, set[int]] = field(default_factory=dict)
    entry: frozenset[int] = frozenset()
    generator: bool = False
    yield_lines: set[int] = field(default_factory=set)
    calls: dict[int, "LineCalls"] = field(default_factory=dict)
    indirect: bool = False  # may be called from library code (passed as a value, a dunder, a lambda...)

    @property
    def resume_lines(self) -> frozenset[int]:
        """Where a generator's frame can go on when it resumes (its entry, and after each yield)."""
        out = set(self.entry)
        for line in self.yield_lines:
            out |= self.succ.get(line, set())
        out.discard(EXIT)
        return frozenset(out)


@dataclass
class LineCalls:
    """What one line can call."""

    names: set[str] = field(default_factory=set)  # f(...)
    attrs: set[str] = field(default_factory=set)  # x.f(...)
    scopes: list[ast.AST] = field(default_factory=list)  # comprehensions / genexprs / class bodies run on this line
    calls: bool = False  # any call at all (library code may call back)
    iterates: bool = False  # iterates, unpacks or tests membership (may resume a generator)


@dataclass
class _Ctx:
    brk: frozenset[int] = frozenset()
    cont: frozenset[int] = frozenset()
    exc: frozenset[int] = frozenset()
    ret: frozenset[int] = frozenset({EXIT})


class _Builder:
    """Builds one scope's `succ` from its body statements."""

    def __init__(self, scope: ScopeFlow) -> None:
        self.scope = scope
        self.lines = scope.lines

    def own(self, start: int, end: int, extra: Iterable[int] = ()) -> frozenset[int]:
        return frozenset(line for line in (*range(start, end + 1), *extra) if line in self.lines)

    def simple(self, own: frozenset[int], after: frozenset[int], ctx: _Ctx) -> frozenset[int]:
        for line in own:
            self.scope.succ.setdefault(line, set()).update((own - {line}) | after | ctx.exc)
        return own

    # ----- entries without edges (for loop back-edges)
    def entry_of(self, stmts: Sequence[ast.stmt]) -> frozenset[int]:
        for stmt in stmts:
            first = self.first(stmt)
            if first:
                return first
        return frozenset()

    def first(self, stmt: ast.stmt) -> frozenset[int]:
        head = self.header(stmt)
        if head:
            return head
        if isinstance(stmt, ast.If):
            return self.entry_of(stmt.body) | self.entry_of(stmt.orelse)
        if isinstance(stmt, (ast.While, ast.Try, ast.With, ast.AsyncWith)) or _is_trystar(stmt):
            return self.entry_of(stmt.body)  # type: ignore[attr-defined]
        return frozenset()

    def header(self, stmt: ast.stmt) -> frozenset[int]:
        """The lines of a statement's own code (a compound statement's header)."""
        if isinstance(stmt, (ast.If, ast.While)):
            return self.own(stmt.lineno, stmt.test.end_lineno or stmt.lineno)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            return self.own(stmt.lineno, stmt.iter.end_lineno or stmt.lineno)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            last = stmt.items[-1]
            end = (last.optional_vars or last.context_expr).end_lineno or stmt.lineno
            return self.own(stmt.lineno, end)
        if isinstance(stmt, ast.Try) or _is_trystar(stmt):
            return self.own(stmt.lineno, stmt.lineno)
        if isinstance(stmt, ast.Match):
            return self.own(stmt.lineno, stmt.subject.end_lineno or stmt.lineno)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
            return self.own(start, max(stmt.lineno, stmt.body[0].lineno - 1))
        return self.own(stmt.lineno, stmt.end_lineno or stmt.lineno)

    # ----- statements
    def block(self, stmts: Sequence[ast.stmt], after: frozenset[int], ctx: _Ctx) -> frozenset[int]:
        entry = after
        for stmt in reversed(stmts):
            entry = self.stmt(stmt, entry, ctx)
        return entry

    def stmt(self, stmt: ast.stmt, after: frozenset[int], ctx: _Ctx) -> frozenset[int]:  # noqa: C901 - one case per statement kind
        own = self.header(stmt)
        if isinstance(stmt, ast.If):
            body = self.block(stmt.body, after, ctx)
            orelse = self.block(stmt.orelse, after, ctx) if stmt.orelse else after
            if not own:
                return body | orelse
            # a body on the header's line runs on without a line event (`if not m: return ''`)
            return self.simple(own, (body | orelse) - own, ctx)
        if isinstance(stmt, (ast.While, ast.For, ast.AsyncFor)):
            first = self.entry_of(stmt.body)
            back = own | first if isinstance(stmt, ast.While) or not own else own
            inner = replace(ctx, brk=after, cont=back)
            body = self.block(stmt.body, back, inner)
            orelse = self.block(stmt.orelse, after, ctx) if stmt.orelse else after
            if not own:
                return body
            return self.simple(own, body | orelse, ctx)
        if isinstance(stmt, ast.Try) or _is_trystar(stmt):
            return self.try_(stmt, own, after, ctx)  # type: ignore[arg-type]
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            inner = replace(ctx, exc=ctx.exc | own | after, ret=ctx.ret | own, brk=ctx.brk | own, cont=ctx.cont | own)
            body = self.block(stmt.body, own | after, inner)
            if not own:
                return body
            return self.simple(own, body | after | ctx.ret | ctx.brk | ctx.cont, ctx)  # __exit__ runs on its line
        if isinstance(stmt, ast.Match):
            later: frozenset[int] = frozenset()
            entries: frozenset[int] = frozenset()
            for case in reversed(stmt.cases):
                body = self.block(case.body, after, ctx)
                pattern = self.own(case.pattern.lineno, (case.guard or case.pattern).end_lineno or case.pattern.lineno)
                if pattern:
                    self.simple(pattern, body | later | after, ctx)
                    later = later | pattern
                else:
                    later = later | body
                entries = later
            if not own:
                return entries | after
            return self.simple(own, entries | after, ctx)
        if not own:
            return after
        if isinstance(stmt, ast.Return):
            return self.simple(own, ctx.ret, ctx)
        if isinstance(stmt, ast.Raise):
            return self.simple(own, frozenset(), ctx)
        if isinstance(stmt, ast.Break):
            return self.simple(own, ctx.brk, ctx)
        if isinstance(stmt, ast.Continue):
            return self.simple(own, ctx.cont, ctx)
        return self.simple(own, after, ctx)

    def try_(self, stmt: ast.Try, own: frozenset[int], after: frozenset[int], ctx: _Ctx) -> frozenset[int]:
        final: frozenset[int] = frozenset()
        through = ctx
        if stmt.finalbody:  # every way out goes through the finally, and on from its end
            final = self.block(stmt.finalbody, after | ctx.ret | ctx.brk | ctx.cont | ctx.exc, ctx)
            through = _Ctx(brk=final, cont=final, exc=final | ctx.exc, ret=final)
        done = final if stmt.finalbody else after
        handler_lines = [self.own(h.lineno, (h.type.end_lineno if h.type else h.lineno) or h.lineno) for h in stmt.handlers]
        heads = [h_own or self.entry_of(h.body) for h_own, h in zip(handler_lines, stmt.handlers)]
        for index, (h_own, handler) in enumerate(zip(handler_lines, stmt.handlers)):
            body = self.block(handler.body, done, through)
            if h_own:  # the except line: its body, or the next handler, or out
                later = frozenset().union(*heads[index + 1 :])
                self.simple(h_own, body | later | through.exc, ctx)
        orelse = self.block(stmt.orelse, done, through) if stmt.orelse else done
        inner = replace(through, exc=through.exc | frozenset().union(*heads))
        body = self.block(stmt.body, orelse, inner)
        if not own:
            return body
        return self.simple(own, body, inner)


def _is_trystar(stmt: ast.AST) -> bool:
    return type(stmt).__name__ == "TryStar"


# --------------------------------------------------------------------------- the program


def _scope_name(node: ast.AST) -> str:
    if isinstance(node, ast.Module):
        return "<module>"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Lambda):
        return "<lambda>"
    return COMPREHENSIONS[type(node)]


def _scope_kind(node: ast.AST) -> str:
    if isinstance(node, ast.Module):
        return "module"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "function"
    if isinstance(node, ast.ClassDef):
        return "class"
    if isinstance(node, ast.Lambda):
        return "lambda"
    return "comprehension"


def _first_line(node: ast.AST) -> int:
    if isinstance(node, ast.Module):
        return 1
    decorators = getattr(node, "decorator_list", [])
    return min([d.lineno for d in decorators] + [node.lineno])  # type: ignore[attr-defined]


SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, *COMPREHENSIONS)


def _children_in_scope(node: ast.AST) -> Iterable[ast.AST]:
    """The nodes evaluated in the scope that contains `node` (not inside nested function/class bodies)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in [*child.decorator_list, *child.args.defaults, *(d for d in child.args.kw_defaults if d)]:
                yield from _walk_scope(sub)
        elif isinstance(child, ast.ClassDef):
            for sub in [*child.decorator_list, *child.bases, *child.keywords]:
                yield from _walk_scope(sub)
        elif isinstance(child, ast.Lambda):
            for sub in [*child.args.defaults, *(d for d in child.args.kw_defaults if d)]:
                yield from _walk_scope(sub)
        else:
            yield from _children_in_scope(child)


def _walk_scope(node: ast.AST) -> Iterable[ast.AST]:
    yield node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        yield from _children_in_scope(node)


def _header_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates on its own lines (a compound statement's header)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for decorator in stmt.decorator_list:
            decorator._decorator = True  # type: ignore[attr-defined]  # read by _line_calls
        if isinstance(stmt, ast.ClassDef):
            return [*stmt.decorator_list, *stmt.bases, *stmt.keywords]
        return [*stmt.decorator_list, *stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d)]
    if isinstance(stmt, ast.Try) or _is_trystar(stmt):
        return []
    return [stmt]


@dataclass
class ProgramFlow:
    """Every scope's line graph, and how calls resolve by name."""

    scopes: list[ScopeFlow]
    by_name: dict[str, list[ScopeFlow]]
    functions: dict[str, list[ScopeFlow]]  # def name -> scopes (functions and methods)
    classes: dict[str, tuple[ast.ClassDef, ScopeFlow]]
    anywhere: frozenset[tuple[str, frozenset[int]]]  # callable from any line (dunders, properties)
    escaping: frozenset[tuple[str, frozenset[int]]]  # callable from any line with a call (values, lambdas)
    resumable: frozenset[tuple[str, frozenset[int]]]  # generators: where they resume
    may_exit_anywhere: bool
    code_lines: list[int]
    values: frozenset[str] = frozenset()  # names and attributes read as values, not called where read (passed on)

    def scope_at(self, name: str, line: int) -> list[ScopeFlow]:
        return [s for s in self.by_name.get(name, []) if line in s.lines]


def _code_objects(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


class FlowUnavailable(ValueError):
    """The program cannot be analysed (does not parse or compile, or uses what the analysis cannot follow)."""


@lru_cache(maxsize=32)
def program_flow(program: str) -> ProgramFlow:
    """The analysis of `program` (cached; raises `FlowUnavailable`)."""
    try:
        tree = ast.parse(program)
        code = compile(program, "<program>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        raise FlowUnavailable(f"the program does not compile: {exc}") from None
    why = _unfollowable(tree)
    if why:
        raise FlowUnavailable(why)
    lines_of: dict[tuple[str, int], set[int]] = {}
    for obj in _code_objects(code):
        own = {line for _, _, line in obj.co_lines() if line is not None and line > 0}
        lines_of.setdefault((obj.co_name, obj.co_firstlineno), set()).update(own)
    scopes: list[ScopeFlow] = []
    for node in [tree, *(n for n in ast.walk(tree) if isinstance(n, SCOPE_NODES))]:
        name = _scope_name(node)
        lines = lines_of.get((name, _first_line(node)))
        if lines is None:  # the line table disagrees with the AST (should not happen): lines of that name in the node's span
            span = range(_first_line(node), (getattr(node, "end_lineno", None) or 10**9) + 1)
            lines = {line for (n, _), ls in lines_of.items() if n == name for line in ls if line in span}
        scopes.append(ScopeFlow(name, _scope_kind(node), node, frozenset(lines)))
    for scope in scopes:
        _build_scope(scope)
    return _link(tree, scopes, code)


def _unfollowable(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        if isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return "async code"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in UNFOLLOWABLE_MODULES:
                    return f"imports {alias.name}"
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in UNFOLLOWABLE_MODULES:
            return f"imports {node.module}"
        if isinstance(node, ast.Attribute) and node.attr in ("settrace", "setprofile"):
            return "changes the tracer"
    return ""


def _build_scope(scope: ScopeFlow) -> None:
    node = scope.node
    if isinstance(node, (ast.Lambda, *COMPREHENSIONS)):
        for line in scope.lines:
            scope.succ[line] = set(scope.lines) | {EXIT}
        scope.entry = scope.lines
        scope.generator = isinstance(node, ast.GeneratorExp)
        if scope.generator:
            scope.yield_lines = set(scope.lines)
        _line_calls(scope, [node.body] if isinstance(node, ast.Lambda) else list(ast.iter_child_nodes(node)), scope.lines)  # type: ignore[attr-defined]
        return
    builder = _Builder(scope)
    body = node.body  # type: ignore[attr-defined]
    scope.entry = builder.block(body, frozenset({EXIT}), _Ctx())
    if scope.kind == "class":  # a class body starts on the class line (it stores __module__, __qualname__)
        head = builder.own(_first_line(node), max(node.lineno, body[0].lineno - 1))  # type: ignore[attr-defined]
        if head:
            scope.entry = builder.simple(head, scope.entry, _Ctx())
    # statements and the calls on their lines
    for stmt in _statements(body):
        own = builder.header(stmt)
        if not own:
            continue
        _line_calls(scope, _header_nodes(stmt), own)
        if isinstance(stmt, ast.ClassDef):
            for line in own:
                scope.calls.setdefault(line, LineCalls()).scopes.append(stmt)
        for sub in _header_nodes(stmt):
            for inner in _walk_scope(sub):
                if isinstance(inner, (ast.Yield, ast.YieldFrom)):
                    scope.yield_lines |= set(own)
    if scope.kind == "function":
        scope.generator = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for stmt in body for n in _walk_scope(stmt))
    for line in scope.lines:
        scope.succ.setdefault(line, set())


def _statements(body: Sequence[ast.stmt]) -> Iterable[ast.stmt]:
    """Every statement of a scope's body, nested blocks included (not nested scopes' bodies)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, name, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", []) or []:
            yield from _statements(case.body)


def _line_calls(scope: ScopeFlow, nodes: Sequence[ast.AST], own: Iterable[int]) -> None:
    """Record what `nodes` (evaluated on the lines `own`) can call, on each of those lines."""
    found = LineCalls()
    for root in nodes:
        if isinstance(root, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if getattr(root, "_decorator", False):  # a decorator is called with the function
            found.calls = True
            if isinstance(root, ast.Name):
                found.names.add(root.id)
            elif isinstance(root, ast.Attribute):
                found.attrs.add(root.attr)
        for node in _walk_scope(root):
            if isinstance(node, ast.Call):
                found.calls = True
                if isinstance(node.func, ast.Name):
                    found.names.add(node.func.id)
                elif isinstance(node.func, ast.Attribute):
                    found.attrs.add(node.func.attr)
            elif isinstance(node, tuple(COMPREHENSIONS)):
                found.scopes.append(node)
                found.iterates = True
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension, ast.Starred, ast.YieldFrom, ast.Await)):
                found.iterates = True
            elif isinstance(node, (ast.Tuple, ast.List)) and isinstance(getattr(node, "ctx", None), ast.Store):
                found.iterates = True
            elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                found.iterates = True
            elif isinstance(node, ast.withitem):
                found.calls = True  # __enter__ / __exit__
    for line in own:
        calls = scope.calls.setdefault(line, LineCalls())
        calls.names |= found.names
        calls.attrs |= found.attrs
        calls.scopes.extend(found.scopes)
        calls.calls |= found.calls
        calls.iterates |= found.iterates


def _link(tree: ast.Module, scopes: list[ScopeFlow], code: types.CodeType) -> ProgramFlow:
    by_name: dict[str, list[ScopeFlow]] = {}
    by_node: dict[int, ScopeFlow] = {}
    functions: dict[str, list[ScopeFlow]] = {}
    classes: dict[str, tuple[ast.ClassDef, ScopeFlow]] = {}
    for scope in scopes:
        by_name.setdefault(scope.name, []).append(scope)
        by_node[id(scope.node)] = scope
        if scope.kind == "function":
            functions.setdefault(scope.name, []).append(scope)
        elif scope.kind == "class":
            classes[scope.name] = (scope.node, scope)  # type: ignore[assignment]
    called_names: set[int] = set()
    called_attrs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called_names.add(id(node.func))
            called_attrs.add(id(node.func))
    value_names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called_names}
    value_attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and id(n) not in called_attrs}
    anywhere: set[tuple[str, frozenset[int]]] = set()
    escaping: set[tuple[str, frozenset[int]]] = set()
    resumable: set[tuple[str, frozenset[int]]] = set()
    for scope in scopes:
        spec = (scope.name, scope.entry - {EXIT})
        node = scope.node
        if scope.kind == "function":
            decorated = bool(node.decorator_list)  # type: ignore[attr-defined]
            dunder = scope.name.startswith("__") and scope.name.endswith("__") and scope.name not in INIT_METHODS
            prop = any(decorator_name(d) in ("property", "setter", "getter", "deleter", "cached_property")
                       for d in node.decorator_list)  # type: ignore[attr-defined]  # fmt: skip
            if dunder or prop:
                anywhere.add(spec)
                scope.indirect = True
            if decorated or scope.name in value_names or scope.name in value_attrs:
                escaping.add(spec)
                scope.indirect = True
        elif scope.kind == "lambda":
            escaping.add(spec)
            scope.indirect = True
        elif scope.kind == "class" and scope.name in value_names:
            for init in _init_scopes(scope.name, classes, functions):
                escaping.add((init.name, init.entry - {EXIT}))
                init.indirect = True
        if scope.generator:
            resumable.add((scope.name, scope.resume_lines))
            scope.indirect = True
    for scope in _library_called_methods(classes, functions):  # a library base class's code calls its overrides
        escaping.add((scope.name, scope.entry - {EXIT}))
        scope.indirect = True
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return ProgramFlow(scopes, by_name, functions, classes, frozenset(anywhere), frozenset(escaping), frozenset(resumable),
                       bool(names & EXIT_NAMES), sorted({line for obj in _code_objects(code) for _, line in _linestarts(obj)}),
                       frozenset(value_names | value_attrs))  # fmt: skip


def _linestarts(code: types.CodeType) -> Iterable[tuple[int, int]]:
    import dis

    return ((offset, line) for offset, line in dis.findlinestarts(code) if line is not None)


def decorator_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _init_scopes(name: str, classes: dict[str, tuple[ast.ClassDef, ScopeFlow]], functions: dict[str, list[ScopeFlow]],
                 seen: set[str] | None = None) -> list[ScopeFlow]:  # fmt: skip
    """The __init__/__new__/__post_init__ methods a call of class `name` can run (its own and its user bases')."""
    seen = seen if seen is not None else set()
    if name in seen or name not in classes:
        return []
    seen.add(name)
    node, _ = classes[name]
    found = [s for init in INIT_METHODS for s in functions.get(init, []) if _defined_in(s.node, node)]
    for base in node.bases:
        base_name = decorator_name(base)
        if base_name:
            found += _init_scopes(base_name, classes, functions, seen)
    return found


def _library_based(name: str, classes: dict[str, tuple[ast.ClassDef, ScopeFlow]], seen: frozenset[str] = frozenset()) -> bool:
    """Whether class `name` has, through its user bases, a base or a keyword (``metaclass=``) that is not one of the
    program's classes (``object`` aside): library code then holds methods that may call the class's own."""
    if name in seen:
        return False
    node, _ = classes[name]
    if node.keywords:
        return True
    for base in node.bases:
        base_name = base.id if isinstance(base, ast.Name) else None
        if base_name == "object":
            continue
        if base_name not in classes or _library_based(base_name, classes, seen | {name}):
            return True
    return False


def _library_called_methods(classes: dict[str, tuple[ast.ClassDef, ScopeFlow]], functions: dict[str, list[ScopeFlow]]) -> list[ScopeFlow]:
    """The methods of classes with a library base (`_library_based`): the base's methods may call them by name
    (``HTMLParser.feed`` calls a subclass's ``handle_starttag``), from any line that calls anything."""
    based = [node for name, (node, _) in classes.items() if _library_based(name, classes)]
    return [s for scopes in functions.values() for s in scopes if any(_defined_in(s.node, node) for node in based)]


def _defined_in(func: ast.AST, cls: ast.ClassDef) -> bool:
    return any(stmt is func for stmt in cls.body)


# --------------------------------------------------------------------------- next stops


@dataclass
class _Frame:
    name: str
    line: int
    scopes: list[ScopeFlow]

    def union(self, attr: str) -> set[int]:
        out: set[int] = set()
        for scope in self.scopes:
            out |= getattr(scope, attr)
        return out

    @property
    def succ(self) -> set[int]:
        out: set[int] = set()
        for scope in self.scopes:
            out |= scope.succ.get(self.line, set())
        return out

    @property
    def generator(self) -> bool:
        return any(s.generator for s in self.scopes)

    @property
    def indirect(self) -> bool:
        return any(s.indirect for s in self.scopes)

    @property
    def entry(self) -> set[int]:
        return self.union("entry") - {EXIT}


def _pushes(flow: ProgramFlow, frame: _Frame) -> set[tuple[str, frozenset[int]]]:
    """The frames the rest of `frame`'s line can start (first line events of user code)."""
    out: set[tuple[str, frozenset[int]]] = set(flow.anywhere)
    for scope in frame.scopes:
        calls = scope.calls.get(frame.line)
        if calls is None:
            continue
        for name in calls.names:
            for target in flow.functions.get(name, []):
                out.add((target.name, target.entry - {EXIT}))
            for init in _init_scopes(name, flow.classes, flow.functions):
                out.add((init.name, init.entry - {EXIT}))
        for attr in calls.attrs:
            for target in flow.functions.get(attr, []):
                out.add((target.name, target.entry - {EXIT}))
        for node in calls.scopes:
            for target in flow.by_name.get(_scope_name(node), []):
                if target.node is node:
                    out.add((target.name, target.entry - {EXIT}))
        if calls.calls:
            out |= flow.escaping
        if calls.calls or calls.iterates:
            out |= flow.resumable
    return {(name, lines) for name, lines in out if lines}


def startable_from(flow: ProgramFlow, name: str, line: int) -> frozenset[str] | None:
    """The names of the frames a frame `name` stopped on `line` can have started (None: no such frame)."""
    scopes = flow.scope_at(name, line)
    if not scopes:
        return None
    return frozenset(n for n, _ in _pushes(flow, _Frame(name, line, scopes)))


def _adjust(flow: ProgramFlow, line: int) -> int:
    lines = flow.code_lines
    if line in lines:
        return line
    index = bisect.bisect_left(lines, line)
    return lines[index - 1] if index > 0 else line


def next_locations(program: str, previous: State, action: Action, breakpoints: Sequence[int] = ()) -> FlowSet:
    """The stops `action` can lead to from `previous` (a superset; see the module docstring).

    Inverse actions, a finished state, programs the analysis cannot follow and stacks it cannot
    place give `FlowSet.anything`.
    """
    if action.kind.inverse:
        return FlowSet.anything("inverse action")
    if previous.finished:
        return FlowSet.anything("after the end")
    if previous.reason is StopReason.EXCEPTION:  # at the uncaught exception: any action ends the program
        return FlowSet(exit=True)
    try:
        flow = program_flow(program)
    except FlowUnavailable as exc:
        return FlowSet.anything(str(exc))
    stack: list[_Frame] = []
    for frame in reversed(previous.frames):
        if frame.file is not None:
            return FlowSet.anything("a frame of another file")
        scopes = flow.scope_at(frame.name, frame.line)
        if not scopes:
            return FlowSet.anything(f"no code object {frame.name} on line {frame.line}")
        stack.append(_Frame(frame.name, frame.line, scopes))
    if not stack:
        return FlowSet.anything("no frames")
    bps = {_adjust(flow, b) for b in breakpoints}
    if action.kind is ActionKind.BREAKPOINT and action.line is not None:
        bps.add(_adjust(flow, action.line))
    result = FlowSet(exit=flow.may_exit_anywhere)
    if bps:
        result.breakpoint.append(AnyStack(top_lines=frozenset(bps), max_new=MAX_NEW_FRAMES))
    result.exception.append(AnyStack(max_new=MAX_NEW_FRAMES))
    top = len(stack) - 1
    kind = action.kind
    if kind is ActionKind.STEP_INTO:
        _into(flow, stack, top, result, returned=False)
    elif kind is ActionKind.STEP_OVER:
        _over(flow, stack, result)
    elif kind is ActionKind.STEP_RETURN:
        _out(flow, stack, result)
    else:  # continue, run to a line: breakpoints, the exception, the end
        result.exit = True
    result.step = _merge(result.step)
    if kind in (ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN) and _returns_value(stack[top]):
        result.returned = frozenset(range(top))
    return result


# kinds of code object whose leaving debugpy shows as a return value (checked on every recorded step:
# bench/flow_coverage.py); a generator's frame is left at a yield without one, a module's (an import) too
RETURNING_KINDS = frozenset({"function", "comprehension"})


def _returns_value(frame: _Frame) -> bool:
    """Whether leaving `frame` (a return or an exception, not a yield) shows its return value at the next step stop."""
    return not frame.generator and all(s.kind in RETURNING_KINDS for s in frame.scopes)


def _into(flow: ProgramFlow, stack: list[_Frame], depth: int, result: FlowSet, *, returned: bool, seen: set | None = None) -> None:
    """Stepping in with control in frame `depth` (after a return into it when `returned`)."""
    seen = seen if seen is not None else set()
    if (depth, returned) in seen:
        return
    seen.add((depth, returned))
    frame = stack[depth]
    succ = frame.succ
    lines = (succ - {EXIT}) | ({frame.line} if returned else set())
    if lines:
        result.step.append(Continue(depth, frozenset(lines)))
    pushes = _pushes(flow, frame)
    if pushes:
        result.step.append(Push(depth + 1, frozenset(pushes)))
    if depth == 0:
        if EXIT in succ or frame.indirect or frame.generator:
            result.exit = True
        return
    # the frame returns (or raises) into its caller: a stop on the calling line
    result.step.append(Continue(depth - 1, frozenset({stack[depth - 1].line})))
    if frame.generator or frame.indirect:
        # a yield goes back to the consumer with no return stop; a function called by library code
        # returns into the library, which may call it again or return to the caller
        if frame.indirect:
            result.step.append(Continue(depth, frozenset(frame.entry)))
        _into(flow, stack, depth - 1, result, returned=True, seen=seen)


def _over(flow: ProgramFlow, stack: list[_Frame], result: FlowSet) -> None:
    depth = len(stack) - 1
    frame = stack[depth]
    succ = frame.succ
    if succ - {EXIT}:
        result.step.append(Continue(depth, frozenset(succ - {EXIT})))
    if frame.generator:  # suspended at a yield: the next line of this frame, whoever resumes it; or never
        result.step.append(AnyStack(top_lines=frozenset((succ - {EXIT}) | frame.union("resume_lines")), top_names=frozenset({frame.name})))
        result.exit = True
    if depth == 0:
        if EXIT in succ or frame.indirect:
            result.exit = True
        return
    if frame.indirect:
        result.step.append(Continue(depth, frozenset(frame.entry)))
    _into(flow, stack, depth - 1, result, returned=True)  # the frame returned: next becomes stepIn in the caller


def _out(flow: ProgramFlow, stack: list[_Frame], result: FlowSet) -> None:
    depth = len(stack) - 1
    frame = stack[depth]
    if depth == 0:  # no user caller: runs like continue
        result.exit = True
        return
    if frame.generator:
        result.step.append(AnyStack())
        result.exit = True
        return
    result.step.append(Continue(depth - 1, frozenset({stack[depth - 1].line})))
    if frame.indirect:  # called by library code: out of the first frame that user code called directly
        for lower in range(depth - 1):
            result.step.append(Continue(lower, frozenset({stack[lower].line})))
        result.exit = True


def _merge(shapes: list[Shape]) -> list[Shape]:
    """Shapes of the same kind and depth merged (fewer, larger alternatives)."""
    conts: dict[int, set[int]] = {}
    pushes: dict[int, set[tuple[str, frozenset[int]]]] = {}
    others: list[Shape] = []
    for shape in shapes:
        if isinstance(shape, Continue):
            conts.setdefault(shape.depth, set()).update(shape.lines)
        elif isinstance(shape, Push):
            pushes.setdefault(shape.depth, set()).update(shape.frames)
        elif shape not in others:
            others.append(shape)
    merged: list[Shape] = [Continue(d, frozenset(ls)) for d, ls in sorted(conts.items())]
    for d, frames in sorted(pushes.items()):
        by_name: dict[str, set[int]] = {}
        for name, lines in frames:
            by_name.setdefault(name, set()).update(lines)
        merged.append(Push(d, frozenset((n, frozenset(ls)) for n, ls in by_name.items())))
    return merged + others
