"""Load: many concurrent TCP sessions stepping through programs on one `neural-debugger dap --port`.

Oracle backend: 20 sessions at once, each driven by its own random action script (stepIn / next /
stepOut); after every stop the session's stack and top-frame variables must be exactly what
`tracegen.fast.replay` gives for the same script (so answers never leak between sessions), and
the server's RSS stays bounded. The default run steps 25 times per session; the slow variant steps 200 times in
three rounds, and a leak is growth in every round: one round may grow RSS once (twenty sessions that happen to be in
flight together on a loaded machine raise the allocator's peak, CI saw 58 MiB once), but not each of the last two. A slow variant with the
tiny real model compares each session's stops with the same script run in-process.
"""
from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from model.budget import StepBudget
from protocol.debugger import Action, ActionKind, State
from tests.dap_client import DapTestClient, TcpAdapter
from tests.test_fuzz_adapter import rss_bytes

SESSIONS = 20
RSS_ROUND_GROWTH_LIMIT = 48 << 20  # bytes a later round of sessions may add
COMMAND = {ActionKind.STEP_INTO: "stepIn", ActionKind.STEP_OVER: "next", ActionKind.STEP_RETURN: "stepOut"}

LOAD_PROGRAM = """\
def f(i):
    j = i * 2
    if j % 3 == 0:
        j += 1
    return j

def g(xs):
    acc = []
    for x in xs:
        acc.append(f(x))
    return acc

total = 0
for i in range(500):
    total += f(i)
    pair = g([i, total % 7])
print(total)
"""


def action_script(trace: Any, seed: int, steps: int) -> list[Action]:
    """A random script of `steps` actions that keeps the program running (no stepOut at module level)."""
    from tracegen.fast import ReplaySession

    rng = random.Random(seed)
    session = ReplaySession(trace, [], stop_on_entry=True)
    state = session.start()
    actions: list[Action] = []
    for _ in range(steps):
        kinds = [ActionKind.STEP_INTO, ActionKind.STEP_OVER] + ([ActionKind.STEP_RETURN] if len(state.frames) > 1 else [])
        action = Action(kind=rng.choice(kinds))
        state = session.step(action)
        actions.append(action)
        if state.finished:
            break
    return actions


def shown(client: DapTestClient) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """The current stop as the client sees it: (name, line) per frame, and the top frame's variables."""
    frames = client.ok("stackTrace", {"threadId": 1})["stackFrames"]
    scopes = client.ok("scopes", {"frameId": frames[0]["id"]})["scopes"]
    variables = client.ok("variables", {"variablesReference": scopes[0]["variablesReference"]})["variables"]
    return [(f["name"], f["line"]) for f in frames], {v["name"]: v["value"] for v in variables}


def expected_view(state: State) -> tuple[list[tuple[str, int]], dict[str, str]]:
    top = state.frames[0]
    values = dict(top.locals)
    if state.return_value is not None:
        values[f"(return) {state.return_value.name}"] = state.return_value.value
    return [(f.name, f.line) for f in state.frames], values


def drive(port: int, launch: dict[str, Any], actions: list[Action], expected: list[State], failures: list[str], label: str) -> None:
    """One session: launch, then each action with the stop checked against `expected` (entry first)."""
    try:
        with DapTestClient.tcp("127.0.0.1", port, timeout=120) as client:
            client.ok("initialize", {"adapterID": "neural"})
            client.ok("launch", launch, timeout=300)
            client.ok("configurationDone", timeout=300)
            for index, action in enumerate([None, *actions]):
                if action is not None:
                    client.ok(COMMAND[action.kind], {"threadId": 1}, timeout=300)
                want = expected[index]
                if want.finished:
                    client.wait_event("exited")
                    break
                got = shown(client)
                if got != expected_view(want):
                    failures.append(f"{label} stop {index}: got {got}, want {expected_view(want)}")
                    return
            client.ok("disconnect", {})
    except Exception as exc:  # noqa: BLE001 - reported as a failure of this session
        failures.append(f"{label}: {type(exc).__name__}: {exc}")


