"""The VS Code end-to-end harness (e2e/): its DAP tap over a real adapter, traffic parsing, checks.

The fast tests run the tap around a real `neural-debugger dap` (oracle backend) and check that
what the harness reads back from the tap log is what the adapter said, and that the checks catch a
view that disagrees. The slow test runs the whole thing (code-server + Chromium + Playwright) when
`e2e/install.sh` has cached the tools (`make e2e` does both).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.check import Mismatch, check_divergences, check_session, check_stop, check_summary, same_values, summary_line, ui_locals, ui_stack
from e2e.dap_tap import FrameSplitter
from e2e.scenario import UiStep, effective_scripts, maximal_scripts
from e2e.traffic import AdapterStop, Evaluation, adapter_session, read_log

REPO = Path(__file__).resolve().parent.parent
ADAPTER = REPO / ".venv" / "bin" / "neural-debugger"


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_step_back_drops_the_action_it_undoes() -> None:
    steps = [UiStep(action=a) for a in ("start", "next", "stepIn", "stepBack", "continue")]
    scripts = effective_scripts(steps)
    assert scripts == [[], ["next"], ["next", "stepIn"], ["next"], ["next", "continue"]]
    assert maximal_scripts(scripts) == [["next", "stepIn"], ["next", "continue"]]
    with pytest.raises(ValueError, match="first stop"):
        effective_scripts([UiStep(action="start"), UiStep(action="stepBack")])
    with pytest.raises(ValueError, match="starts with"):
        effective_scripts([UiStep(action="next")])


def test_frame_splitter_handles_split_and_joined_frames() -> None:
    data = frame({"seq": 1}) + frame({"seq": 2, "text": "é"})
    splitter = FrameSplitter()
    got = []
    for i in range(0, len(data), 7):
        got += splitter.feed(data[i:i + 7])
    assert got == [{"seq": 1}, {"seq": 2, "text": "é"}]
    assert FrameSplitter().feed(b"garbage\r\n\r\n" + frame({"seq": 3})) == [{"seq": 3}]


def test_view_rows_parse_like_vscode_shows_them() -> None:
    stack = [{"text": "top_words demo.py 23:1"}, {"text": "<module> demo.py 27:1"}, {"text": "Load More Stack Frames"}]
    assert ui_stack(stack) == [("top_words", 23), ("<module>", 27)]
    rows = [{"text": "Locals", "level": 1}, {"text": "n = 2", "level": 2}, {"text": "'the' = 3", "level": 3},
            {"text": "raw = 'a = b'", "level": 2}, {"text": "Globals", "level": 1}, {"text": "best = 1", "level": 2}]
    assert ui_locals(rows) == {"n": "2", "raw": "'a = b'"}
    assert ui_locals([{"text": "Globals", "level": 1}]) is None


def run_tapped_session(tmp_path: Path, program: Path) -> Path:
    """A real oracle session through e2e/dap_tap.py: stop on entry, read the views, step, disconnect."""
    log = tmp_path / "dap.jsonl"
    cmd = [sys.executable, str(REPO / "e2e" / "dap_tap.py"), "--log", str(log), "--", str(ADAPTER), "dap"]
    trace = {"command": "stackTrace", "arguments": {"threadId": 1, "startFrame": 0, "levels": 1}}
    rest = {"command": "stackTrace", "arguments": {"threadId": 1, "startFrame": 1, "levels": 19}}
    step = {"command": "next", "arguments": {"threadId": 1}}
    # One frame per stop, and frame ids are new at every stop: stop k's frame is k.
    scopes = [{"command": "scopes", "arguments": {"frameId": k}} for k in (1, 2, 3)]
    bodies = [
        {"command": "initialize", "arguments": {"adapterID": "neural", "supportsVariableType": True}},
        {"command": "launch", "arguments": {"program": str(program), "backend": "oracle", "stopOnEntry": True}},
        {"command": "configurationDone"}, trace, scopes[0], step, trace, scopes[1], step, trace, rest, scopes[2],
        {"command": "evaluate", "arguments": {"expression": "x", "frameId": 3, "context": "hover"}},
        {"command": "disconnect", "arguments": {}},
    ]
    requests = [dict(body, seq=seq, type="request") for seq, body in enumerate(bodies, 1)]
    done = subprocess.run(cmd, input=b"".join(frame(r) for r in requests), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert b"Content-Length" in done.stdout  # the relay passed the adapter's frames through
    return log


@pytest.fixture(scope="module")
def tapped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("tap")
    program = tmp_path / "prog.py"
    program.write_text("x = [3, 1]\ny = len(x)\nprint(y)\n")
    return run_tapped_session(tmp_path, program)


def test_tap_log_reads_back_what_the_adapter_sent(tapped: Path) -> None:
    session = adapter_session(read_log(tapped))
    assert session.launch_arguments is not None and session.launch_arguments["backend"] == "oracle"
    assert [s.reason for s in session.stops] == ["entry", "step", "step"]
    assert [s.stack for s in session.stops] == [[("<module>", 1)], [("<module>", 2)], [("<module>", 3)]]
    last = session.stops[-1]
    assert last.evaluations and last.evaluations[0].expression == "x"
    assert last.evaluations[0].result == "[3, 1]"
    # the variables of the Locals scope were not asked for: a scope with variables stays unknown
    assert last.locals is None
    assert session.stops[0].locals == {}  # an empty Locals scope needs no variables request


def test_frame_ids_are_new_at_every_stop(tapped: Path) -> None:
    """VS Code keeps stale Call Stack rows (and "Load More Stack Frames") when a stop reuses frame ids."""
    entries = read_log(tapped)
    ids = [f["id"] for e in entries if e["dir"] == "out" and e["msg"].get("command") == "stackTrace"
           for f in (e["msg"].get("body") or {}).get("stackFrames", [])]
    assert ids == [1, 2, 3]
    totals = [e["msg"]["body"]["totalFrames"] for e in entries if e["dir"] == "out" and e["msg"].get("command") == "stackTrace"]
    assert totals == [1, 1, 1, 1]
    assert not adapter_session(entries).failed_requests


def test_a_reply_logged_before_its_request_still_pairs_with_it(tapped: Path) -> None:
    """The tap's two directions are separate threads; CI once logged a stackTrace reply first."""
    entries = read_log(tapped)
    index = next(i for i, e in enumerate(entries)
                 if e["dir"] == "in" and e["msg"].get("command") == "stackTrace"
                 and (e["msg"].get("arguments") or {}).get("startFrame", 0) > 0)
    reply = next(i for i, e in enumerate(entries) if i > index and e["dir"] == "out"
                 and e["msg"].get("request_seq") == entries[index]["msg"]["seq"])
    swapped = entries[:index] + entries[index + 1:reply + 1] + [entries[index]] + entries[reply + 1:]
    assert adapter_session(swapped).stops == adapter_session(entries).stops


