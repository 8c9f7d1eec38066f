"""What a user feels: step + inspection over DAP on short programs with random action scripts, neural vs debugpy.

    nice -n 19 .venv/bin/python bench/bench_session.py [--programs DIR] [--actions N] [--seed S] [--profile K]

For each program under bench/programs/ (short hand-written, everyday-style code) a seeded random script is
drawn: one or two breakpoints on lines inside functions, then N actions among Step In, Step Over, Step Out and
Continue. The same script is played

* against `neural-debugger dap` (the shipped model, transformers backend) over stdio, as a DAP client does:
  the step request, its `stopped` (or `terminated`) event, then `stackTrace`, `scopes` and `variables` of the
  top frame; the time of all of that is one step;
* against real debugpy (`tracegen.debugpy_recorder.DebugpySession`, whose step waits for the stop and asks
  stackTrace, scopes and variables too), in the same run.

It prints p50 / p90 / max of both, how many neural stops stood where debugpy's did (reason, function, line,
depth), and what the adapter said when a step was cut (the stop's description). With `--profile K` the K
slowest neural steps are replayed in-process (`NeuralDebugger` with the adapter's default budget and the run's
coarse steps, the same actions from the entry) under cProfile, and the profiles are written to `--profile-out` (default
bench/profiles/slowest.txt).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.debugger import Action, ActionKind  # noqa: E402

PROGRAMS = ROOT / "bench" / "programs"
REQUESTS = {"stepIn": ActionKind.STEP_INTO, "next": ActionKind.STEP_OVER, "stepOut": ActionKind.STEP_RETURN,
            "continue": ActionKind.CONTINUE}
WEIGHTS = {"stepIn": 4, "next": 3, "stepOut": 1, "continue": 2}  # how often each request is drawn
COARSE_REQUESTS = ("continue", "stepOut")  # requests whose stop may be many lines away (counted apart: do they arrive?)


@dataclass
class Script:
    """A program, its breakpoints and the requests played from the entry stop."""

    program: str
    breakpoints: list[int]
    requests: list[str]


@dataclass
class StepTime:
    """One timed request: how long the step and the inspection after it took, and where it stopped."""

    program: str
    index: int
    request: str
    ms: float
    stop: list | None  # [reason, function, line, depth]; None when the program ended
    description: str = ""


@dataclass
class Run:
    steps: list[StepTime] = field(default_factory=list)
    error: str = ""


def function_lines(source: str) -> list[int]:
    """Executable lines inside functions (where a breakpoint is interesting)."""
    import ast

    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines |= {stmt.lineno for child in node.body for stmt in ast.walk(child) if isinstance(stmt, ast.stmt)}
    return sorted(lines)


def random_script(program: Path, rng: random.Random, actions: int) -> Script:
    inside = function_lines(program.read_text(encoding="utf-8"))
    breakpoints = sorted(rng.sample(inside, min(len(inside), rng.choice((1, 2)))))
    names, weights = zip(*WEIGHTS.items())
    return Script(program=str(program), breakpoints=breakpoints, requests=rng.choices(names, weights, k=actions))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


# ------------------------------------------------------------------------------------------------ neural over DAP


def neural_run(script: Script, checkpoint: Path | None, timeout: float, launch_extra: dict | None = None) -> Run:
    from tests.dap_client import DapTestClient

    run = Run()
    client = DapTestClient.stdio(timeout=timeout)
    try:
        client.ok("initialize", {"adapterID": "neural", "linesStartAt1": True, "columnsStartAt1": True, "pathFormat": "path"})
        launch = {"program": script.program, "stopOnEntry": True, "backend": "transformers"}
        if checkpoint is not None:
            launch["model"] = str(checkpoint)
        launch.update(launch_extra or {})
        seq = client.send("launch", launch)
        client.wait_event("initialized", timeout=max(timeout, 120))
        client.ok("setBreakpoints", {"source": {"path": script.program}, "breakpoints": [{"line": n} for n in script.breakpoints]})
        client.ok("configurationDone")
        reply = client.response(seq, timeout=max(timeout, 120))
        if not reply["success"]:
            run.error = f"launch failed: {reply.get('message')}"
            return run
        client.wait_event("stopped", timeout=max(timeout, 120))
        for index, request in enumerate(script.requests):
            start = time.perf_counter()
            client.ok(request, {"threadId": 1})
            event = _stop_or_end(client, timeout)
            if event.get("event") != "stopped":
                run.steps.append(StepTime(Path(script.program).name, index, request, (time.perf_counter() - start) * 1000, None))
                break
            frames = client.ok("stackTrace", {"threadId": 1})["stackFrames"]
            scopes = client.ok("scopes", {"frameId": frames[0]["id"]})["scopes"]
            client.ok("variables", {"variablesReference": scopes[0]["variablesReference"]})
            ms = (time.perf_counter() - start) * 1000
            body = event.get("body", {})
            stop = [_reason(body.get("reason", "")), frames[0]["name"], frames[0]["line"], len(frames)]
            run.steps.append(StepTime(Path(script.program).name, index, request, ms, stop, body.get("description", "")))
    except (TimeoutError, AssertionError, KeyError, IndexError) as exc:
        run.error = f"{type(exc).__name__}: {exc}"
    finally:
        try:
            client.request("disconnect", {"terminateDebuggee": True}, timeout=5)
        except (TimeoutError, OSError):
            pass
        client.close()
    return run


def _stop_or_end(client, timeout: float) -> dict:
    """The `stopped` or `terminated` event that answers a step."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name in ("stopped", "terminated"):
            found = client.drain(name)
            if found:
                return found[0]
        time.sleep(0.002)
    raise TimeoutError("no stopped or terminated event")


