"""One call posed as a program, as CruxEval poses its problems (train/eval/cruxeval.py, generalised to any call).

`predict_call` (CruxEval-O): the program is the source, a blank line, then ``result = <call>``. The
session stops on entry, steps over the module's statements to the calling line, steps into the
call and out of it; the answer is the value returned on the calling line, or the exception the call
raised. The same steps on a recorded session (`model.oracle.OracleDebugger`) give the real answer.

`predict_inputs` (CruxEval-I): the calling line reads ``result = function(...)`` (the arguments are
the question, so they are not shown) and the session starts just after the call returned `output`;
one ``inv_step_call`` predicts the function's first stop, whose locals are its arguments. Several
answers are drawn and ranked (`model.decode.rerank`); each one's confidence is its share of the
probability among the answers drawn (one answer alone: its arguments' lowest calibrated confidence).

Nothing here runs the code: the sessions predict it (or, for the oracle, tracegen runs it in its sandbox).
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tracegen.posing import HIDDEN, join_arguments, signature_params

RESULT = "result"  # the calling line's target: `result = <call>`
MAX_CALL_STOPS = 12  # stops after the calling line before giving up (a step out per frame of a recursion, a raise)


class CallError(ValueError):
    """A source, call or output that cannot be posed; the message says what is wrong."""


@dataclass(frozen=True)
class PosedCall:
    """A call as a program: its text, the calling line, the called name, the module's statements before the call."""

    program: str
    call_line: int
    function: str
    statements: int


@dataclass(frozen=True)
class CallAnswer:
    returned: str | None = None
    raised: str | None = None
    output: str = ""
    confidence: float = 0.0
    note: str | None = None


def check_source(source: str) -> ast.Module:
    """The parsed source; CallError naming the line of a syntax error."""
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise CallError(f"the source does not compile: {exc.msg} (line {exc.lineno})") from None
    except (ValueError, RecursionError) as exc:
        raise CallError(f"the source cannot be parsed: {exc}") from None


def pose_call(source: str, call: str) -> PosedCall:
    """The program ``source`` + ``result = <call>``; CallError unless `call` is one call of a function or method."""
    check_source(source)
    try:
        node = ast.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        raise CallError(f"not a Python expression: {call[:200]!r}") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
        raise CallError(f"{call[:200]!r} is not a call: give one call such as f(1, [2, 3]) or obj.method('x')")
    text = call.strip() if "\n" not in call.strip() else ast.unparse(node)  # the calling line is one line
    program = f"{source.rstrip()}\n\n{RESULT} = {text}\n"
    tree = check_source(program)
    name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
    return PosedCall(program=program, call_line=tree.body[-1].lineno, function=name, statements=len(tree.body) - 1)


def _stop_confidence(session: Any) -> float:
    measure = getattr(session, "stop_confidence", None)
    return float(measure()) if measure is not None else 1.0


def _value_confidence(session: Any, name: str | None) -> float:
    """The calibrated confidence of the pending return value (name None) or of a local of the top frame."""
    if name is None:
        measure = getattr(session, "return_confidence", None)
        return float(measure()) if measure is not None else 1.0
    return float(session.confidence().get(name, 1.0))


def _at_call(state: State, posed: PosedCall) -> bool:
    return len(state.frames) == 1 and state.frames[0].name == "<module>" and state.frames[0].line == posed.call_line


def _where(state: State) -> str:
    return "the program exited" if state.finished else " < ".join(f"{n}:{line}" for n, line in state.location)


def run_call(session: Any, posed: PosedCall) -> CallAnswer:
    """Step a fresh session through the posed call (see the module docstring); its answer."""
    state = session.start()
    for _ in range(posed.statements):
        if _at_call(state, posed) or state.finished or state.reason is StopReason.EXCEPTION:
            break
        state = session.step(Action(kind=ActionKind.STEP_OVER))
    if not _at_call(state, posed):
        return CallAnswer(note=f"the program did not reach the call on line {posed.call_line} (it stopped at {_where(state)})")
    confidences: list[float] = []
    output: list[str] = []
    action = ActionKind.STEP_INTO
    for _ in range(MAX_CALL_STOPS):
        state = session.step(Action(kind=action))
        confidences.append(_stop_confidence(session))
        output.append(state.stdout)
        answer = _answer(session, state, posed)
        if answer is not None:
            returned, raised, value_confidence = answer
            return CallAnswer(returned=returned, raised=raised, output="".join(output), confidence=min(confidences + [value_confidence]))
        # inside the call (one step out per frame of a recursion), or on the calling line before the raise
        action = ActionKind.STEP_RETURN if len(state.frames) > 1 else ActionKind.STEP_OVER
    return CallAnswer(output="".join(output), confidence=min(confidences),
                      note=f"no answer within {MAX_CALL_STOPS} stops (last at {_where(state)})")  # fmt: skip


