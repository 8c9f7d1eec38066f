"""Compare what VS Code showed with what the adapter sent, and what the adapter sent with real debugpy.

Inputs: the driver's observations (rows read from the Call Stack, Variables, hover and Debug
Console), the adapter's session from the DAP tap (`e2e.traffic`), and optionally the states real
debugpy shows after each step (`e2e.scenario.expected_states`). `check_session` returns a list of
`Mismatch`es; an empty list means every stop agreed three ways.
"""
from __future__ import annotations

import re
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from adapter.confidence import LOW_ATTRIBUTE, LOW_CONFIDENCE
from e2e.scenario import Scenario
from e2e.traffic import AdapterSession, AdapterStop
from protocol.debugger import State, normalize_repr

STACK_ROW = re.compile(r"^(?P<name>.+?) (?P<file>\S+) (?P<line>\d+):(?P<col>\d+)$")
RETURN_PREFIX = "(return) "
LOAD_MORE = "Load More Stack Frames"
DIVERGENCE = "neural debugger vs debugpy: stop "
LOW_MARK = re.compile(r"(<1|\d+)% sure$")
VALUE_LIMIT = 1024  # VS Code shows a longer value as its first 1024 characters and "..."
SUMMARY = re.compile(r"^neural debugger vs debugpy: (\d+/\d+ stops matched|no stops compared)")


@dataclass(frozen=True)
class Mismatch:
    """One disagreement: at which stop (index into the UI steps), about what, and the two sides."""

    stop: int
    what: str
    detail: str

    def __str__(self) -> str:
        return f"stop {self.stop}: {self.what}: {self.detail}"


def squash(text: str) -> str:
    """Whitespace runs as one space: how a browser renders a value (and how the driver reads it)."""
    return " ".join(text.split())


def _squashed(values: dict[str, str] | None) -> dict[str, str] | None:
    return None if values is None else {squash(k): squash(v) for k, v in values.items()}


def shown_as(shown: str, sent: str) -> bool:
    """Whether VS Code's text `shown` is the value `sent`: equal, or its first `VALUE_LIMIT` characters and "..."."""
    cut = shown[:-3]  # (a few characters less when whitespace runs were squashed)
    return shown == sent or (len(sent) > VALUE_LIMIT and shown.endswith("...") and VALUE_LIMIT - 16 <= len(cut) <= VALUE_LIMIT
                             and sent.startswith(cut))


def same_values(shown: dict[str, str] | None, sent: dict[str, str] | None) -> bool:
    """The Locals VS Code shows are the ones sent (the same names, each value as `shown_as`)."""
    if shown is None or sent is None:
        return shown == sent
    return set(shown) == set(sent) and all(shown_as(shown[name], sent[name]) for name in sent)


