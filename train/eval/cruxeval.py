"""CruxEval posed as debugging sessions, and scored the way CruxEval's own harness scores it.

A problem ``{"id", "code", "input", "output"}`` becomes a program of the project-wide shape: the
function source, one blank line, ``result = f(<input>)``.

* Output prediction (CruxEval-O): stop on entry, step over the module's statements to the calling
  line, step into ``f``, then ``step_return`` (or, ``via="breakpoint"``, a one-off breakpoint on
  ``f``'s return line, the other return lines as session breakpoints, then (breakpoints cleared)
  ``step_return`` to the calling line, once per frame of f on the stack (a recursive f stops in its
  innermost call): under debugpy's rules a ``step_over`` on a return line stops on the caller's
  *next* line, past the calling line and its return value, and a ``step_into`` enters any
  comprehension, lambda or call on the return line). The prediction is the return value (``State.return_value``) shown on the
  calling line.
* ``via="fine"``: from the calling line, ``step_into`` again and again (every line of f and of the
  user code it calls, one predicted stop each) until the predicted state is back in the module
  frame with f's return value (``(return) f`` on the calling line, or ``result`` assigned), within
  `FINE_BUDGET` steps. ``step_into`` because it is the one fine action whose stop after f's last
  line is the calling line with the return value (``step_over`` from f's last line goes past it).
* Input prediction (CruxEval-I): the session starts on the calling line just after ``f`` returned
  (return value: the expected output) and takes ``inv_step_call``; the predicted entry state's
  locals are the arguments, joined in signature order into an input string. The calling line is
  written ``result = f(...)``: the real input is the answer, so it must not be in the prompt.

Scoring (`check_output`, `check_input`) runs ``assert f(<input>) == <prediction>`` (or
``assert f(<prediction>) == <output>``) in a sandboxed child process with tracegen's limits and a
wall-clock timeout. A prediction must be one Python expression (an argument list for inputs), so a
prediction cannot smuggle in statements.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tracegen.posing import HIDDEN, join_arguments, signature_params
from tracegen.sandbox import Limits, _child_env, _kill_group, _preexec

Mode = Literal["output", "input"]
Via = Literal["step_return", "breakpoint", "fine"]
VIAS: tuple[str, ...] = ("step_return", "breakpoint", "fine")
FUNCTION = "f"
HIDDEN_INPUT = HIDDEN  # the calling line's argument text in input mode (tracegen.posing poses training data the same way)
CHECK_LIMITS = Limits(cpu_seconds=5, wall_seconds=5.0, memory_bytes=1 << 30)
FINE_BUDGET = 200  # via="fine": predicted stops after the calling line before giving up
RESULT = "result"  # the calling line's target: `result = f(...)`


class Problem(BaseModel):
    """One CruxEval problem: the function source, its input (argument text) and output (a repr)."""

    id: str
    code: str
    input: str
    output: str


class ProblemsError(ValueError):
    """The problems file cannot be read; the message says why."""


def load_problems(path: str | Path, limit: int | None = None) -> list[Problem]:
    """The problems of a CruxEval JSON-lines file, in file order (the first `limit` of them)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemsError(f"cannot read the problems file {path}: {exc}") from None
    problems: list[Problem] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            problems.append(Problem.model_validate_json(line))
        except ValidationError as exc:
            raise ProblemsError(f"{path}:{number}: not a CruxEval problem ({exc.error_count()} errors: {exc.errors()[0]['msg']})") from None
        if limit is not None and len(problems) >= limit:
            break
    if not problems:
        raise ProblemsError(f"no problems in {path}")
    return problems


# ------------------------------------------------------------------------------------- posing


@dataclass(frozen=True)
class Posed:
    """A problem as a program: its text, the calling line, the module statements before it, f's return lines."""

    program: str
    call_line: int
    module_lines: tuple[int, ...]  # lines of the top-level statements before the calling line
    return_lines: tuple[int, ...]  # lines of f's return statements (f's own, not nested functions')
    params: tuple[tuple[str, str], ...]  # (name, kind) in signature order; kind: pos | var | kwonly | varkw


def program_text(code: str, call_args: str) -> str:
    """The project-wide shape: the function source, one blank line, ``result = f(<args>)``."""
    return f"{code.rstrip()}\n\nresult = {FUNCTION}({call_args})\n"


