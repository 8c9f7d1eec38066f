"""Which fine step brings a Continue, a Step Out or a run to a breakpoint closer to where it arrives.

A session that runs a coarse action as successive predicted fine steps (`NeuralDebugger(coarse_steps="fine")`, and
"auto" while a breakpoint can be reached: `no_target_ahead`) asks, before each one, `fine_step`: from the source alone
(nothing is run, no value is computed), the calls a line can make (`model.static.flow`) say whether its calls can
reach a target line (a breakpoint) or not.

- A line whose calls cannot reach a target is stepped **over**: the calls run inside the step, as debugpy's
  Continue runs them, and the run takes one fine step per line of the frames it is in.
- A line that can call a function reaching a target is stepped **into**. When the line *certainly* calls a
  user function as it runs (`certain_calls`: a plain ``name(...)`` call of a user function, evaluated
  whenever the line's statement runs, the stop a line event rather than a return to the line), the step is
  narrowed to entering one (`entering`): the model chooses which function and writes its state, the rule
  only refuses answers that stay in the frame. Small models step *over* such calls when asked to step into
  them (a Continue to a breakpoint inside ``check()`` ran past ``out.append(check(it))`` and ended).
- A line a frame may be left from is stepped into when the stop on the calling line matters: for Step Out
  (the caller's calling line is where it arrives), or when the caller's line can still call a function that
  reaches a target.

The same reading narrows any step's grammar (`model.decode.constraints.FlowConstraint`): a step, Continue or Step Out
with no breakpoint ahead is offered no breakpoint stop (`without_unreachable_breakpoints`), and a Step Into from a
step's stop back on its calling line does not start again the call that just came back where the line makes it once
(`returned_call`, `without_returned_call`), nor does a step that may return from the top frame (`without_recalled_top`).

`reaching_functions` is the fixpoint of "has a target line, or has a line that can start one that does",
over the names the analysis resolves calls by; programs the analysis cannot follow get the plain fine step
(`FineStep.plain`: Step Into, not narrowed).
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from model.static.flow import (EXIT, AnyStack, FlowSet, FlowUnavailable, ProgramFlow, Push, ScopeFlow, _adjust, _Frame, _header_nodes, _init_scopes,
                               _pushes, _statements, program_flow)  # fmt: skip
from protocol.debugger import ActionKind, State, StopReason

# statements whose own line certainly evaluates its header each time a line event stops on it (a `for` header
# evaluates its iterable once, a `with` line stops again on the way out, a `def`/`class` line runs decorators)
CERTAIN_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.If, ast.While, ast.Assert, ast.Raise)
# expressions whose parts are evaluated only sometimes (or later, in a scope of their own): their calls are not certain
SOMETIMES = (ast.Lambda, ast.IfExp, ast.BoolOp)
# the actions whose breakpoint stops `without_unreachable_breakpoints` may leave out
UNREACHABLE_NARROWED = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN, ActionKind.CONTINUE})
# the actions whose stop can be a return to the calling line (`returned_call`)
RETURN_STOPPING = frozenset({ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN})


@dataclass(frozen=True)
class FineStep:
    """One fine step of a coarse action: `kind` (Step Into or Step Over) and whether it must `enter` a call."""

    kind: ActionKind
    enter: bool = False

    @classmethod
    def plain(cls) -> "FineStep":
        return cls(ActionKind.STEP_INTO)


def fine_step(program: str, previous: State, targets: Iterable[int], *, step_out: bool = False) -> FineStep:
    """The fine step to predict after `previous` on the way to `targets` (lines of `program`; for Step Out, the caller too)."""
    top = previous.top
    if top is None or previous.finished or previous.reason is StopReason.EXCEPTION or any(f.file is not None for f in previous.frames):
        return FineStep.plain()
    try:
        flow = program_flow(program)
    except FlowUnavailable:
        return FineStep.plain()
    reach = reaching_functions(program, frozenset(targets))
    if reach is None:
        return FineStep.plain()
    frames = [_frame(flow, f.name, f.line) for f in reversed(previous.frames)]  # outermost first
    if any(f is None for f in frames):
        return FineStep.plain()
    here = frames[-1]
    assert here is not None
    if _reaches(flow, here, reach):
        certain = previous.return_value is None and bool(certain_calls(program, top.line) & _user_callables(flow))
        return FineStep(ActionKind.STEP_INTO, enter=certain)
    if EXIT in here.succ and len(frames) > 1:
        caller = frames[-2]
        assert caller is not None
        if step_out or _reaches(flow, caller, reach):
            return FineStep(ActionKind.STEP_INTO)
    return FineStep(ActionKind.STEP_OVER)


def no_target_ahead(program: str, previous: State, targets: Iterable[int], *, step_out: bool = False) -> bool:
    """Whether a Continue (or with `step_out`, a Step Out) from `previous` certainly stops on none of `targets`: no frame it
    can run on (every frame of the stack for a Continue, the top frame for a Step Out) belongs to a code object that can
    reach one (`reaching_functions`). Its stop is then where the action alone leads (the end, an uncaught exception, or
    the caller), which one model jump predicts (`NeuralDebugger(coarse_steps="auto")`) instead of many fine steps.
    False whenever the analysis cannot say: a frame of another file, a program it cannot follow, a finished state."""
    if not previous.frames or previous.finished or any(f.file is not None for f in previous.frames):
        return False
    try:
        flow = program_flow(program)
    except FlowUnavailable:
        return False
    reach = reaching_functions(program, frozenset(targets))
    if reach is None:
        return False
    lines = {_adjust(flow, t) for t in targets}
    frames = previous.frames  # innermost first
    if step_out:  # the top frame alone, unless leaving it may not end the run there (a generator's yield, a library caller)
        here = _frame(flow, frames[0].name, frames[0].line)
        if here is None:
            return False
        if not (here.generator or here.indirect):
            frames = frames[:1]
    for depth, frame in enumerate(frames):
        scopes = flow.scope_at(frame.name, frame.line)
        if not scopes:
            return False
        # a frame below the top waits on its line for the call above it: one made once is not made again by that line
        done = frames[depth - 1].name if depth and called_once(program, frame.line, frames[depth - 1].name) else None
        if _rest_reaches(flow, _Frame(frame.name, frame.line, scopes), lines, reach, done):
            return False
    return True


def _rest_reaches(flow: ProgramFlow, frame: _Frame, lines: set[int], reach: frozenset[str], done: str | None = None) -> bool:
    """Whether what is left of `frame`'s run can stop on a target: a target line it can go on to (one or more steps of
    its line graph: its own line has had its line event), or a function that reaches one (`reach`) started by the
    rest of its line (but `done`, the call in progress, made once there) or by a line it can go on to. A generator's
    or a library-called frame can run again from its entry: any line of it counts, as for a whole code object
    (`reaching_functions`)."""
    if frame.generator or frame.indirect:
        return any(scope.name in reach for scope in frame.scopes)
    for scope in frame.scopes:
        ahead = _ahead(scope.succ, frame.line)
        if ahead & lines:
            return True
        if any(_reaches(flow, _Frame(scope.name, line, [scope]), reach) for line in ahead):
            return True
        rest = {name for name, _ in _pushes(flow, _Frame(scope.name, frame.line, [scope]))} - ({done} if frame.line not in ahead else set())
        if rest & reach:
            return True
    return False


@lru_cache(maxsize=256)
def called_once(program: str, line: int, name: str) -> bool:
    """Whether the one-line statement on `line` calls `name` (``name(...)`` or ``x.name(...)``) exactly once each time it
    runs: one such call, none inside a lambda, comprehension or generator expression (which may call it again).
    False for statements spread over several lines or a compound statement's header (a loop may run it again), but
    for a ``class`` statement's header and its own body."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    count = 0
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]:
        for stmt in _statements(scope.body):
            if not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
                continue
            if isinstance(stmt, ast.ClassDef) and stmt.name == name and _class_header(stmt, line):
                return True  # a class statement runs its body (a code object of the class's name) once
            if hasattr(stmt, "body"):  # a compound statement: only its header's calls are its own
                heads = [h for h in _header_nodes(stmt) if hasattr(h, "lineno")]
                if stmt.lineno == line or any(h.lineno <= line <= (h.end_lineno or h.lineno) for h in heads):
                    return False
                continue
            if not isinstance(stmt, CERTAIN_STATEMENTS) or stmt.lineno != stmt.end_lineno:
                return False
            for node in ast.walk(stmt):
                if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                    if any(_callee(sub) == name for sub in ast.walk(node)):
                        return False
                elif _callee(node) == name:
                    count += 1
    return count == 1


