"""Conditional breakpoints, hit counts and logpoints: judged on predicted values, compared with real debugpy."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.conditions import (BreakpointRule, ConditionError, ConditionRaised, evaluate_condition,
                                format_log_message, hit_matches, should_stop)
from protocol.debugger import Action, ActionKind, Frame, State, StopReason
from tests.dap_client import TcpAdapter


def stopped(**values: object) -> State:
    module = Frame(name="<module>", line=1, locals={"g": repr([1, 2, 3])})
    top = Frame(name="f", line=3, locals={k: repr(v) for k, v in values.items()})
    return State(reason=StopReason.BREAKPOINT, frames=[top, module])


small = st.one_of(st.integers(-50, 50), st.text(alphabet="abc", max_size=3), st.booleans())
OPS = ["==", "!=", "<", "<=", ">", ">="]


@given(a=st.integers(-1000, 1000), b=st.integers(-1000, 1000), op=st.sampled_from(OPS),
       arith=st.sampled_from(["+", "-", "*", "%", "//"]))
def test_arithmetic_comparisons_agree_with_python(a: int, b: int, op: str, arith: str) -> None:
    expression = f"a {arith} 7 {op} b"
    assert evaluate_condition(expression, stopped(a=a, b=b)) == eval(expression, {}, {"a": a, "b": b})  # noqa: S307


@given(x=small, y=small)
def test_boolean_logic_and_containers_agree_with_python(x: object, y: object) -> None:
    env = {"x": x, "y": y, "items": [x, y], "d": {"k": x}}
    for expression in ["x == y or not x", "x in items and d['k'] == x", "len(items) == 2 and items[0] == x",
                       "(x, y) == (y, x)", "isinstance(x, int) and not isinstance(x, bool)"]:
        assert evaluate_condition(expression, stopped(**env)) == eval(expression, {}, env), expression  # noqa: S307


def test_globals_paths_and_refusals() -> None:
    state = stopped(n=3, obj_list=[{"a": 1}])
    assert evaluate_condition("g[-1] == n", state) is True
    assert evaluate_condition("obj_list[0]['a'] + 1 == 2", state) is True
    with pytest.raises(ConditionRaised):
        evaluate_condition("missing > 1", state)
    with pytest.raises(ConditionRaised):
        evaluate_condition("n / 0", state)
    with pytest.raises(ConditionError):
        evaluate_condition("open('x')", state)  # never runs code
    with pytest.raises(ConditionError):
        evaluate_condition("'a' * 10**9", state)  # nor builds huge values
    with pytest.raises(ConditionError):
        evaluate_condition("n ** 100000", state)


def test_non_literal_values_cannot_be_judged() -> None:
    state = State(reason=StopReason.BREAKPOINT, frames=[Frame(name="<module>", line=1, locals={"o": "<Foo object at 0x?>"})])
    with pytest.raises(ConditionError) as caught:
        evaluate_condition("o == 1", state)
    assert not isinstance(caught.value, ConditionRaised)


@pytest.mark.parametrize("text,hits", [("3", [3]), ("== 3", [3]), (">= 4", [4, 5, 6]), ("> 4", [5, 6]),
                                       ("< 3", [1, 2]), ("<=2", [1, 2]), ("% 2", [2, 4, 6])])
def test_hit_conditions_as_debugpy_reads_them(text: str, hits: list[int]) -> None:
    assert [n for n in range(1, 7) if hit_matches(text, n)] == hits


def test_hit_condition_then_condition() -> None:
    rule = BreakpointRule(line=3, condition="i > 3", hit_condition="2")
    decisions = [should_stop(rule, stopped(i=i)) for i in range(6)]
    assert decisions == [False, True, False, False, True, True]  # hit 2, then wherever the condition holds


def test_log_message_interpolates_predicted_values() -> None:
    state = stopped(i=2, name="x")
    assert format_log_message("i={i} name={name} next={i + 1} {{braces}}", state) == "i=2 name='x' next=3 {braces}"
    assert "error" in format_log_message("{nope}", state)


PROGRAM = """total = 0
for i in range(6):
    total += i
    if i % 2:
        print('odd', i)
def f(v):
    w = v * 2
    return w
for k in range(3):
    f(k)