def ui_stack(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """(name, line) of each frame row of the Call Stack view (session/thread rows skipped)."""
    frames = []
    for row in rows:
        match = STACK_ROW.match(row.get("text", ""))
        if match:
            frames.append((match["name"], int(match["line"])))
    return frames


def row_parts(row: dict[str, Any]) -> tuple[str, str, str] | None:
    """(name, type, value) of a Variables row: from the parts VS Code renders (``name =``, or ``name:``
    and ``type =`` with debug.showVariableTypes, then the value) when the driver read them, else
    from the row's text ``name = value``; None for a row without a value."""
    name, kind, value = row.get("name"), row.get("type"), row.get("value")
    if name is not None and value is not None and re.search(r"(:| =)$", name):
        return re.sub(r"(:| =)$", "", name).strip(), re.sub(r" =$", "", kind or "").strip(), value
    name, sep, value = row.get("text", "").partition(" = ")
    return (name, "", value) if sep else None


def ui_local_rows(rows: list[dict[str, Any]]) -> dict[str, tuple[str, str]] | None:
    """name -> (type, value) of the rows under the Locals scope of the Variables view (None if no Locals scope)."""
    found: dict[str, tuple[str, str]] | None = None
    scope_level = 0
    for row in rows:
        text, level = row.get("text", ""), int(row.get("level") or 0)
        if found is None:
            if text.split(" ")[0] == "Locals":
                found, scope_level = {}, level
            continue
        if level <= scope_level:
            break
        parts = row_parts(row) if level == scope_level + 1 else None
        if parts:
            found[parts[0]] = (parts[1], parts[2])
    return found


def ui_locals(rows: list[dict[str, Any]]) -> dict[str, str] | None:
    """``name = value`` rows under the Locals scope of the Variables view (None if no Locals scope)."""
    found = ui_local_rows(rows)
    return None if found is None else {name: value for name, (_, value) in found.items()}


def debugpy_view(state: State) -> dict[str, str]:
    """The Locals scope debugpy's state amounts to: ``(return) name`` first, then the top frame's locals."""
    view: dict[str, str] = {}
    normalized = state.normalized()
    if normalized.return_value is not None:
        view[RETURN_PREFIX + normalized.return_value.name] = normalized.return_value.value
    if normalized.frames:
        view.update(normalized.frames[0].locals)
    return view


def _normalized(values: dict[str, str] | None) -> dict[str, str] | None:
    return None if values is None else {k: normalize_repr(v) for k, v in values.items()}


def check_stop(index: int, observed: dict[str, Any], adapter: AdapterStop | None, expected: State | None) -> list[Mismatch]:
    """One stop: VS Code's views against the adapter's messages, the adapter against debugpy."""
    problems: list[Mismatch] = []

    def bad(what: str, detail: str) -> None:
        problems.append(Mismatch(index, what, detail))

    if observed["event"] == "terminated":
        left = ui_stack(observed.get("stack", []))
        if left:
            bad("Call Stack view", f"the adapter ended the session (terminated), VS Code still shows frames {left}")
        if expected is not None and not expected.finished:
            bad("end", f"the session ended; debugpy stops at {expected.location} ({expected.reason.value})")
        return problems
    if adapter is None:
        bad("adapter", "VS Code showed a stop the DAP tap has no stopped event for")
        return problems
    shown_stack = ui_stack(observed.get("stack", []))
    if shown_stack != [(squash(name), line) for name, line in adapter.stack]:
        bad("Call Stack view", f"VS Code shows {shown_stack}, the adapter sent {adapter.stack}")
    sent_all = adapter.total_frames is not None and len(adapter.stack) >= adapter.total_frames
    if sent_all and any(LOAD_MORE in row.get("text", "") for row in observed.get("stack", [])):
        bad("Call Stack view", f'VS Code shows "{LOAD_MORE}" though the adapter sent all {adapter.total_frames} frames')
    shown_locals = ui_locals(observed.get("variables", []))
    if not same_values(shown_locals, _squashed(adapter.locals)):
        bad("Variables view", f"VS Code shows {shown_locals}, the adapter sent {adapter.locals}")
    if expected is not None:
        if expected.finished:
            bad("stop", f"the adapter stopped at {adapter.stack}; debugpy ran to the end (exit code {expected.exit_code})")
            return problems
        if adapter.reason != expected.reason.value and adapter.reason != "data breakpoint":  # (check_watches: where)
            bad("stop reason", f"adapter {adapter.reason!r}, debugpy {expected.reason.value!r}")
        if adapter.stack != expected.location:
            bad("stack", f"adapter {adapter.stack}, debugpy {expected.location}")
        if _normalized(adapter.locals) != debugpy_view(expected):
            bad("locals", f"adapter {adapter.locals}, debugpy {debugpy_view(expected)}")
    problems += _check_evaluations(index, observed, adapter, expected)
    problems += check_confidence(index, observed, adapter)
    return problems


def check_confidence(index: int, observed: dict[str, Any], adapter: AdapterStop) -> list[Mismatch]:
    """How sure the adapter said it is, where VS Code shows it: the stopped event's description as the
    Call Stack's state label, each local's type (the low-confidence mark "int · 23% sure") beside its
    name in the Variables view, and the alternatives the adapter listed in the hover of a low one."""
    problems: list[Mismatch] = []
    labels = [observed.get("stackState", "")] + [row.get("state", "") for row in observed.get("stack", [])]
    labels = [label for label in labels if label]
    # After an edit the adapter redraws the stop (continued, then stopped, same thread); VS Code 1.139 then shows
    # no state label (seen with the oracle and the model): an empty label passes there, a wrong one does not.
    if adapter.description and not (observed.get("action") == "edit" and not labels):
        if squash(adapter.description) not in labels:
            problems.append(Mismatch(index, "Call Stack view", f"the adapter's stopped description {adapter.description!r} "
                                     f"is not the state label VS Code shows: {labels}"))
    shown = ui_local_rows(observed.get("variables", [])) or {}
    for var in adapter.locals_sent:
        name, kind = squash(var.get("name", "")), squash(var.get("type") or "")
        low = _low(var)
        if low and not (LOW_MARK.search(kind) and LOW_ATTRIBUTE in (var.get("presentationHint") or {}).get("attributes", [])):
            problems.append(Mismatch(index, f"local {name}", f"the adapter sent confidence {var.get('neuralConfidence')} "
                                     f"without the low mark (type {kind!r}, hint {var.get('presentationHint')})"))
        if name in shown and shown[name][0] != kind:
            problems.append(Mismatch(index, f"Variables view {name}", f"VS Code shows the type {shown[name][0]!r}, the adapter sent {kind!r}"))
    expanded = observed.get("expanded")
    if expanded:
        problems += _check_alternatives(index, expanded, adapter)
    for seen in observed.get("hovers", []):
        if not seen.get("low"):
            continue
        evaluation = next((e for e in adapter.evaluations if e.expression.strip() == seen["word"] and e.context == "hover"), None)
        if evaluation is None:
            continue  # reported by the evaluation checks
        listed = [squash(v.get("name", "")) for v in adapter.children.get(evaluation.reference, [])
                  if str(v.get("name", "")).startswith("alternative ")]
        missing = [name for name in listed if name not in seen["text"]]
        if missing:
            problems.append(Mismatch(index, f"hover {seen['word']}", f"the adapter listed {listed}, VS Code's hover "
                                     f"shows {seen['text']!r} without {missing}"))
    return problems


def _check_alternatives(index: int, expanded: dict[str, Any], adapter: AdapterStop) -> list[Mismatch]:
    """The rows under an expanded low-confidence local are the children (its parts, then the model's
    alternatives) the adapter sent for it, names, types and values."""
    name = expanded["name"]
    refs = [int(v.get("variablesReference") or 0) for answer in adapter.locals_answers or [adapter.locals_sent]
            for v in answer if v.get("name") == name]
    if not any(refs):
        return [Mismatch(index, f"Variables view {name}", "VS Code expanded a local the adapter sent as a leaf")]
    # the children the adapter listed for the latest reference VS Code asked about
    asked = [ref for ref in refs if ref in adapter.children]
    sent = [(squash(v.get("name", "")), squash(v.get("type") or ""), squash(v.get("value", "")))
            for v in adapter.children.get(asked[-1] if asked else refs[-1], [])]
    rows = expanded.get("variables", [])
    start = next((i for i, row in enumerate(rows) if int(row.get("level") or 0) == 2
                  and (row_parts(row) or ("",))[0] == name), None)
    shown = []
    for row in rows[start + 1:] if start is not None else []:
        if int(row.get("level") or 0) <= 2:
            break
        parts = row_parts(row)
        if int(row.get("level") or 0) == 3 and parts:
            shown.append(parts)
    if len(shown) != len(sent) or any(a[:2] != b[:2] or not shown_as(a[2], b[2]) for a, b in zip(shown, sent)):
        return [Mismatch(index, f"Variables view {name} (expanded)", f"VS Code shows {shown}, the adapter sent {sent}")]
    return []


def _low(var: dict[str, Any]) -> bool:
    sure = var.get("neuralConfidence")
    return isinstance(sure, (int, float)) and sure < LOW_CONFIDENCE


def confidence_shown(observations: dict[str, Any], session: AdapterSession) -> str:
    """What the run showed of the model's confidence (for the log: a check that saw no low value proves less)."""
    stops = [s for s in observations.get("stops", []) if s["event"] == "stopped"]
    labels = sum(any(row.get("state") for row in s.get("stack", [])) for s in stops)
    low = sum(1 for stop in session.stops for v in stop.locals_sent if _low(v))
    hovers = [h for s in stops for h in s.get("hovers", []) if h.get("low")]
    alternatives = sum(h["text"].count("alternative ") for h in hovers)
    labels += sum(bool(s.get("stackState")) for s in stops)
    expanded = [s["expanded"] for s in stops if s.get("expanded")]
    listed = sum(1 for e in expanded for row in e["variables"] if str(row.get("text", "")).startswith("alternative "))
    return (f"{labels} stopped descriptions in the Call Stack, {low} low-confidence locals marked, "
            f"{len(hovers)} hovered ({alternatives} alternatives shown), "
            + (f"{expanded[0]['name']} expanded ({listed} alternatives)" if expanded else "none expanded"))


def _answer(adapter: AdapterStop, expression: str, contexts: tuple[str, ...]) -> str | None:
    for evaluation in adapter.evaluations:
        if evaluation.expression.strip() == expression and evaluation.context in contexts:
            return evaluation.result if evaluation.result is not None else f"<error: {evaluation.error}>"
    return None


def _check_evaluations(index: int, observed: dict[str, Any], adapter: AdapterStop, expected: State | None) -> list[Mismatch]:
    problems: list[Mismatch] = []
    truth = debugpy_view(expected) if expected is not None else {}
    for hover in observed.get("hovers", []):
        word, text = hover["word"], hover["text"]
        sent = _answer(adapter, word, ("hover",))
        if sent is None:
            problems.append(Mismatch(index, f"hover {word}", "the adapter got no evaluate request with context 'hover'"))
            continue
        if squash(sent) not in text:
            problems.append(Mismatch(index, f"hover {word}", f"VS Code shows {text!r}, the adapter answered {sent!r}"))
        if expected is not None and normalize_repr(sent) != truth.get(word):
            problems.append(Mismatch(index, f"hover {word}", f"adapter {sent!r}, debugpy {truth.get(word)!r}"))
    for typed in observed.get("console", []):
        expression, rows = typed["expression"], typed["rows"]
        sent = _answer(adapter, expression, ("repl",))
        if sent is None:
            problems.append(Mismatch(index, f"Debug Console {expression}", "the adapter got no evaluate request with context 'repl'"))
            continue
        if squash(sent) not in rows:
            problems.append(Mismatch(index, f"Debug Console {expression}", f"VS Code shows {rows}, the adapter answered {sent!r}"))
        if expected is not None and normalize_repr(sent) != truth.get(expression):
            problems.append(Mismatch(index, f"Debug Console {expression}", f"adapter {sent!r}, debugpy {truth.get(expression)!r}"))
    return problems


def check_session(observations: dict[str, Any], session: AdapterSession, expected: list[State] | None) -> list[Mismatch]:
    """Every stop of a run; also that VS Code saw as many stops as the adapter sent."""
    problems: list[Mismatch] = []
    shown = observations.get("stops", [])
    stopped = [s for s in shown if s["event"] == "stopped"]
    if len(stopped) != len(session.stops):
        problems.append(Mismatch(-1, "stops", f"the driver saw {len(stopped)} stops, the adapter sent {len(session.stops)}"))
    if expected is not None and len(expected) < len(shown):
        problems.append(Mismatch(-1, "steps", f"{len(shown)} UI steps but debugpy gave {len(expected)} states"))
    adapter_iter = iter(session.stops)
    for index, observed in enumerate(shown):
        adapter = next(adapter_iter, None) if observed["event"] == "stopped" else None
        want = expected[index] if expected is not None and index < len(expected) else None
        problems += check_stop(index, observed, adapter, want)
    return problems


def summary_line(session: AdapterSession) -> str | None:
    """The adapter's comparison summary as sent in an output event (first line), if any."""
    for text in session.output:
        if SUMMARY.search(text):
            return text.strip().splitlines()[0]
    return None


def check_divergences(observations: dict[str, Any], session: AdapterSession) -> list[Mismatch]:
    """The compareWith run of a model: each divergence row VS Code's Debug Console showed (at any stop,
    or at the end) is one the adapter sent, and when it sent some, some showed (the console draws
    only the rows in view)."""
    sent = [squash(text) for text in session.output if text.startswith(DIVERGENCE)]
    rows = list(dict.fromkeys([*observations.get("consoleSeen", []), *observations.get("console", [])]))
    shown = [row for row in rows if row.startswith(DIVERGENCE)]
    problems = [Mismatch(-1, "Debug Console", f"VS Code shows {row!r}, which the adapter never sent")
                for row in shown if not any(row == text or text.startswith(row) for text in sent)]
    if sent and not shown:
        problems.append(Mismatch(-1, "Debug Console", f"the adapter sent {len(sent)} divergences, VS Code shows none: "
                                 f"{observations.get('console', [])[-5:]}"))
    return problems


def check_summary(observations: dict[str, Any], session: AdapterSession, stops_seen: int, all_match: bool = True) -> list[Mismatch]:
    """The compareWith run: the summary the adapter sent shows in VS Code's Debug Console; with the
    oracle (`all_match`), every stop matched."""
    line = summary_line(session)
    if line is None:
        return [Mismatch(-1, "comparison summary", f"the adapter sent no summary; its output: {session.output}")]
    problems = []
    console = observations.get("console", [])
    if not any(line in row for row in console):
        problems.append(Mismatch(-1, "comparison summary", f"{line!r} is not in VS Code's Debug Console: {console}"))
    if not all_match:
        return problems
    match = re.search(r"(\d+)/(\d+) stops matched", line)
    if not match:
        problems.append(Mismatch(-1, "comparison summary", f"unreadable summary {line!r}"))
    elif int(match[1]) != int(match[2]) or int(match[2]) < stops_seen:
        problems.append(Mismatch(-1, "comparison summary", f"{line!r} (the oracle should match debugpy at all {stops_seen} stops)"))
    return problems


def ui_scope_rows(rows: list[dict[str, Any]], scope: str) -> dict[str, str] | None:
    """``name -> value`` of the variable rows right under scope `scope` of the Variables view (None if it is not shown)."""
    found: dict[str, str] | None = None
    for row in rows:
        level = int(row.get("level") or 0)
        if level == 1:
            if found is not None:
                break
            if row.get("text", "").split(" ")[0] == scope:
                found = {}
        elif found is not None and level == 2:
            parts = row_parts(row)
            if parts:
                found[parts[0]] = parts[2]
    return found


def check_watches(observations: dict[str, Any], session: AdapterSession,
                  watched: dict[int, tuple[State, State]]) -> list[Mismatch]:
    """Break on Value Change from VS Code's Variables view: the adapter took the data breakpoints VS Code set,
    and each Continue after them stopped (reason ``data breakpoint``, old -> new) where the recorder's run
    first changes a watched value; the History scope VS Code shows is the one the adapter sent."""
    problems: list[Mismatch] = []
    stops = observations.get("stops", [])
    adapter_stops = iter(session.stops)
    paired = [(i, s, next(adapter_stops, None) if s["event"] == "stopped" else None) for i, s in enumerate(stops)]
    for index, observed, adapter in paired:
        if observed.get("watched") and (adapter is None or not any(b.get("verified") for b in adapter.data_breakpoints)):
            problems.append(Mismatch(index, "data breakpoint", f"VS Code set {observed['watched']}; the adapter answered "
                                     f"{adapter.data_breakpoints if adapter else 'nothing'}"))
        if index in watched:
            before, want = watched[index]
            if adapter is None:
                problems.append(Mismatch(index, "data breakpoint", f"the session ended; the recorder stops at {want.location}"))
                continue
            # the old -> new text the adapter must show (module-level watches: the scenario's are)
            changed = [(name, before.frames[-1].locals.get(name), value) for name, value in want.frames[-1].locals.items()
                       if before.frames[-1].locals.get(name) not in (None, value)]
            text = "; ".join(f"{name}: {old} -> {new}" for name, old, new in changed)
            if adapter.reason != "data breakpoint" or adapter.stack != want.location or not text or text not in (adapter.description or ""):
                problems.append(Mismatch(index, "data breakpoint", f"adapter stopped ({adapter.reason}) at {adapter.stack}: "
                                         f"{adapter.description!r}; the recorder's run changes {text!r} at {want.location}"))
            label = observed.get("stackState") or ""
            if text and text not in label:
                problems.append(Mismatch(index, "Call Stack view", f"the state label {label!r} does not say {text!r}"))
        if observed.get("history") is not None:
            shown = ui_scope_rows(observed["history"], "History")
            ref = adapter.scopes.get("History") if adapter else None
            sent = {v["name"]: squash(v.get("value", "")) for v in (adapter.children.get(ref, []) if ref else [])}
            if not shown or {k: squash(v) for k, v in shown.items()} != sent:
                problems.append(Mismatch(index, "History scope", f"VS Code shows {shown}, the adapter sent {sent or 'no History scope'}"))
    return problems


EDITED = "changed on disk: "  # the adapter's note when it follows an edit
NO_LONGER = "the comparison with debugpy no longer applies"
BOUNDED = re.compile(r"no watched value changed in \d+ predicted steps")
PREDICTED_CHANGE = re.compile(r"^data breakpoint: .+ -> .+ \((<1|\d+)% sure\)")


def _console(observations: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys([*observations.get("consoleSeen", []), *observations.get("console", [])]))


def _paired(observations: dict[str, Any], session: AdapterSession) -> list[tuple[int, dict[str, Any], AdapterStop | None]]:
    stops = iter(session.stops)
    return [(i, s, next(stops, None) if s["event"] == "stopped" else None) for i, s in enumerate(observations.get("stops", []))]


def check_edits(observations: dict[str, Any], session: AdapterSession, scenario: Scenario) -> list[Mismatch]:
    """The program edited and saved in VS Code while stopped: the adapter said so in the Debug Console (and
    VS Code shows it), checked the breakpoints again (moved with the edit), ended a comparison with debugpy,
    redrew the stop; and the next Step Over from the edited line stops on the inserted line, which only the
    edited source has (the oracle and the model alike)."""
    problems: list[Mismatch] = []
    paired = _paired(observations, session)
    name = Path(scenario.program).name
    for index, step in enumerate(scenario.steps):
        if step.action != "edit" or step.edit is None or index >= len(paired):
            continue
        after = step.edit.after or paired[index][1].get("editedAfter")
        said = [text for text in session.output if f"{name} {EDITED}" in text]
        moved = sorted(step.edit.moved(line, after) for line in scenario.breakpoints)
        if not said:
            problems.append(Mismatch(index, "edit", f"the adapter never said {name} {EDITED!r}...; it said {session.output[-5:]}"))
            continue
        text = said[0].strip()
        if moved and f"breakpoints checked again: {', '.join(map(str, moved))}" not in text:
            problems.append(Mismatch(index, "edit", f"the breakpoints {scenario.breakpoints} should stand on {moved} now: {text!r}"))
        if not any(squash(text).startswith(row) or row.startswith(squash(text)[:80]) for row in _console(observations)):
            problems.append(Mismatch(index, "Debug Console", f"VS Code does not show {text!r}"))
        if scenario.compare_with and not any(NO_LONGER in t for t in session.output):
            problems.append(Mismatch(index, "edit", f"compareWith {scenario.compare_with}: the adapter did not say {NO_LONGER!r}"))
        before = paired[index - 1][2] if index > 0 else None
        nxt = paired[index + 1][2] if index + 1 < len(paired) and scenario.steps[index + 1].action == "next" else None
        if before is not None and before.stack == [("<module>", after)] and index + 1 < len(paired):
            want = [("<module>", after + 1)]
            if nxt is None or nxt.stack != want:
                problems.append(Mismatch(index + 1, "edit", f"Step Over from line {after} after the edit stopped at "
                                         f"{nxt.stack if nxt else 'the end'}, not on the inserted line {want}"))
    return problems


def check_predicted_watches(observations: dict[str, Any], session: AdapterSession) -> list[Mismatch]:
    """A model's Continue with a data breakpoint: it stops where the model predicts the watched value changes
    (reason ``data breakpoint``, old -> new and how sure, the new value the one the Variables view shows), or
    after dataBreakpointSteps predicted steps without a change, saying so in the Debug Console."""
    problems: list[Mismatch] = []
    armed = False
    for index, observed, adapter in _paired(observations, session):
        if armed and observed.get("action") == "continue":
            if adapter is None:
                continue  # the predicted run ended first: check_session saw VS Code end with it
            if adapter.reason == "data breakpoint":
                text = adapter.description or ""
                if not PREDICTED_CHANGE.match(text):
                    problems.append(Mismatch(index, "data breakpoint", f"the description {text!r} does not say old -> new (N% sure)"))
                for name, value in re.findall(r"(\w+): .+? -> (.+?) \((?:<1|\d+)% sure\)", text):
                    if adapter.locals is not None and name in adapter.locals and squash(adapter.locals[name]) != squash(value):
                        problems.append(Mismatch(index, "data breakpoint", f"{name} -> {value} in {text!r}, the Locals say {adapter.locals[name]!r}"))
            elif not any(BOUNDED.search(t) for t in session.output):
                problems.append(Mismatch(index, "data breakpoint", f"a {adapter.reason!r} stop that is neither a data breakpoint "
                                         "nor the dataBreakpointSteps bound said in the Debug Console"))
        armed = armed or bool(observed.get("watched"))
    return problems