def pose(problem: Problem, mode: Mode) -> Posed:
    """The program for `mode` (input mode hides the input on the calling line) and its landmarks."""
    program = program_text(problem.code, problem.input if mode == "output" else HIDDEN_INPUT)
    try:
        tree = ast.parse(program)
    except SyntaxError as exc:
        raise ValueError(f"{problem.id}: the posed program does not parse: {exc}") from None
    call = tree.body[-1]
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == FUNCTION), None)
    if func is None:
        raise ValueError(f"{problem.id}: the code defines no function {FUNCTION}")
    return Posed(
        program=program,
        call_line=call.lineno,
        module_lines=tuple(n.lineno for n in tree.body[:-1]),
        return_lines=tuple(sorted(_return_lines(func))),
        params=tuple(signature_params(func)),
    )


def _return_lines(func: ast.FunctionDef) -> set[int]:
    lines: set[int] = set()
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            lines.add(node.lineno)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return lines


# ---------------------------------------------------------------------------------- predicting


@dataclass
class Prediction:
    """What a session predicted for one problem (None: no answer) and, if it failed, why."""

    prediction: str | None
    note: str | None = None
    steps: int = 0


def predict_output(session: Any, posed: Posed, via: Via = "step_return", fine_budget: int = FINE_BUDGET) -> Prediction:
    """Step a started-from-entry session into f and out again; the return value on the calling line."""
    state = session.start()
    steps = 0
    for _ in posed.module_lines:
        if _at_call(state, posed):
            break
        state = session.step(Action(kind=ActionKind.STEP_OVER))
        steps += 1
    if not _at_call(state, posed):
        return Prediction(None, f"did not reach the calling line {posed.call_line}: {_where(state)}", steps)
    if via == "fine":
        return predict_fine(session, state, posed, steps, fine_budget)
    state = session.step(Action(kind=ActionKind.STEP_INTO))
    steps += 1
    if state.top is None or state.top.name != FUNCTION:
        return Prediction(None, f"step_into did not enter {FUNCTION}: {_where(state)}", steps)
    if via == "breakpoint":
        if not posed.return_lines:
            return Prediction(None, f"{FUNCTION} has no return statement to break on", steps)
        *others, last = posed.return_lines
        if state.top.line not in posed.return_lines:  # already on a return line (a one-line f): no jump needed
            session.set_breakpoints(list(others))
            state = session.step(Action(kind=ActionKind.BREAKPOINT, line=last, source=_line_text(posed.program, last)))
            steps += 1
        if state.top is None or state.top.name != FUNCTION:
            return Prediction(None, f"the breakpoint did not stop in {FUNCTION}: {_where(state)}", steps)
        session.set_breakpoints([])  # a return line run again (a multi-line return, a recursion) must not stop step_return
        for _ in range(max(1, len(state.frames) - 1)):  # a recursive f stopped in its innermost call: return from each
            state = session.step(Action(kind=ActionKind.STEP_RETURN))  # step_over would pass the calling line
            steps += 1
            if _at_call(state, posed) or state.finished:
                break
        steps -= 1
    else:
        state = session.step(Action(kind=ActionKind.STEP_RETURN))
    steps += 1
    if not _at_call(state, posed):
        return Prediction(None, f"did not return to the calling line: {_where(state)}", steps)
    if state.return_value is None:
        return Prediction(None, "no return value on the calling line", steps)
    return Prediction(state.return_value.value, None, steps)


def predict_fine(session: Any, state: State, posed: Posed, steps: int = 0, budget: int = FINE_BUDGET) -> Prediction:
    """From the stop on the calling line, `step_into` until the state is back in the module frame with
    f's return value; at most `budget` steps (`Prediction.steps` counts them on top of `steps`)."""
    fine = 0
    while True:
        if fine > 0:
            answer = _fine_answer(state, posed)
            if answer is not None:
                return Prediction(answer, None, steps + fine)
            if state.finished:
                return Prediction(None, f"the program exited before {FUNCTION} returned ({fine} fine steps)", steps + fine)
            if len(state.frames) == 1 and not _at_call(state, posed):
                return Prediction(None, f"back in the module without {FUNCTION}'s return value: {_where(state)}", steps + fine)
        if fine >= budget:
            return Prediction(None, f"no return from {FUNCTION} within {budget} fine steps: {_where(state)}", steps + fine)
        state = session.step(Action(kind=ActionKind.STEP_INTO))
        fine += 1


def _fine_answer(state: State, posed: Posed) -> str | None:
    """f's return value if `state` is back in the module frame after the call: ``(return) f`` on the
    calling line, or `result` assigned (a stop past the calling line)."""
    if len(state.frames) != 1 or state.frames[0].name != "<module>":
        return None
    if _at_call(state, posed) and state.return_value is not None and state.return_value.name == FUNCTION:
        return state.return_value.value
    return state.frames[0].locals.get(RESULT)