end = total
"""

CASES = [
    [{"line": 3, "condition": "i == 3"}],
    [{"line": 3, "hitCondition": "% 2"}],
    [{"line": 3, "condition": "i > 3", "hitCondition": "2"}, {"line": 7, "condition": "v == 2"}],
    [{"line": 3, "condition": "undefined_name > 1"}, {"line": 11}],
    [{"line": 7, "logMessage": "v is {v}", "condition": "v > 0"}, {"line": 8}],
]


def _debugpy_stops(path: Path, breakpoints: list[dict]) -> tuple[list[tuple[str, int | None]], str]:
    from tracegen.debugpy_recorder import DebugpySession

    stops, output = [], ""
    with DebugpySession() as session:
        state = session.start(path, [], stop_on_entry=True)
        session._require_client().request("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": breakpoints})
        while not state.finished:
            state = session.step(Action(kind=ActionKind.CONTINUE))
            output += state.stdout
            stops.append((state.reason.value, state.top.line if state.top else None))
    return stops, output


def _adapter_stops(adapter: TcpAdapter, path: Path, breakpoints: list[dict]) -> tuple[list[tuple[str, int | None]], str]:
    client = adapter.client()
    stops, output = [], ""
    try:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": True})
        client.ok("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": breakpoints})
        client.ok("configurationDone")
        client.wait_event("stopped")
        while True:
            client.ok("continue", {"threadId": 1})
            deadline = time.monotonic() + 30
            while not {"stopped", "exited"} & {e.get("event") for e in client.events} and time.monotonic() < deadline:
                time.sleep(0.02)
            output += "".join(e["body"]["output"] for e in client.drain("output") if e["body"].get("category") == "stdout")
            if client.drain("exited"):
                stops.append(("exited", None))
                return stops, output
            client.wait_event("stopped")
            stops.append(("breakpoint", client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]["line"]))
    finally:
        client.close()


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


@pytest.mark.parametrize("breakpoints", CASES, ids=[str(i) for i in range(len(CASES))])
def test_conditional_breakpoints_stop_where_debugpy_stops(adapter, tmp_path: Path, breakpoints: list[dict]) -> None:
    path = tmp_path / "loop.py"
    path.write_text(PROGRAM)
    real_stops, real_output = _debugpy_stops(path.resolve(), breakpoints)
    my_stops, my_output = _adapter_stops(adapter, path.resolve(), breakpoints)
    assert my_stops == real_stops
    assert sorted(my_output.splitlines()) == sorted(real_output.splitlines())  # debugpy interleaves logpoints late


def test_unknown_hit_condition_is_refused(adapter, tmp_path: Path) -> None:
    path = tmp_path / "p.py"
    path.write_text(PROGRAM)
    client = adapter.client()
    try:
        client.ok("initialize", {"adapterID": "neural"})
        client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": False})
        reply = client.ok("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": [{"line": 3, "hitCondition": "often"}]})
        assert not reply["breakpoints"][0]["verified"] and "hit condition" in reply["breakpoints"][0]["message"]
        client.ok("configurationDone")
        client.wait_event("exited")  # the refused breakpoint never stops the program
    finally:
        client.close()


FUZZ_VALUES = {"a": 3, "b": [1, 2], "x": "s", "n": None}
PYTHON_BUILTINS = {"len": len, "abs": abs, "min": min, "max": max, "sum": sum, "any": any, "all": all, "sorted": sorted,
                   "int": int, "float": float, "bool": bool, "str": str, "round": round}


def python_value(text: str) -> tuple[str, object]:
    """("value", v) or ("raised", exception type) of `text` in real Python over the same values."""
    try:
        return "value", eval(text, {"__builtins__": PYTHON_BUILTINS}, {"g": [1, 2, 3], **FUZZ_VALUES})  # noqa: S307
    except Exception as exc:  # noqa: BLE001 - what the user's expression raised
        return "raised", type(exc)


@given(text=st.text(alphabet="abxyn0123456789 +-*/%<>=!()[]{}'\",.:~&|^notandrisl_", max_size=40))
def test_any_text_is_judged_or_refused_never_crashes(text: str) -> None:
    """Any text is judged as Python would judge it, or refused with a message; a logpoint never raises
    and leaves text without braces as it is. (Texts with ``*`` or ``is`` are only judged, not compared:
    Python would build huge values the evaluator refuses, and identity depends on how a value was made.)"""
    state = stopped(**FUZZ_VALUES)
    comparable = "*" not in text and "is" not in text
    try:
        value = evaluate_condition(text, state)
    except ConditionRaised as exc:
        assert str(exc)
        if comparable:
            kind, result = python_value(text)
            assert kind == "raised" or callable(result), (text, exc)  # a builtin is only called, never a value
    except ConditionError as exc:
        assert str(exc)
    else:
        if comparable:
            assert python_value(text) == ("value", value), text
    logged = format_log_message(text, state)
    if not set(text) & set("{}"):
        assert logged == text