def _answer(session: Any, state: State, posed: PosedCall) -> tuple[str | None, str | None, float] | None:
    """(returned, raised, confidence of the value) when `state` answers the question, else None."""
    if state.reason is StopReason.EXCEPTION and state.exception is not None:
        return None, f"{state.exception.type}: {state.exception.message}".rstrip(": "), 1.0
    if state.finished:
        if state.exit_code:
            return None, f"the program exited with code {state.exit_code} during the call", 1.0
        return None, None, 0.0  # exited normally without a stop after the call: nothing to read
    if _at_call(state, posed) and state.return_value is not None:
        return state.return_value.value, None, _value_confidence(session, None)
    if len(state.frames) == 1 and not _at_call(state, posed) and RESULT in state.frames[0].locals:
        return state.frames[0].locals[RESULT], None, _value_confidence(session, RESULT)  # past the calling line (a builtin's call)
    return None


# ------------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True)
class PosedInputs:
    program: str
    call_line: int
    function: str
    params: tuple[tuple[str, str], ...]  # (name, kind) in signature order; kind: pos | var | kwonly | varkw


def pose_inputs(source: str, function: str, output: str) -> PosedInputs:
    """The program ``source`` + ``result = function(...)``; CallError unless `function` is a top-level function
    of the source and `output` one Python expression (a repr)."""
    tree = check_source(source)
    defined = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if function not in defined:
        known = ", ".join(sorted(defined)) or "none"
        raise CallError(f"no top-level function {function!r} in the source (defined: {known})")
    func = defined[function]
    if isinstance(func, ast.AsyncFunctionDef):
        raise CallError(f"{function} is a coroutine function: its call returns a coroutine, not an output")
    try:
        ast.parse(output.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        raise CallError(f"the output must be one Python value as repr writes it (e.g. [1, 2] or 'text'), not {output[:200]!r}") from None
    program = f"{source.rstrip()}\n\n{RESULT} = {function}({HIDDEN})\n"
    return PosedInputs(program=program, call_line=len(program.splitlines()), function=function, params=tuple(signature_params(func)))


def run_inputs(session: Any, posed: PosedInputs, output: str, count: int) -> tuple[list[tuple[str, float]], str | None]:
    """Up to `count` ranked (arguments, confidence) for a call of `posed.function` that returned `output`, and a note."""
    line = posed.program.splitlines()[posed.call_line - 1]
    start = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=posed.call_line, source=line.strip())],
                  return_value=ReturnValue(name=posed.function, value=output.strip()))  # fmt: skip
    session.start_from(start)
    chosen = session.step(Action(kind=ActionKind.INV_STEP_CALL))
    ranking = list(getattr(session, "ranking", []) or [])
    weights = getattr(session, "check_weight", 0.0), getattr(session, "evidence_weight", 0.0), getattr(session, "stale_penalty", 0.0)
    drawn = [(state, candidate.total(*weights)) for state, candidate in ranking] or [(chosen, 0.0)]
    scores: dict[str, float] = {}
    for state, total in drawn:
        if state.top is None or state.top.name != posed.function:
            continue
        arguments = join_arguments(posed.params, state.top.locals)
        if arguments is not None and not math.isinf(total):
            scores[arguments] = math.log(math.exp(scores[arguments]) + math.exp(total)) if arguments in scores else total
    if not scores:
        return [], f"no answer named every argument of {posed.function} ({', '.join(n for n, _ in posed.params)})"
    if not ranking:  # one answer drawn: its arguments' calibrated confidence (the lowest)
        return [(next(iter(scores)), round(min(session.confidence().values(), default=1.0), 4))], None
    top = max(scores.values())
    mass = sum(math.exp(s - top) for s in scores.values())
    ranked = sorted(((arguments, math.exp(s - top) / mass) for arguments, s in scores.items()), key=lambda kv: -kv[1])
    return [(arguments, round(share, 4)) for arguments, share in ranked[: max(1, count)]], None