def _class_header(stmt: ast.ClassDef, line: int) -> bool:
    """Whether `line` is among the class statement's decorator and header lines."""
    first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
    body = stmt.body[0].lineno if stmt.body else stmt.lineno + 1
    return first <= line < max(body, stmt.lineno + 1)


def _callee(node: ast.AST) -> str | None:
    """The name a call calls (``f(...)``: f, ``x.m(...)``: m), or None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Name):
        return node.func.id
    return node.func.attr if isinstance(node.func, ast.Attribute) else None


def _ahead(succ: dict[int, set[int]], line: int) -> set[int]:
    """The lines reachable from `line` in one or more steps (`EXIT` left out)."""
    seen: set[int] = set()
    todo = [n for n in succ.get(line, ()) if n != EXIT]
    while todo:
        here = todo.pop()
        if here not in seen:
            seen.add(here)
            todo.extend(n for n in succ.get(here, ()) if n != EXIT and n not in seen)
    return seen


def back_on_calling_line(previous: State, state: State) -> bool:
    """Whether `state` stops back on a calling line after its call returned (a return stop, no line event: a breakpoint
    there does not hit): a shorter stack whose top frame stands where `previous`'s frame at that depth stood. A stop after
    Step Over on the next line shows the stepped-over call's return value too, and is a line event."""
    if not state.frames or len(state.frames) >= len(previous.frames):
        return False
    below = previous.frames[len(previous.frames) - len(state.frames)]
    return (below.name, below.line, below.file) == (state.frames[0].name, state.frames[0].line, state.frames[0].file)