def view(line: int, variables: dict[str, str], hovers: list[dict[str, str]] | None = None) -> dict:
    rows = [{"text": "Locals", "level": 1}] + [{"text": f"{k} = {v}", "level": 2} for k, v in variables.items()]
    session_row = {"text": "prog.py recorded (the program ran)", "state": "recorded (the program ran)"}  # the oracle's description
    return {"event": "stopped", "stack": [session_row, {"text": f"<module> prog.py {line}:1"}], "variables": rows,
            "hovers": hovers or [], "console": []}


def test_checks_catch_a_view_that_disagrees_with_the_adapter(tapped: Path) -> None:
    session = adapter_session(read_log(tapped))
    session.stops[1].locals = {"x": "[3, 1]"}
    session.stops[2].locals = {"x": "[3, 1]", "y": "2"}
    shown = [view(1, {}), view(2, {"x": "[3, 1]"}), view(3, {"x": "[3, 1]", "y": "2"}, [{"word": "x", "text": "[3, 1]"}])]
    assert check_session({"stops": shown}, session, None) == []
    shown[2] = view(2, {"x": "[3, 1]"}, [{"word": "x", "text": "[1, 3]"}])
    found = {m.what for m in check_session({"stops": shown}, session, None)}
    assert found == {"Call Stack view", "Variables view", "hover x"}
    assert check_session({"stops": shown[:2]}, session, None)[0].what == "stops"
    assert check_summary({"console": []}, session, 3)[0].what == "comparison summary"


