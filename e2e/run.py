"""`python -m e2e.run`: the neural debugger end to end in a real VS Code (code-server + headless Chromium).

For each scenario (the oracle backend stepping through examples/demo.py; the same program with
``compareWith: debugpy``; with ``--model`` also the shipped model) it records real debugpy for
the same actions, opens a fresh workspace in code-server with the extension installed from the
.vsix, drives the session with Playwright, and checks VS Code's views against the adapter's DAP
messages and those against debugpy. Exit status 0 when every check passed; 1 with the
mismatches otherwise; 2 when a component (code-server, Chromium, the extension, the driver) could
not start, with which and why. Screenshots of every stop stay under the run folder on failure
(``--keep`` keeps them always).
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

import typer

from e2e.check import (SUMMARY, Mismatch, check_divergences, check_edits, check_predicted_watches, check_session, check_summary,
                       check_watches, confidence_shown, ui_stack)
from e2e.harness import REPO_ROOT, CodeServer, E2EError, Tools, make_workspace, run_driver
from e2e.scenario import (BeyondTarget, Scenario, adapter_exits_scenario, beyond_scenario, compare_scenario, demo_scenario,
                          expected_states, model_scenario, no_adapter_scenario, recorder_run)
from e2e.traffic import adapter_session, read_log

app = typer.Typer(add_completion=False, help=__doc__)
DOCS_SCREENSHOT = REPO_ROOT / "docs" / "img" / "vscode-session.png"


def say(text: str) -> None:
    print(f"e2e: {text}", file=sys.stderr, flush=True)


def scenarios(model: str, checkpoint: Optional[Path], target: Optional[BeyondTarget] = None) -> list[tuple[Scenario, Optional[Path]]]:
    """The scenarios to run and the checkpoint each uses (None: the oracle, no model)."""
    chosen: list[tuple[Scenario, Optional[Path]]] = [(demo_scenario(), None), (compare_scenario(), None),
                                                     (beyond_scenario(target, REPO_ROOT), None)]
    from model.paths import DEFAULT_CHECKPOINT

    folder = checkpoint.resolve() if checkpoint else Path(DEFAULT_CHECKPOINT)
    if model == "on" or (model == "auto" and (folder / "config.json").is_file()):
        chosen += [(model_scenario(), folder), (beyond_scenario(target, REPO_ROOT, model=True), folder)]
    chosen += [(no_adapter_scenario(), None), (adapter_exits_scenario(), None)]
    return chosen


def check_notification(scenario: Scenario, observations: dict[str, Any]) -> list[Mismatch]:
    """A scenario without a usable adapter: no session, and the error notification says what was tried."""
    if not observations.get("ok"):
        return [Mismatch(-1, "VS Code", str(observations.get("error")))]
    shown = observations.get("notifications", [])
    text = next((t for t in shown if scenario.notification[0] in t), None)
    if text is None:
        return [Mismatch(-1, "notification", f"no notification says {scenario.notification[0]!r}; VS Code shows {shown}")]
    problems = [Mismatch(-1, "notification", f"it does not say {part!r}: {text!r}")
                for part in scenario.notification[1:] if part not in text]
    if observations.get("sessionStarted"):
        problems.append(Mismatch(-1, "session", "a debug session started although there is no adapter to run"))
    return problems


def run_scenario(server: CodeServer, tools: Tools, run_dir: Path, scenario: Scenario, checkpoint: Optional[Path]) -> list[Mismatch]:
    """One scenario: expectations, workspace, driver, checks."""
    started = time.monotonic()
    expected = None
    watched: dict = {}
    beyond = any(step.watch or step.edit for step in scenario.steps)
    if scenario.backend == "oracle" and beyond:  # debugpy has no data breakpoints and runs the program it started with
        say(f"[{scenario.name}] replaying {len(scenario.steps)} steps of {scenario.program} with tracegen's recorder")
        recorded = recorder_run(scenario, REPO_ROOT)
        expected, watched = recorded.states, recorded.watched
    elif scenario.backend == "oracle" and not scenario.notification:
        say(f"[{scenario.name}] recording real debugpy for {len(scenario.steps)} steps of {scenario.program}")
        expected = expected_states(scenario, REPO_ROOT)
    workspace, tap_log = make_workspace(run_dir, scenario, tools, checkpoint)
    shots = run_dir / f"screenshots-{scenario.name}"
    shots.mkdir(exist_ok=True)
    if scenario.notification:
        say(f"[{scenario.name}] F5 with adapter={scenario.adapter}: expecting the extension's error notification")
        observations = run_driver(tools, server.home, scenario, server.url(workspace), tap_log, shots)
        problems = check_notification(scenario, observations)
        say(f"[{scenario.name}] notification checked in {time.monotonic() - started:.0f} s: "
            + ("as expected" if not problems else f"{len(problems)} mismatches"))
        return problems
    say(f"[{scenario.name}] driving VS Code ({scenario.backend} backend{', compareWith debugpy' if scenario.compare_with else ''})")
    observations = run_driver(tools, server.home, scenario, server.url(workspace), tap_log, shots,
                              read_console_at_end=scenario.compare_with is not None)
    session = adapter_session(read_log(tap_log))
    problems: list[Mismatch] = []
    if not observations.get("ok"):
        problems.append(Mismatch(-1, "VS Code", str(observations.get("error"))))
        if session.failed_requests:
            problems.append(Mismatch(-1, "adapter errors", "; ".join(session.failed_requests[:5])))
        if not session.stops and tap_log.stat().st_size == 0:
            problems.append(Mismatch(-1, "extension", "the adapter was never started (the DAP tap log is empty): "
                                     "did the extension activate and read neuralDebugger.command?"))
    problems += check_session(observations, session, expected)
    if beyond:
        problems += check_watches(observations, session, watched)
        problems += check_edits(observations, session, scenario)
        if scenario.backend != "oracle":
            problems += check_predicted_watches(observations, session)
    if scenario.compare_with:
        oracle = scenario.backend == "oracle"
        problems += check_summary(observations, session, sum(1 for s in observations.get("stops", []) if s["event"] == "stopped"),
                                  all_match=oracle)
        if not oracle:
            problems += check_divergences(observations, session)
        sent = sum(bool(SUMMARY.search(text)) for text in session.output)
        if sent > 1:
            say(f"[{scenario.name}] note: the adapter sent the comparison summary {sent} times (on exit and again on disconnect)")
    if scenario.backend != "oracle":
        say(f"[{scenario.name}] confidence shown: {confidence_shown(observations, session)}")
    if observations.get("endedEarly"):
        say(f"[{scenario.name}] note: {observations['endedEarly']}")
    seen = len(observations.get("stops", []))
    say(f"[{scenario.name}] {seen} stops checked in {time.monotonic() - started:.0f} s: "
        + ("all agree" if not problems else f"{len(problems)} mismatches"))
    return problems


def _ui_timeout(problems: list[Mismatch]) -> bool:
    """Whether the driver gave up waiting on VS Code's UI (the one failure a rerun may clear)."""
    return any(p.what == "VS Code" and "timeout" in p.detail.lower() for p in problems)