def _reason(reason: str) -> str:
    return "breakpoint" if reason == "breakpoint" else "exception" if reason == "exception" else "step"


# ------------------------------------------------------------------------------------------------ debugpy


def debugpy_run(script: Script) -> Run:
    from tracegen.debugpy_recorder import DebugpySession

    run = Run()
    try:
        with DebugpySession() as session:
            state = session.start(script.program, script.breakpoints)
            for index, request in enumerate(script.requests):
                start = time.perf_counter()
                state = session.step(Action(kind=REQUESTS[request]))
                ms = (time.perf_counter() - start) * 1000
                stop = None if state.finished else [_reason(state.reason.value), state.frames[0].name, state.frames[0].line, len(state.frames)]
                run.steps.append(StepTime(Path(script.program).name, index, request, ms, stop))
                if state.finished:
                    break
    except Exception as exc:  # noqa: BLE001 - one program debugpy cannot run must not end the bench
        run.error = f"{type(exc).__name__}: {exc}"
    return run


# ------------------------------------------------------------------------------------------------ profiles


def profile_steps(scripts: list[Script], slow: list[StepTime], checkpoint: Path, out: Path, coarse_steps: str = "auto") -> None:
    """Replay each slow step in-process (the same requests from the entry) and write its cProfile to `out`."""
    from model.budget import StepBudget
    from model.session import NeuralDebugger

    by_name = {Path(s.program).name: s for s in scripts}
    parts = []
    for item in slow:
        script = by_name[item.program]
        # the adapter's default budget (launch_config: stepSeconds, stepTokens) and the run's coarseSteps
        session = NeuralDebugger.from_checkpoint(checkpoint, path=script.program, budget=StepBudget(), coarse_steps=coarse_steps)
        session.start()
        session.set_breakpoints(script.breakpoints)
        for request in script.requests[: item.index]:
            if session.state.finished:
                break
            session.step(Action(kind=REQUESTS[request]))
        if session.state.finished:
            continue
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        session.step(Action(kind=REQUESTS[item.request]))
        profiler.disable()
        ms = (time.perf_counter() - start) * 1000
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(28)
        parts.append(f"## {item.program} request {item.index} ({item.request}): {item.ms:.0f} ms over DAP, "
                     f"{ms:.0f} ms replayed in-process; note: {session.note}\n\n```\n{_trim(text.getvalue())}```\n")
        session.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("# Profiles of the slowest neural steps (bench/bench_session.py --profile)\n\n" + "\n".join(parts), encoding="utf-8")


def _trim(report: str) -> str:
    """cProfile's table without the absolute paths of the repository and the venv."""
    return report.replace(str(ROOT) + "/", "").replace(sys.prefix + "/", "")


# ------------------------------------------------------------------------------------------------ main


def measure(programs: list[Path], actions: int, seed: int, checkpoint: Path | None, timeout: float,
            launch_extra: dict | None = None) -> dict:
    rng = random.Random(seed)
    scripts = [random_script(p, rng, actions) for p in programs]
    neural, real = [], []
    errors = []
    for script in scripts:
        print(f"  {Path(script.program).name}: bp {script.breakpoints} {' '.join(script.requests)}", flush=True)
        n, d = neural_run(script, checkpoint, timeout, launch_extra), debugpy_run(script)
        errors += [f"{Path(script.program).name} ({side}): {r.error}" for side, r in (("neural", n), ("debugpy", d)) if r.error]
        neural.append(n)
        real.append(d)
    return {"scripts": scripts, "neural": neural, "debugpy": real, "errors": errors}