def test_checks_catch_load_more_and_rows_left_after_the_end(tapped: Path) -> None:
    """"Load More Stack Frames" under a stack the adapter sent whole, and frames shown after terminated."""
    session = adapter_session(read_log(tapped))
    session.stops[1].locals = {"x": "[3, 1]"}
    session.stops[2].locals = {"x": "[3, 1]", "y": "2"}
    assert session.stops[0].total_frames == 1
    shown = [view(1, {}), view(2, {"x": "[3, 1]"}), view(3, {"x": "[3, 1]", "y": "2"})]
    shown[1]["stack"].append({"text": "Load More Stack Frames"})
    problems = check_session({"stops": shown}, session, None)
    assert [(m.stop, m.what) for m in problems] == [(1, "Call Stack view")] and "Load More" in problems[0].detail
    ended = {"event": "terminated", "stack": [{"text": "<module> prog.py 3:1"}], "variables": []}
    problems = check_session({"stops": shown[:1] + [view(2, {"x": "[3, 1]"}), view(3, {"x": "[3, 1]", "y": "2"}), ended]}, session, None)
    assert [(m.stop, m.what) for m in problems] == [(3, "Call Stack view")], problems


def test_model_comparison_rows_must_be_what_the_adapter_sent(tapped: Path) -> None:
    session = adapter_session(read_log(tapped))
    divergence = "neural debugger vs debugpy: stop 2: stop: predicted step at <module>:15; debugpy step at <module>:4"
    session.output = ["neural debugger: loading\n", divergence + "\n", "neural debugger vs debugpy: 1/3 stops matched; first divergence at stop 2\n"]
    assert summary_line(session) == "neural debugger vs debugpy: 1/3 stops matched; first divergence at stop 2"
    console = [divergence, "neural debugger vs debugpy: 1/3 stops matched; first divergence at stop 2"]
    assert check_divergences({"console": console}, session) == []
    assert check_summary({"console": console}, session, 3, all_match=False) == []
    assert check_summary({"console": console}, session, 3)[0].what == "comparison summary"  # the oracle must match all
    stale = console + ["neural debugger vs debugpy: stop 9: a row from another session"]
    assert [m.what for m in check_divergences({"console": stale}, session)] == ["Debug Console"]
    assert [m.what for m in check_divergences({"console": console[1:]}, session)] == ["Debug Console"]
    assert check_divergences({"console": console[1:], "consoleSeen": console[:1]}, session) == []  # seen at a stop


def test_notification_check_names_what_is_missing() -> None:
    from e2e.run import check_notification
    from e2e.scenario import no_adapter_scenario

    scenario = no_adapter_scenario()
    text = ("Neural Debugger: no adapter found to run `neural-debugger dap`. Tried: 1. setting neuralDebugger.command: not set; "
            "2. Python extension (ms-python.python): not installed; 3. setting python.defaultInterpreterPath: not set; "
            "4. /tmp/r/workspace-no-adapter/.venv/bin/neural-debugger: does not exist; 5. neural-debugger on PATH: not found. "
            "Fix: ..., or set neuralDebugger.command to the path of `neural-debugger`.")
    assert check_notification(scenario, {"ok": True, "notifications": [text]}) == []
    missing = check_notification(scenario, {"ok": True, "notifications": [text.replace("5. neural-debugger on PATH: not found", "")]})
    assert [m.what for m in missing] == ["notification"] and "on PATH" in missing[0].detail
    started = check_notification(scenario, {"ok": True, "notifications": [text], "sessionStarted": True})
    assert [m.what for m in started] == ["session"]
    assert check_notification(scenario, {"ok": True, "notifications": []})[0].what == "notification"


def test_only_a_ui_timeout_is_worth_a_rerun() -> None:
    from e2e.run import _ui_timeout

    hover = Mismatch(-1, "VS Code", "timeout during hover counter at step 10: no debug hover for counter")
    wrong_value = Mismatch(3, "locals", "VS Code shows n = 2, the adapter sent n = 3")
    crash = Mismatch(-1, "VS Code", "error during stepIn at step 5: Target closed")
    assert _ui_timeout([hover])
    assert not _ui_timeout([wrong_value])
    assert not _ui_timeout([crash])


@pytest.mark.slow
def test_vscode_end_to_end() -> None:
    """The whole scenario in code-server + Chromium (needs the tools cached by e2e/install.sh)."""
    cache = REPO / ".cache" / "e2e"
    if not (cache / "code-server" / ".installed").exists() or not Path("/usr/bin/chromium").exists():
        pytest.skip("run `make e2e` (or sh e2e/install.sh) first to install code-server and Chromium")
    if not (REPO / "build" / "neural-debugger.vsix").exists():
        pytest.skip("run `make vsix` first")
    done = subprocess.run([sys.executable, "-m", "e2e.run", "--model", "off"], cwd=REPO, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]