def run_concurrently(jobs: list[Callable[[], None]]) -> None:
    threads = [threading.Thread(target=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=900)
    assert not any(t.is_alive() for t in threads), "a session hung"


@pytest.fixture(scope="module")
def load_program(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("load") / "loadprog.py"
    path.write_text(LOAD_PROGRAM)
    return path


def oracle_round(adapter: TcpAdapter, program: Path, steps: int, seed: int) -> None:
    from tracegen.fast import record_program, replay

    trace = record_program(path=program)
    scripts = [action_script(trace, seed * 1000 + n, steps) for n in range(SESSIONS)]
    expected = [replay(trace, script, []) for script in scripts]
    assert all(len(script) == steps for script in scripts), "the load program ended before the script did"
    failures: list[str] = []
    launch = {"program": str(program), "backend": "oracle", "stopOnEntry": True}
    run_concurrently([lambda s=s, e=e, n=n: drive(adapter.port, launch, s, e, failures, f"session {n}")
                      for n, (s, e) in enumerate(zip(scripts, expected))])
    assert failures == [], "\n".join(failures[:5])


def _oracle_load(program: Path, steps: int, rounds: int) -> None:
    with TcpAdapter() as adapter:
        oracle_round(adapter, program, 2, seed=0)  # warm-up: imports and allocator arenas
        sizes = [rss_bytes(adapter.proc.pid)]
        for round_ in range(rounds):
            oracle_round(adapter, program, steps, seed=round_ + 1)
            sizes.append(rss_bytes(adapter.proc.pid))
        assert adapter.proc.poll() is None
    print(f"\nserver RSS after warm-up and each round of {SESSIONS} x {steps} steps: "
          + ", ".join(f"{s / 2**20:.0f} MiB" for s in sizes))
    assert_no_leak(sizes)


def assert_no_leak(sizes: list[int]) -> None:
    """RSS after warm-up and after each round: one round alone (after the first, which fills the allocator) may not grow
    it past 4 x the limit; with three rounds or more, the later rounds may not all grow it by the limit or more."""
    if len(sizes) <= 3:
        assert sizes[-1] - sizes[0] < 4 * RSS_ROUND_GROWTH_LIMIT
        return
    growth = [after - before for before, after in zip(sizes[1:], sizes[2:])]
    assert min(growth) < RSS_ROUND_GROWTH_LIMIT, f"every later round grew the server: {growth}"


@pytest.mark.slow  # 24 s in CI: load runs in `make test-all` with its 200-step and model variants
def test_concurrent_oracle_sessions(load_program):
    _oracle_load(load_program, steps=25, rounds=1)


@pytest.mark.slow
def test_concurrent_oracle_sessions_200_steps(load_program):
    _oracle_load(load_program, steps=200, rounds=3)


@pytest.mark.slow
def test_concurrent_tiny_model_sessions(load_program, tiny_checkpoint):
    """4 sessions with the tiny real model at once; each sees exactly the stops of the same script run alone."""
    from model.session import NeuralDebugger

    source = load_program.read_text()
    scripts = [[Action(kind=k) for k in random.Random(n).choices([ActionKind.STEP_INTO, ActionKind.STEP_OVER], k=6)]
               for n in range(4)]
    # the sessions launch with the largest budget a launch may ask: a step of four busy sessions on a loaded machine is
    # never cut, and the sessions alone run under the same budget (a bounded step stops a value running into a repetition)
    seconds, tokens = 600, 100_000
    expected = []
    for script in scripts:
        alone = NeuralDebugger.from_checkpoint(str(tiny_checkpoint), source, path=str(load_program), temperature=0.0,
                                               budget=StepBudget(seconds=seconds, tokens=tokens))
        states = [alone.start()]
        for action in script:
            if states[-1].finished:
                break
            states.append(alone.step(action))
        alone.close()
        expected.append(states)
    failures: list[str] = []
    launch = {"program": str(load_program), "backend": "transformers", "model": str(tiny_checkpoint), "stopOnEntry": True,
              "stepSeconds": seconds, "stepTokens": tokens}
    with TcpAdapter() as adapter:
        drive(adapter.port, launch, scripts[0][: len(expected[0]) - 1], expected[0], failures, "warm-up session")  # concurrent first launches: test_first_model_launches_at_once
        run_concurrently([lambda s=s, e=e, n=n: drive(adapter.port, launch, s[: len(e) - 1], e, failures, f"model session {n}")
                          for n, (s, e) in enumerate(zip(scripts, expected))])
        assert adapter.proc.poll() is None
    assert failures == [], "\n".join(failures[:5])


@pytest.mark.slow
def test_first_model_launches_at_once(load_program, tiny_checkpoint):
    launch = {"program": str(load_program), "backend": "transformers", "model": str(tiny_checkpoint), "stopOnEntry": True}
    replies: list[dict] = []

    def launch_one() -> None:
        with DapTestClient.tcp("127.0.0.1", adapter.port, timeout=300) as client:
            client.ok("initialize", {"adapterID": "neural"})
            replies.append(client.request("launch", launch, timeout=300))

    with TcpAdapter() as adapter:
        run_concurrently([launch_one for _ in range(6)])
    assert len(replies) == 6
    assert [r.get("message") for r in replies if not r["success"]] == []