def summary(result: dict) -> dict:
    n_times = [s.ms for r in result["neural"] for s in r.steps]
    d_times = [s.ms for r in result["debugpy"] for s in r.steps]
    same = compared = 0
    coarse = {request: [0, 0] for request in COARSE_REQUESTS}  # request -> [arrived where debugpy stopped, asked]
    for n, d in zip(result["neural"], result["debugpy"]):
        for a, b in zip(n.steps, d.steps):  # until the first divergence: after it the two runs are elsewhere
            compared += 1
            if a.request in coarse:
                coarse[a.request][1] += 1
                coarse[a.request][0] += a.stop == b.stop
            if a.stop != b.stop:
                break
            same += 1
    cut = [s for r in result["neural"] for s in r.steps if "cut" in s.description or "could not" in s.description]
    return {
        "neural": {"steps": len(n_times), "p50": percentile(n_times, .5), "p90": percentile(n_times, .9), "max": max(n_times, default=0)},
        "debugpy": {"steps": len(d_times), "p50": percentile(d_times, .5), "p90": percentile(d_times, .9), "max": max(d_times, default=0)},
        "same_stops": same, "compared": compared, "over_3s": sum(t > 3000 for t in n_times), "cut": len(cut),
        "arrived": {request: {"same": c[0], "compared": c[1]} for request, c in coarse.items()},
    }


def main() -> int:
    from model.paths import DEFAULT_CHECKPOINT

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=Path, default=PROGRAMS)
    parser.add_argument("--actions", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=0, help="the first N programs only")
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: checkpoints/default")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one step may take before the run gives up")
    parser.add_argument("--step-seconds", type=float, default=None,
                        help="the launch's stepSeconds (default: the adapter's budget); a large one measures where steps arrive, not how fast")
    parser.add_argument("--coarse", choices=("fine", "model", "auto"), default="auto",
                        help="the launch's coarseSteps: Continue / Step Out by fine steps, one model jump, "
                             "or auto (the adapter's default: fine steps while a breakpoint can be reached, one jump when none can)")
    parser.add_argument("--profile", type=int, default=0, help="profile the K slowest neural steps (in-process replay)")
    parser.add_argument("--profile-out", type=Path, default=ROOT / "bench" / "profiles" / "slowest.txt")
    parser.add_argument("--json", type=Path, default=None, help="write every timed step here")
    args = parser.parse_args()
    programs = sorted(args.programs.glob("*.py"))[: args.limit or None]
    launch_extra: dict = {"coarseSteps": args.coarse}
    if args.step_seconds is not None:
        launch_extra["stepSeconds"] = args.step_seconds
    result = measure(programs, args.actions, args.seed, args.checkpoint, args.timeout, launch_extra)
    info = summary(result)
    print(f"{len(programs)} programs, {args.actions} requests each, seed {args.seed}, coarseSteps {args.coarse}")
    for side in ("neural", "debugpy"):
        s = info[side]
        print(f"{side:8s} steps={s['steps']:4d}  p50={s['p50']:7.0f} ms  p90={s['p90']:7.0f} ms  max={s['max']:7.0f} ms")
    print(f"neural stops where debugpy stopped (until the first divergence): {info['same_stops']}/{info['compared']}; "
          f"steps over 3 s: {info['over_3s']}; steps cut by the budget: {info['cut']}")
    print("arrived where debugpy stopped (until the first divergence): "
          + "; ".join(f"{request} {c['same']}/{c['compared']}" for request, c in info["arrived"].items()))
    for line in result["errors"]:
        print("error:", line)
    slow = sorted((s for r in result["neural"] for s in r.steps), key=lambda s: -s.ms)
    for s in slow[:5]:
        print(f"slow: {s.ms:7.0f} ms  {s.program} #{s.index} {s.request} -> {s.stop}  {s.description[:100]}")
    if args.json:
        args.json.write_text(json.dumps({"summary": info, "scripts": [asdict(s) for s in result["scripts"]],
                                         "neural": [[asdict(s) for s in r.steps] for r in result["neural"]],
                                         "debugpy": [[asdict(s) for s in r.steps] for r in result["debugpy"]]}, indent=1))
    if args.profile:
        profile_steps(result["scripts"], slow[: args.profile], args.checkpoint or DEFAULT_CHECKPOINT, args.profile_out,
                      coarse_steps=args.coarse)
        print("profiles written to", args.profile_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