def test_confidence_checks_read_what_vs_code_renders() -> None:
    """The stopped description as the Call Stack's state label, each local's type (with the low mark)
    beside its name, and the alternatives the adapter listed in the hover of a low one."""
    low = {"name": "n", "value": "5", "type": "int · 23% sure", "neuralConfidence": 0.23,
           "presentationHint": {"attributes": ["neuralLowConfidence"]}, "variablesReference": 7}
    sure = {"name": "s", "value": "'a b'", "type": "str", "neuralConfidence": 0.9, "variablesReference": 0}
    stop = AdapterStop(reason="step", stack=[("f", 3)], locals={"n": "5", "s": "'a b'"}, description="predicted, 64% sure",
                       confidence=0.64, locals_sent=[low, sure],
                       evaluations=[Evaluation("n", "hover", "5", reference=9, confidence=0.23)],
                       children={9: [{"name": "alternative 1 (30%)", "value": "6"}]})
    rows = [{"text": "Locals", "level": 1},  # as VS Code renders them with debug.showVariableTypes
            {"text": "n: int · 23% sure = 5", "level": 2, "name": "n:", "type": "int · 23% sure =", "value": "5"},
            {"text": "s: str = 'a b'", "level": 2, "name": "s:", "type": "str =", "value": "'a b'"}]
    stack = [{"text": "neural predicted, 64% sure", "state": "predicted, 64% sure"}, {"text": "f demo.py 3:1"}]
    hover = {"word": "n", "text": "5 alternative 1 (30%): int · 30% sure = 6", "low": True}
    observed = {"event": "stopped", "stack": stack, "variables": rows, "hovers": [hover], "console": []}
    assert ui_locals(rows) == {"n": "5", "s": "'a b'"}
    assert check_stop(0, observed, stop, None) == []
    bad = {**observed, "stack": [{**stack[0], "state": "Paused on step"}, stack[1]],
           "variables": [rows[0], {**rows[1], "type": "int ="}, rows[2]], "hovers": [{**hover, "text": "5"}]}
    assert {m.what for m in check_stop(0, bad, stop, None)} == {"Call Stack view", "Variables view n", "hover n"}
    alternative = {"text": "alternative 1 (30%): int · 30% sure = 6", "level": 3, "name": "alternative 1 (30%):",
                   "type": "int · 30% sure =", "value": "6"}
    stop.children[7] = [{"name": "alternative 1 (30%)", "type": "int · 30% sure", "value": "6"}]
    opened = {**observed, "expanded": {"name": "n", "variables": rows[:2] + [alternative] + rows[2:]}}
    assert check_stop(0, opened, stop, None) == []
    closed = {**observed, "expanded": {"name": "n", "variables": rows}}
    assert [m.what for m in check_stop(0, closed, stop, None)] == ["Variables view n (expanded)"]
    unmarked = AdapterStop(reason="step", stack=[("f", 3)], locals={"n": "5", "s": "'a b'"},
                           locals_sent=[{**low, "type": "int", "presentationHint": {}}, sure])
    assert [m.what for m in check_stop(0, {**observed, "hovers": []}, unmarked, None)] == ["local n", "Variables view n"]


def test_a_long_value_is_shown_cut_at_vs_codes_limit() -> None:
    """VS Code shows a value over 1024 characters as its first 1024 and "..."; anything else still differs."""
    sent = "'" + "fig" * 400 + "'"
    assert same_values({"x": sent[:1024] + "..."}, {"x": sent}) and same_values({"x": "1"}, {"x": "1"})
    assert not same_values({"x": sent[:1000] + "..."}, {"x": sent}) and not same_values({"x": "2"}, {"x": "1"})
    assert not same_values({"x": "1"}, {"x": "1", "y": "2"}) and not same_values(None, {})