def return_state(posed: Posed, output: str) -> State:
    """The stop on the calling line just after f returned `output` (CruxEval-I's starting point)."""
    frame = Frame(name="<module>", line=posed.call_line, source=_line_text(posed.program, posed.call_line), locals={})
    return State(reason=StopReason.STEP, frames=[frame], return_value=ReturnValue(name=FUNCTION, value=output))


def predict_input(session: Any, posed: Posed, output: str) -> Prediction:
    """From the return state, `inv_step_call`: f's predicted entry locals joined into an argument text."""
    session.start_from(return_state(posed, output))
    state = session.step(Action(kind=ActionKind.INV_STEP_CALL))
    return _arguments_of(state, posed, 1)


def predict_input_oracle(session: Any, posed: Posed) -> Prediction:
    """The oracle cannot step backwards: read f's entry locals from the recording (a check of joining and scoring)."""
    state = session.start()
    steps = 0
    while not _at_call(state, posed) and not state.finished and steps <= len(posed.module_lines):
        state = session.step(Action(kind=ActionKind.STEP_OVER))
        steps += 1
    state = session.step(Action(kind=ActionKind.STEP_INTO))
    return _arguments_of(state, posed, steps + 1)


def _arguments_of(state: State, posed: Posed, steps: int) -> Prediction:
    if state.top is None or state.top.name != FUNCTION:
        return Prediction(None, f"the predicted state is not in {FUNCTION}: {_where(state)}", steps)
    joined = join_arguments(posed.params, state.top.locals)
    if joined is None:
        missing = [n for n, _ in posed.params if n not in state.top.locals]
        return Prediction(None, f"the predicted entry state lacks the arguments {missing}", steps)
    return Prediction(joined, None, steps)


def _at_call(state: State, posed: Posed) -> bool:
    return len(state.frames) == 1 and state.frames[0].name == "<module>" and state.frames[0].line == posed.call_line


def _where(state: State) -> str:
    if state.finished:
        return "the program exited"
    return " < ".join(f"{name}:{line}" for name, line in state.location) or "no frames"


def _line_text(program: str, line: int) -> str:
    lines = program.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


# ------------------------------------------------------------------------------------ scoring


@dataclass(frozen=True)
class CheckResult:
    """How one scored prediction ended: ``passed``, ``failed`` (assertion or error), ``timeout``, ``invalid`` (not an expression)."""

    passed: bool
    how: str
    detail: str = ""


def check_output(problem: Problem, prediction: str | None, limits: Limits = CHECK_LIMITS) -> CheckResult:
    """Run ``assert f(<input>) == <prediction>`` after the problem's code, sandboxed."""
    if prediction is None:
        return CheckResult(False, "invalid", "no prediction")
    if not _is_expression(prediction):
        return CheckResult(False, "invalid", "the prediction is not one Python expression")
    return run_check(f"{problem.code}\nassert {FUNCTION}({problem.input}) == ({prediction})\n", limits)