def entering(flow: FlowSet, depth: int) -> FlowSet:
    """`flow` (after Step Into from a stack of `depth` frames) narrowed to the stops that enter a call of the top
    frame's line: its new-frame step shapes, breakpoints and exceptions (not the end of the run at a limit: the
    session's own fine step); unchanged when it has no such shape."""
    pushes = [s for s in flow.step if isinstance(s, Push) and s.depth == depth]
    if flow.unconstrained or not pushes:
        return flow
    return replace(flow, step=pushes, exit=False, returned=frozenset(), limit_end=False)


def without_unreachable_breakpoints(flow: FlowSet, program: str, previous: State, action: ActionKind,
                                    breakpoints: Iterable[int]) -> FlowSet:  # fmt: skip
    """`flow` (after a forward step, a Continue or a Step Out from `previous`) with its breakpoint stops narrowed to the
    breakpoint lines that can be reached on the way (`no_target_ahead`, asked per line: what is left of the run of every
    frame, or for Step Out of the top frame, starts no line and no call that can stop on it; a class body's line, run
    once, is not stopped on again), none when no line can be: the stop is then where the action alone leads. A step
    passes through a part of the line events a Continue from the same stop would, so what no Continue reaches, no step
    does. Unchanged for a run to a line (its line is a target too), inverse actions, or when unsure."""
    if flow.unconstrained or not flow.breakpoint or action not in UNREACHABLE_NARROWED:
        return flow
    try:
        analysis = program_flow(program)
    except FlowUnavailable:
        return flow
    by_line: dict[int, list[int]] = {}
    for point in set(breakpoints):
        by_line.setdefault(_adjust(analysis, point), []).append(point)
    out = action is ActionKind.STEP_RETURN
    unreached = {line for line, points in by_line.items() if no_target_ahead(program, previous, points, step_out=out)}
    if not unreached:
        return flow
    shapes = []
    for shape in flow.breakpoint:
        if isinstance(shape, AnyStack) and shape.top_lines is not None:
            if shape.top_lines - unreached:
                shapes.append(replace(shape, top_lines=shape.top_lines - unreached))
        else:
            shapes.append(shape)
    return replace(flow, breakpoint=shapes)


def returned_call(before: State | None, action: ActionKind | None, previous: State) -> str | None:
    """The function whose call came back to `previous`, when `previous` (reached from `before` by `action`) is a step's
    stop back on its calling line (a return stop, no line event: `back_on_calling_line`); None otherwise. A breakpoint
    on a calling line in a loop is a new line event, and a Continue stops only on those: only steps count."""
    if before is None or action not in RETURN_STOPPING or previous.reason is not StopReason.STEP:
        return None
    if len(before.frames) != len(previous.frames) + 1 or not back_on_calling_line(before, previous):
        return None
    return before.frames[0].name


def without_returned_call(flow: FlowSet, program: str, previous: State, returned: str) -> FlowSet:
    """`flow` (after Step Into from `previous`, a stop back on its calling line after the call of `returned` came back)
    without a new frame of `returned` on top: the line's statement calls it once each time it runs (`called_once`) and
    no library code can call it (a plain function of the program: not a generator, not `indirect`), so the rest of the
    line does not start it again. Exception and breakpoint stops keep their shapes (an exception shows the stack where
    it was raised). Unchanged when any of that is not certain."""
    top = previous.top
    if flow.unconstrained or top is None or top.file is not None:
        return flow
    try:
        scopes = [s for s in program_flow(program).scopes if s.name == returned]
    except FlowUnavailable:
        return flow
    plain = bool(scopes) and all(s.kind == "function" and not s.generator and not s.indirect for s in scopes)
    if not (plain and called_once(program, top.line, returned)) and not _class_statement_on(scopes, top.line):
        return flow
    depth = len(previous.frames)
    step = []
    for shape in flow.step:
        if isinstance(shape, Push) and shape.depth == depth:
            frames = frozenset(f for f in shape.frames if f[0] != returned)
            if frames:
                step.append(Push(depth, frames))
        else:
            step.append(shape)
    return replace(flow, step=step)