def test_watched_stop_is_where_the_recorder_changes_the_value_and_the_check_says_when_not() -> None:
    from e2e.check import check_watches
    from e2e.scenario import beyond_scenario, watched_stops
    from e2e.traffic import AdapterSession

    scenario = beyond_scenario(repo_root=REPO)  # examples/loops.py: a line inserted after line 13, results watched on 15
    watched = watched_stops(scenario, REPO)
    before, after = watched[6]
    assert (before.location, after.location) == ([("<module>", 15)], [("<module>", 13)])
    assert (before.top.locals["results"], after.top.locals["results"]) == ("{}", "{1: 0}")
    history_rows = [{"level": 1, "text": "Locals"}, {"level": 1, "text": "History"},
                    {"level": 2, "text": "results = {} → {1: 0}", "name": "results =", "value": "{} → {1: 0}"}]
    plain = [{"event": "stopped", "stack": []}] * 5
    observed = [*plain, {"event": "stopped", "stack": [], "watched": ["results"]},
                {"event": "stopped", "stack": [], "stackState": "data breakpoint: results: {} -> {1: 0}", "history": history_rows}]
    right = AdapterStop(reason="data breakpoint", stack=[("<module>", 13)], description="data breakpoint: results: {} -> {1: 0}",
                        scopes={"History": 7}, children={7: [{"name": "results", "value": "{} → {1: 0}"}]})
    armed = AdapterStop(reason="step", data_breakpoints=[{"verified": True}])
    steps = [AdapterStop(reason="step") for _ in plain]
    assert check_watches({"stops": observed}, AdapterSession(stops=[*steps, armed, right]), watched) == []
    wrong = AdapterStop(reason="data breakpoint", stack=[("<module>", 14)], description="data breakpoint: results: {} -> {1: 0}")
    problems = check_watches({"stops": observed}, AdapterSession(stops=[*steps, armed, wrong]), watched)
    assert {p.what for p in problems} == {"data breakpoint", "History scope"}


def test_the_edit_steps_replay_the_edited_program_and_the_check_wants_the_inserted_line() -> None:
    """After the edit the recorder replays the edited program (the breakpoint moved); the check wants the Debug
    Console to say so and the Step Over after it on the inserted line, and says which is missing."""
    from e2e.check import check_edits
    from e2e.scenario import EDIT_TEXT, Edit, beyond_scenario, recorder_run
    from e2e.traffic import AdapterSession

    assert Edit(after=2).apply("for i in x:\n    y = i\nz = 1\n") == f"for i in x:\n    y = i\n    {EDIT_TEXT}\nz = 1\n"
    assert Edit(after=1).apply("for i in x:\n    y = i\n") == f"for i in x:\n    {EDIT_TEXT}\n    y = i\n"
    scenario = beyond_scenario(repo_root=REPO)
    assert [s.action for s in scenario.steps] == ["start", "next", "next", "edit", "next", "next", "continue"]
    states = recorder_run(scenario, REPO).states
    assert [s.location for s in states[2:6]] == [[("<module>", 13)]] * 2 + [[("<module>", 14)], [("<module>", 15)]]
    assert states[5].top.locals["edited"] == "10"
    said = "neural debugger: loops.py changed on disk: the stop stays on line 13; the next steps are predicted from the " \
           "edited source (breakpoints checked again: 16)\n"
    stops = [AdapterStop(reason="step", stack=[("<module>", line)]) for line in (1, 12, 13, 13, 14, 15, 13)]
    observed = {"stops": [{"event": "stopped"}] * 7, "consoleSeen": [said.strip()]}
    assert check_edits(observed, AdapterSession(stops=stops, output=[said]), scenario) == []
    stops[4] = AdapterStop(reason="step", stack=[("<module>", 15)])  # Step Over skipped the inserted line
    problems = check_edits({"stops": observed["stops"], "consoleSeen": []}, AdapterSession(stops=stops, output=[said]), scenario)
    assert [(p.stop, p.what) for p in problems] == [(3, "Debug Console"), (4, "edit")]
    # a model's edit goes below the line it stands on (the driver reads it): the same checks from that line
    model = beyond_scenario(repo_root=REPO, model=True)
    assert model.steps[3].edit is not None and model.steps[3].edit.after is None
    stops = [AdapterStop(reason="step", stack=[("<module>", line)]) for line in (1, 12, 12, 12, 13, 14, 13)]
    stopped = [{"event": "stopped"}] * 3 + [{"event": "stopped", "editedAfter": 12}] + [{"event": "stopped"}] * 3
    said = said.replace("line 13", "line 12")
    ended = "neural debugger: the comparison with debugpy no longer applies: the program was edited\n"
    seen = {"stops": stopped, "consoleSeen": [said.strip()]}
    assert check_edits(seen, AdapterSession(stops=stops, output=[ended, said]), model) == []
    assert [p.what for p in check_edits(seen, AdapterSession(stops=stops, output=[said]), model)] == ["edit"]  # compareWith