def check_input(problem: Problem, prediction: str | None, limits: Limits = CHECK_LIMITS) -> CheckResult:
    """Run ``assert f(<prediction>) == <output>`` after the problem's code, sandboxed."""
    if prediction is None:
        return CheckResult(False, "invalid", "no prediction")
    if not _is_argument_list(prediction):
        return CheckResult(False, "invalid", "the prediction is not an argument list")
    return run_check(f"{problem.code}\nassert {FUNCTION}({prediction}) == {problem.output}\n", limits)


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def _is_argument_list(text: str) -> bool:
    try:
        tree = ast.parse(f"{FUNCTION}({text})", mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return isinstance(tree.body, ast.Call) and isinstance(tree.body.func, ast.Name) and ast.unparse(tree.body.func) == FUNCTION


def run_check(source: str, limits: Limits = CHECK_LIMITS) -> CheckResult:
    """Run `source` with ``python -I`` in a fresh temporary folder under tracegen's sandbox limits."""
    with tempfile.TemporaryDirectory(prefix="cruxeval-") as tmp:
        script = Path(tmp) / "check.py"
        script.write_text(source, encoding="utf-8")
        with open(os.devnull, "wb") as null:
            proc = subprocess.Popen(
                [sys.executable, "-I", str(script)], stdin=subprocess.DEVNULL, stdout=null, stderr=subprocess.PIPE,
                cwd=tmp, preexec_fn=_preexec(limits), start_new_session=True, env=_child_env(),
            )  # fmt: skip
            try:
                _, err = proc.communicate(timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                _kill_group(proc.pid)
                proc.communicate()
                return CheckResult(False, "timeout", f"no answer within {limits.wall_seconds:g} s")
            finally:
                _kill_group(proc.pid)
    if proc.returncode == 0:
        return CheckResult(True, "passed")
    tail = err.decode("utf-8", errors="replace").strip().splitlines()
    if proc.returncode is not None and proc.returncode < 0:
        return CheckResult(False, "timeout" if proc.returncode in (-9, -24) else "failed", f"killed by signal {-proc.returncode}")
    return CheckResult(False, "failed", tail[-1][:300] if tail else f"exit code {proc.returncode}")


# ---------------------------------------------------------------------------------- the run


SessionFactory = Callable[[str], Any]  # program text -> a DebugSession (not yet started)


def evaluate_problem(problem: Problem, mode: Mode, via: Via, make_session: SessionFactory, oracle: bool = False,
                     fine_budget: int = FINE_BUDGET, keep_candidates: bool = False) -> dict[str, Any]:  # fmt: skip
    """Pose, predict and score one problem; the predictions.jsonl record. `keep_candidates`: the record also lists
    every ranked answer of the session's last ranked step (`model.decode.rerank`), each scored: the arguments of
    inv_step_call (`ranked_answers`), or f's return value after the last step_return (`ranked_returns`)."""
    start = time.perf_counter()
    record: dict[str, Any] = {"id": problem.id, "prediction": None, "passed": False}
    try:
        posed = pose(problem, mode)
    except ValueError as exc:
        record.update(how="invalid", note=str(exc))
        return record
    session = make_session(posed.program if mode == "output" or not oracle else program_text(problem.code, problem.input))
    try:
        if mode == "output":
            result = predict_output(session, posed, via, fine_budget)
            if keep_candidates and via != "fine":
                record["candidates"] = ranked_returns(problem, posed, getattr(session, "ranking", []))
        elif oracle:
            result = predict_input_oracle(session, posed)
        else:
            result = predict_input(session, posed, problem.output)
            if keep_candidates:
                record["candidates"] = ranked_answers(problem, posed, getattr(session, "ranking", []))
    except Exception as exc:  # noqa: BLE001 - one problem's failure (a SessionError, a backend error) is a failed prediction
        result = Prediction(None, f"{type(exc).__name__}: {exc}")
    finally:
        try:
            session.close()
        except Exception:  # noqa: BLE001
            pass
    check = check_output(problem, result.prediction) if mode == "output" else check_input(problem, result.prediction)
    record.update(prediction=result.prediction, passed=check.passed, how=check.how, steps=result.steps,
                  seconds=round(time.perf_counter() - start, 3))  # fmt: skip
    if result.note or check.detail:
        record["note"] = result.note or check.detail
    return record


def ranked_answers(problem: Problem, posed: Posed, ranking: list[tuple[State, Any]]) -> list[dict[str, Any]]:
    """Each ranked answer of CruxEval-I's inv_step_call (draw order): its arguments, scores and whether it passes."""
    answers = []
    for state, candidate in ranking:
        arguments = _arguments_of(state, posed, 1).prediction
        answers.append({"prediction": arguments, "likelihood": round(candidate.likelihood, 4), "violations": candidate.violations,
                        "greedy": candidate.greedy, "passed": check_input(problem, arguments).passed})  # fmt: skip
    return answers


def ranked_returns(problem: Problem, posed: Posed, ranking: list[tuple[State, Any]]) -> list[dict[str, Any]]:
    """Each ranked answer of CruxEval-O's last step (draw order): f's return value on the calling line (None when the
    answer is not that stop), its scores and whether it passes."""
    answers = []
    for state, candidate in ranking:
        value = state.return_value.value if _at_call(state, posed) and state.return_value is not None else None
        answers.append({"prediction": value, "likelihood": round(candidate.likelihood, 4), "violations": candidate.violations,
                        "greedy": candidate.greedy, "passed": value is not None and check_output(problem, value).passed})  # fmt: skip
    return answers


def summarize(records: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
    """The summary.json content: pass@1 (percent), counts by outcome, and the run's settings."""
    n = len(records)
    passed = sum(1 for r in records if r["passed"])
    outcomes: dict[str, int] = {}
    for r in records:
        outcomes[r.get("how", "invalid")] = outcomes.get(r.get("how", "invalid"), 0) + 1
    no_answer = sum(1 for r in records if r["prediction"] is None)
    seconds = sum(float(r.get("seconds", 0.0)) for r in records)
    steps = sum(int(r.get("steps", 0)) for r in records)
    return {"pass@1": round(100.0 * passed / n, 2) if n else 0.0, "n": n, "passed": passed, "no_prediction": no_answer,
            "outcomes": outcomes, "seconds_per_problem": round(seconds / n, 3) if n else 0.0,
            "steps_per_problem": round(steps / n, 2) if n else 0.0, **settings}  # fmt: skip