def run_with_retries(server: CodeServer, tools: Tools, run_dir: Path, scenario: Scenario,
                     checkpoint: Optional[Path], retries: int) -> list[Mismatch]:
    """`run_scenario`, rerun up to `retries` times while it fails only by a UI timeout; says so when it does."""
    attempt = scenario
    for number in range(retries + 1):
        problems = run_scenario(server, tools, run_dir, attempt, checkpoint)
        if not problems or not _ui_timeout(problems) or number == retries:
            break
        say(f"[{attempt.name}] FLAKY: the browser timed out ({problems[0].detail[:160]}); running it again")
        attempt = scenario.model_copy(update={"name": f"{scenario.name}-retry{number + 1}"})
    return [Mismatch(m.stop, f"[{attempt.name}] {m.what}", m.detail) for m in problems]


@app.command()
def main(
    cache: Path = typer.Option(REPO_ROOT / ".cache" / "e2e", envvar="E2E_CACHE", help="Where e2e/install.sh put the tools."),
    vsix: Path = typer.Option(REPO_ROOT / "build" / "neural-debugger.vsix", help="The packaged extension (make vsix)."),
    model: str = typer.Option("auto", help="Also run the shipped model: auto (if it exists), on, off."),
    checkpoint: Optional[Path] = typer.Option(None, help="The checkpoint of the model run (default: the shipped one)."),
    keep: bool = typer.Option(False, help="Keep the run folder (screenshots, logs) even when everything passed."),
    retries: int = typer.Option(0, min=0, max=3, help="Run a scenario again (in a fresh workspace) when the browser side timed out "
                                "(a dropped hover, a slow view); mismatches in what was shown are never retried."),
    beyond_target: str = typer.Option("examples/loops.py:13:results:15", help="The program of the beyond scenarios "
                                      "(edit and save, Break on Value Change, History) as PATH:LINE:NAME:BREAKPOINT: the "
                                      "module line where a line is inserted, the local watched, a breakpoint below the edit."),
    only: str = typer.Option("", help="Run only these scenarios (comma-separated names, e.g. model,no-adapter)."),
    docs_screenshot: bool = typer.Option(False, help=f"Copy a screenshot (the model run's deepest stop with the Debug Console, else the oracle breakpoint stop) to {DOCS_SCREENSHOT.relative_to(REPO_ROOT)}."),
) -> None:
    """Run the end-to-end scenarios; exit 0 (all agree), 1 (mismatches) or 2 (a component failed)."""
    if model not in ("auto", "on", "off"):
        raise typer.BadParameter("--model must be auto, on or off")
    try:
        target = BeyondTarget.parse(beyond_target)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    run_dir = cache / "runs" / datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    problems: list[Mismatch] = []
    try:
        tools = Tools.locate(cache)
        with CodeServer(tools, run_dir) as server:
            say(f"installing the extension {vsix.name} into code-server")
            say(f"installed {server.install_extension(vsix)}")
            chosen = scenarios(model, checkpoint, target)
            if only:
                wanted = {name.strip() for name in only.split(",") if name.strip()}
                unknown = wanted - {scenario.name for scenario, _ in chosen}
                if unknown:
                    raise typer.BadParameter(f"--only: no scenario {sorted(unknown)} (with --model {model})")
                chosen = [(scenario, folder) for scenario, folder in chosen if scenario.name in wanted]
            first_workspace, _ = make_workspace(run_dir, chosen[0][0], tools, chosen[0][1])
            say("starting code-server on 127.0.0.1")
            server.start(first_workspace)
            for scenario, checkpoint in chosen:
                problems += run_with_retries(server, tools, run_dir, scenario, checkpoint, retries)
    except E2EError as exc:
        say(f"FAILED: {exc.component} could not start or answer: {exc.reason}")
        say(f"logs and screenshots kept in {run_dir}")
        raise typer.Exit(2) from None
    if docs_screenshot and not problems:
        _copy_docs_screenshot(run_dir)
    elapsed = time.monotonic() - started
    if problems:
        for problem in problems:
            say(f"MISMATCH {problem}")
        say(f"FAILED after {elapsed:.0f} s; screenshots of every stop and logs kept in {run_dir}")
        raise typer.Exit(1)
    say(f"passed in {elapsed:.0f} s")
    if not keep:
        shutil.rmtree(run_dir, ignore_errors=True)