def _class_statement_on(scopes: Sequence[ScopeFlow], line: int) -> bool:
    """Whether `scopes` are one class body whose class statement's header (decorators to the ``class`` line) holds
    `line`: that statement runs its body once; nothing else runs a class body."""
    if len(scopes) != 1 or scopes[0].kind != "class":
        return False
    node = scopes[0].node
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    return first <= line < node.body[0].lineno


def without_recalled_top(flow: FlowSet, program: str, previous: State, action: ActionKind) -> FlowSet:
    """`flow` (after a Step Into or Step Over from `previous`) without the stops where the top frame came back to its
    caller's line and that line starts the top frame's function again: the line calls it once (`without_returned_call`,
    seen from the caller). Unchanged for a stack of one frame, other actions, or when unsure."""
    if action not in (ActionKind.STEP_INTO, ActionKind.STEP_OVER) or len(previous.frames) < 2:
        return flow
    caller = previous.model_copy(update={"frames": previous.frames[1:], "return_value": None})
    return without_returned_call(flow, program, caller, previous.frames[0].name)


def _frame(flow: ProgramFlow, name: str, line: int) -> _Frame | None:
    scopes = flow.scope_at(name, line)
    return _Frame(name, line, scopes) if scopes else None


def _reaches(flow: ProgramFlow, frame: _Frame, reach: frozenset[str]) -> bool:
    """Whether the rest of `frame`'s line can start a function that reaches a target."""
    return any(name in reach for name, _ in _pushes(flow, frame))


def _user_callables(flow: ProgramFlow) -> set[str]:
    """Names whose plain call starts user code: functions that are not methods, and classes with a user
    ``__init__``/``__new__``/``__post_init__``."""
    methods = {id(stmt) for node, _ in flow.classes.values() for stmt in node.body}
    functions = {name for name, scopes in flow.functions.items() if any(id(s.node) not in methods for s in scopes)}
    return functions | {name for name in flow.classes if _init_scopes(name, flow.classes, flow.functions)}


@lru_cache(maxsize=64)
def reaching_functions(program: str, targets: frozenset[int]) -> frozenset[str] | None:
    """Names of the code objects whose run can stop on one of `targets`: one holding a target line, or one with a
    line that can start (call, resume, or have called back) one that does. None when the program cannot be analysed."""
    try:
        flow = program_flow(program)
    except FlowUnavailable:
        return None
    lines = {_adjust(flow, t) for t in targets}
    reach = {scope.name for scope in flow.scopes if scope.lines & lines}
    starts = {(scope.name, line): {n for n, _ in _pushes(flow, _Frame(scope.name, line, [scope]))}
              for scope in flow.scopes for line in scope.lines}  # fmt: skip
    grown = True
    while grown:
        grown = False
        for (name, _), started in starts.items():
            if name not in reach and started & reach:
                reach.add(name)
                grown = True
    return frozenset(reach)


@lru_cache(maxsize=256)
def certain_calls(program: str, line: int) -> frozenset[str]:
    """Names called as plain ``name(...)`` by the statement whose own code is all on `line`, each time a line event
    stops there: not under a condition (``if``-expression branches, ``and``/``or`` operands after the first, lambdas,
    comprehensions), nor a name the program binds otherwise than by ``def``/``class`` (a parameter, an assignment, an
    import could make it something else). Empty when the line holds no such statement."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    rebound = _rebound_names(tree)
    found: set[str] = set()
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]:
        for stmt in _statements(scope.body):
            if not isinstance(stmt, CERTAIN_STATEMENTS):
                continue
            heads = _header_nodes(stmt)
            if not heads or any(h.lineno != line or (h.end_lineno or h.lineno) != line for h in heads) or stmt.lineno != line:
                continue
            for head in heads:
                found |= {name for name in _always_called(head) if name not in rebound}
    return frozenset(found)


def _always_called(node: ast.AST) -> Iterable[str]:
    """Names called as ``name(...)`` wherever evaluating `node` certainly evaluates the call."""
    if isinstance(node, ast.BoolOp):
        yield from _always_called(node.values[0])
        return
    if isinstance(node, ast.IfExp):
        yield from _always_called(node.test)
        return
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        yield from _always_called(node.generators[0].iter)  # evaluated before the comprehension runs; the rest inside it
        return
    if isinstance(node, SOMETIMES):
        return
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        yield node.func.id
    for child in ast.iter_child_nodes(node):
        yield from _always_called(child)


def _rebound_names(tree: ast.Module) -> set[str]:
    """Names bound anywhere by something else than a ``def`` or ``class`` statement."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names