def _model_shot(folder: Path) -> list[Path]:
    """The model run's stop where a low-confidence local was expanded (its alternatives, the Call
    Stack's "predicted, N% sure" and ``?name`` in the Debug Console), else the stop with the deepest
    Call Stack (first such; step backs and ends left out)."""
    expanded = sorted(folder.glob("stop-*-alternatives.png"))
    if expanded:
        return expanded[:1]
    observed = folder / "observations-model.json"
    if not observed.is_file():
        return []
    stops = [s for s in json.loads(observed.read_text(encoding="utf-8")).get("stops", [])
             if s.get("event") == "stopped" and s.get("action") != "stepBack" and s.get("screenshot")]
    if not stops:
        return []
    best = max(stops, key=lambda s: len(ui_stack(s.get("stack", []))))
    return [Path(best["screenshot"])]


def _copy_docs_screenshot(run_dir: Path) -> None:
    """The model run's deepest stop, with compareWith's divergences in the Debug Console, if there was a
    model run; else the oracle demo run's breakpoint stop (with the hover)."""
    for name in ("model", "demo"):
        folder = run_dir / f"screenshots-{name}"
        shots = _model_shot(folder) if name == "model" else (sorted(folder.glob("stop-*-hover-*.png"))
                                                             or sorted(folder.glob("stop-*-continue.png")))
        if shots:
            DOCS_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(shots[0], DOCS_SCREENSHOT)
            say(f"wrote {DOCS_SCREENSHOT.relative_to(REPO_ROOT)} from the {name} run")
            return
    say("no breakpoint screenshot to copy to docs")


if __name__ == "__main__":
    app()
