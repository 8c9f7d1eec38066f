"""The neural-debugger language: the one module that owns the text layout of a debugging session.

A session is rendered as text made of special tokens (``<|...|>``, each one token of the
tokenizer) and short plain-text fields. The full specification with an example is in
``docs/language.md``; in short::

    <|bos|><|src_sep|><|line_sep|>1 def f(x):
    <|line_sep|>2     return x + 1
    <|line_sep|>3 y = f(2)
    <|src_sep|><|breakpoints|><|line_sep|>2
    <|reason_entry|><|call_sep|><module><|line_sep|>1{}<|state_end|>
    <|step_into|><|reason_step|><|frame_sep|><module><|line_sep|>3{..}<|state_end|>
    <|step_into|><|reason_step|><|frame_sep|><module><|line_sep|>3{..}<|call_sep|>f<|line_sep|>2{"x":"2"}<|state_end|>
    ...

* The program comes first, one ``<|line_sep|>N text`` per non-blank line, so a state names a
  line by its number and the model finds the text by matching ``<|line_sep|>N``.
* Frames are written outermost first. ``<|call_sep|>`` starts a frame whose locals are written in
  full (a new scope); ``<|frame_sep|>`` starts a frame that continues the frame at the same depth
  of the previous state, and its locals are a delta: only changed or new variables, ``..`` for
  the unchanged rest (a deleted variable makes the object full, without ``..``).
* Every free-text field (locals, return value, exception message, stdout) is a JSON string
  with ``|`` escaped as ``\\u007c``, so no special token can ever appear inside one.
* A state ends with ``<|state_end|>``, the generation stop token.

Public API: `render_trajectory`, `render_prompt`, `render_state`, `render_header`,
`render_action`, `parse_state`, `ParseError`, `state_regex`, windows (`window_snapshot`,
`render_windows`, `next_window_start`, `window_listing`), and the special-token constants (defined
in `model.prompt.vocabulary`; which lines a listing shows: `model.prompt.listing`, which does not import this module).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from protocol.debugger import (
    Action,
    ActionKind,
    Ending,
    ExceptionInfo,
    Frame,
    ReturnValue,
    State,
    Step,
    StopReason,
    Trajectory,
    normalize_repr,
)

from model.prompt.listing import (
    NO_LISTING,
    Listing,
    choose_listing,
    listing_budget,
    listing_line,
    listing_text,
    program_lines,
)
from model.prompt.vocabulary import (  # noqa: F401 - the special tokens are this module's API too (`model.prompt.language.STATE_END`)
    ACTION_SEP,
    ACTION_TOKENS,
    ARG_SEP,
    BOS,
    BREAKPOINT,
    BREAKPOINTS,
    CALL_SEP,
    CONTINUE,
    ENDING_TOKENS,
    EOS,
    EXCEPTION_SEP,
    EXIT_ERROR,
    EXIT_NEVER,
    EXIT_NORMAL,
    EXITED,
    FRAME_SEP,
    INV_STEP_CALL,
    INV_STEP_INTO,
    INV_STEP_OVER,
    LINE_SEP,
    PAD,
    REASON_BREAKPOINT,
    REASON_ENTRY,
    REASON_EXCEPTION,
    REASON_STEP,
    REASON_TOKENS,
    RETURN_SEP,
    SPECIAL_TOKENS,
    SRC_SEP,
    STATE_END,
    STDOUT,
    STEP_INTO,
    STEP_OVER,
    STEP_RETURN,
    STOP_TOKEN,
    _SPLIT_RE,
    json_string,
)

_TOKEN_TO_ACTION = {v: k for k, v in ACTION_TOKENS.items()}
_TOKEN_TO_REASON = {v: k for k, v in REASON_TOKENS.items()}
_TOKEN_TO_ENDING: dict[str, Ending | None] = {v: k for k, v in ENDING_TOKENS.items()} | {EXITED: None}
NAME_FORBIDDEN_RE = re.compile(r'["{}|\s]')  # characters a frame, return or exception name may not contain
_NAME_FORBIDDEN = NAME_FORBIDDEN_RE


class ParseError(ValueError):
    """A state text that is not well formed; the message says where and why."""


@dataclass(frozen=True)
class Segment:
    """A piece of rendered text; `predicted` marks the model's targets (the states after an action)."""

    text: str
    predicted: bool


# --- field encoding ----------------------------------------------------------------------------


def json_locals(values: dict[str, str], delta: bool) -> str:
    """Locals as a compact JSON object; a delta object ends with ``..`` (the unchanged rest)."""
    body = ",".join(f"{json_string(k)}:{json_string(v)}" for k, v in values.items())
    if delta:
        return "{" + (body + "," if body else "") + "..}"
    return "{" + body + "}"


class UnrenderableError(ValueError):
    """A state holds a name the language cannot write (a frame, return value or exception name with spaces, ...)."""


def _check_name(name: str, what: str) -> str:
    if not name or _NAME_FORBIDDEN.search(name):
        raise UnrenderableError(f"{what} {name!r} cannot be rendered: it must be non-empty, without quotes, braces, '|' or spaces")
    return name


# --- program lines -----------------------------------------------------------------------------


def source_line(program: str, line: int) -> str:
    """The text of a 1-based line, stripped of surrounding whitespace ('' outside the program).

    This is what `parse_state` puts in `Frame.source` for a frame of the program.
    """
    lines = program_lines(program)
    return lines[line - 1].strip() if 1 <= line <= len(lines) else ""


def canonical_state(state: State, program: str, modules: Mapping[str, str] | None = None) -> State:
    """`state` normalized (addresses ``at 0x?``) with each frame's source taken from the program, or
    for a frame of another user file from `modules` (path -> source; '' when the file is not there).

    Rendering then parsing gives back exactly ``canonical_state(state, program, modules)``.
    """
    data = state.normalized()
    for frame in data.frames:
        if frame.file is None:
            frame.source = source_line(program, frame.line)
        else:
            frame.source = module_source_line(modules, frame.file, frame.line)
    if data.reason is not StopReason.EXITED:
        data.exit_code, data.ending = None, None
    return data


# --- rendering ---------------------------------------------------------------------------------


def render_header(program: str, breakpoints: Sequence[int], listing: Listing | None = None,
                  modules: Mapping[str, str] | None = None) -> str:
    """The window's prefix: ``<|bos|>``, the numbered source listing, the session breakpoints.

    Blank lines are left out (their numbers are skipped); ``<|`` inside the source is written
    ``< |`` so the listing cannot contain a special token. `listing` (from
    `model.prompt.listing.choose_listing`; None: the whole program) says which lines of the program and
    of the other user files in `modules` (path -> source) are shown.
    """
    parts = [BOS, SRC_SEP]
    if listing is None or listing.full:
        for number, text in enumerate(program_lines(program), start=1):
            if text.strip():
                parts.append(listing_line(number, text))
    else:
        parts.append(listing_text(listing, program, modules))
    parts.append(SRC_SEP)
    parts.append(render_breakpoints(breakpoints))
    return "".join(parts)


def render_breakpoints(breakpoints: Sequence[int | tuple[str, int]]) -> str:
    """``<|breakpoints|>`` and the session breakpoints, then a newline: the program's lines as
    ``<|line_sep|>N``, then each other user file's as ``<|src_sep|>"path"`` and its ``<|line_sep|>N``."""
    lines = sorted({int(b) for b in breakpoints if not isinstance(b, tuple)})
    files: dict[str, set[int]] = {}
    for b in breakpoints:
        if isinstance(b, tuple):
            files.setdefault(str(b[0]), set()).add(int(b[1]))
    text = BREAKPOINTS + "".join(f"{LINE_SEP}{n}" for n in lines)
    for path in sorted(files):
        text += SRC_SEP + json_string(path) + "".join(f"{LINE_SEP}{n}" for n in sorted(files[path]))
    return text + "\n"


def render_action(action: Action) -> str:
    """An action token; a one-off breakpoint carries its line: ``<|breakpoint|><|line_sep|>N``."""
    token = ACTION_TOKENS[action.kind]
    if action.kind is ActionKind.BREAKPOINT:
        if action.line is None:
            raise ValueError("a breakpoint action needs a line")
        return f"{token}{LINE_SEP}{action.line}"
    return token


def _continues(new: list[Frame], old: list[Frame], depth: int) -> bool:
    """Whether new frame `depth` (0 = outermost) continues the previous state's frame at that depth.

    True when the previous state has a frame there with the same name and file, and every frame
    below it is at the same (name, line, file) in both states.
    """
    if depth >= len(old) or old[depth].name != new[depth].name or old[depth].file != new[depth].file:
        return False
    return all(
        (a.name, a.line, a.file) == (b.name, b.line, b.file) for a, b in zip(new[:depth], old[:depth])
    )


def _frame_locals(frame: Frame, old: Frame | None) -> tuple[str, bool]:
    """(JSON text, is_delta) of a frame's locals relative to its continued frame (None: full)."""
    values = {k: normalize_repr(v) for k, v in frame.locals.items()}
    if old is None:
        return json_locals(values, delta=False), False
    before = {k: normalize_repr(v) for k, v in old.locals.items()}
    if any(k not in values for k in before):
        return json_locals(values, delta=False), False
    changed = {k: values[k] for k in before if values[k] != before[k]}
    changed |= {k: v for k, v in values.items() if k not in before}
    return json_locals(changed, delta=True), True


def _render_frame(frame: Frame, old: Frame | None) -> str:
    body, _ = _frame_locals(frame, old)
    sep = FRAME_SEP if old is not None else CALL_SEP
    where = "" if frame.file is None else SRC_SEP + json_string(frame.file)
    return f"{sep}{_check_name(frame.name, 'frame name')}{where}{LINE_SEP}{frame.line}{body}"


def render_state(state: State, previous: State | None = None) -> str:
    """One state, as a delta against `previous` (None: a full snapshot), ending with `STATE_END`."""
    if state.reason is StopReason.EXITED:
        head = _TOKEN_FOR_ENDING(state.ending) + ("" if state.exit_code is None else str(state.exit_code))
    else:
        head = REASON_TOKENS[state.reason]
    new = list(reversed(state.frames))
    old = list(reversed(previous.frames)) if previous is not None else []
    parts = [head]
    for depth, frame in enumerate(new):
        parts.append(_render_frame(frame, old[depth] if _continues(new, old, depth) else None))
    if state.return_value is not None:
        name = _check_name(state.return_value.name, "return value name")
        parts.append(f"{RETURN_SEP}{name}{json_string(normalize_repr(state.return_value.value))}")
    if state.exception is not None:
        etype = _check_name(state.exception.type, "exception type")
        parts.append(f"{EXCEPTION_SEP}{etype}{json_string(normalize_repr(state.exception.message))}")
    if state.stdout:
        parts.append(STDOUT + json_string(state.stdout))
    parts.append(STATE_END)
    return "".join(parts)


def _TOKEN_FOR_ENDING(ending: Ending | None) -> str:  # noqa: N802 - a lookup, named like the tables
    return EXITED if ending is None else ENDING_TOKENS[ending]


def _history_states(history: Sequence[State | Step]) -> Iterator[tuple[Action | None, State]]:
    for index, item in enumerate(history):
        if isinstance(item, Step):
            if index == 0:
                raise ValueError("history must start with a State (the initial or snapshot state), not a Step")
            yield item.action, item.state
        elif index == 0:
            yield None, item
        else:
            raise ValueError(f"history item {index} is a State; only the first item may be one, the rest are Steps")


def render_segments(program: str, breakpoints: Sequence[int], history: Sequence[State | Step],
                    listing: Listing | None = None, modules: Mapping[str, str] | None = None) -> list[Segment]:
    """Header, then the first state of `history` in full, then each (action, state) as deltas.

    The first state is given (not predicted); every later state text (ending with `STATE_END`) is
    a predicted segment, its action a given one. `listing`, `modules`: as in `render_header`.
    """
    segments = [Segment(render_header(program, breakpoints, listing, modules), predicted=False)]
    previous: State | None = None
    for action, state in _history_states(history):
        if action is not None:
            segments.append(Segment(render_action(action), predicted=False))
        segments.append(Segment(render_state(state, previous), predicted=action is not None))
        previous = state
    return segments


def render_trajectory(traj: Trajectory) -> list[Segment]:
    """A whole trajectory as segments; concatenating their texts gives the training document.

    Segment boundaries fall next to special tokens, so tokenizing segment by segment gives the
    same ids as tokenizing the whole text (the loss mask is the `predicted` flag per segment).
    """
    return render_segments(traj.program, [*traj.breakpoints, *traj.file_breakpoints], [traj.initial, *traj.steps],
                           modules=traj.modules or None)


def render_text(segments: Sequence[Segment]) -> str:
    """The concatenated text of segments."""
    return "".join(s.text for s in segments)


def render_prompt(
    program: str, breakpoints: Sequence[int], history: Sequence[State | Step], action: Action,
    listing: Listing | None = None, modules: Mapping[str, str] | None = None,
) -> str:
    """The inference prompt: the session so far, then `action`; the model continues with the next state.

    Append-only: for history ``h`` and its next step ``Step(a, s)``, the prompt for
    ``h + [Step(a, s)]`` starts with ``render_prompt(h, a) + render_state(s, previous)``.
    """
    return render_text(render_segments(program, breakpoints, history, listing, modules)) + render_action(action)


# --- windows -----------------------------------------------------------------------------------


def window_snapshot(history: Sequence[State | Step], start: int) -> list[State | Step]:
    """The history from index `start` on, with that entry's state as the (full) first state."""
    first = history[start]
    return [first.state if isinstance(first, Step) else first, *history[start + 1 :]]


def render_window(
    program: str, breakpoints: Sequence[int], history: Sequence[State | Step], action: Action, start: int
) -> str:
    """A prompt that starts at ``history[start]`` rendered as a full snapshot (for long sessions)."""
    return render_prompt(program, breakpoints, window_snapshot(history, start), action)


def next_window_start(
    program: str,
    breakpoints: Sequence[int],
    history: Sequence[State | Step],
    action: Action,
    current_start: int,
    max_tokens: int,
    count_tokens: Callable[[str], int],
    reserve: int = 256,
) -> int:
    """The window start to use for the next prompt: `current_start` while the prompt plus `reserve`
    generated tokens fits in `max_tokens`, else the earliest later start whose prompt fits in half
    of that budget (so the window, and the cached prefix, then stays put for a while).
    """
    budget = max_tokens - reserve
    if count_tokens(render_window(program, breakpoints, history, action, current_start)) <= budget:
        return current_start
    last = len(history) - 1
    for start in range(last, current_start - 1, -1):
        if count_tokens(render_window(program, breakpoints, history, action, start)) > budget // 2:
            return min(start + 1, last)
    return last


def window_listing(
    current: Listing | None,
    state: State,
    program: str,
    context: int,
    count_tokens: Callable[[str], int],
    *,
    breakpoints: Sequence[int | tuple[str, int]] = (),
    modules: Mapping[str, str] | None = None,
) -> Listing:
    """The listing of a window that starts at `state`, for a model of `context` tokens.

    `current` (the listing of the window before) is kept while it covers `state` and still fits
    the budget left by this window's fixed part (header without listing, `state` in full), so a
    session's cached prefix stays valid; otherwise `choose_listing` picks a new one for `state`.
    The session and the training windows (`render_windows`) both call this.
    """
    fixed = count_tokens(render_header(program, breakpoints, NO_LISTING, modules)) + count_tokens(render_state(state, None))
    budget = listing_budget(context, fixed)
    if current is not None and current.covers(state, program, modules):
        if count_tokens(listing_text(current, program, modules)) <= budget:
            return current
    return choose_listing(state, program, budget, count_tokens, breakpoints=breakpoints, modules=modules)


def render_windows(traj: Trajectory, max_tokens: int, count_tokens: Callable[[str], int],
                   modules: Mapping[str, str] | None = None) -> list[list[Segment]]:
    """A trajectory cut into windows of at most `max_tokens`, each a valid document on its own.

    Every window is header + a full snapshot state (given) + (action, state) pairs; each step's
    state is predicted in exactly one window. The listings follow the session's rule: each state
    in turn asks `window_listing` (the context is `max_tokens`) whether the listing
    so far still serves it; a window ends before the step whose prompt ends on a state that gets a
    new listing (the next window starts there, with it), or when the next step does not fit.
    A step too long for any window ends the trajectory there (the remaining steps are dropped); a
    trajectory without steps gives no window. Token counts of segments add up because segment
    boundaries fall next to special tokens. `modules`: other user files the listing may show
    (default: the trajectory's ``modules`` when it has them).
    """
    if modules is None:
        modules = getattr(traj, "modules", None) or None
    states = traj.states
    listings: list = []

    def listing_at(k: int):  # noqa: ANN202 - the listing a session shows when state k is the current stop
        while len(listings) <= k:
            i = len(listings)
            listings.append(window_listing(listings[-1] if listings else None, states[i], traj.program, max_tokens, count_tokens,
                                           breakpoints=[*traj.breakpoints, *traj.file_breakpoints], modules=modules))
        return listings[k]

    windows: list[list[Segment]] = []
    index = 0
    while index < len(traj.steps):
        snapshot = states[index]
        listing = listing_at(index)
        header = render_header(traj.program, [*traj.breakpoints, *traj.file_breakpoints], listing, modules)
        first = render_state(snapshot, None)
        segments = [Segment(header, False), Segment(first, False)]
        used = count_tokens(header) + count_tokens(first)
        taken = 0
        for step in traj.steps[index:]:
            previous = states[index + taken]
            if taken and listing_at(index + taken) != listing:
                break
            pieces = [Segment(render_action(step.action), False), Segment(render_state(step.state, previous), True)]
            cost = sum(count_tokens(p.text) for p in pieces)
            if used + cost > max_tokens:
                break
            segments += pieces
            used += cost
            taken += 1
        if taken == 0:  # nothing fits after this snapshot (or nothing is left): stop here
            break
        windows.append(segments)
        index += taken
    return windows


# --- parsing -----------------------------------------------------------------------------------


class _Cursor:
    """The state text split into special tokens and the plain text between them."""

    def __init__(self, text: str) -> None:
        pieces = _SPLIT_RE.split(text)
        self.items: list[tuple[str, str]] = []  # (special token, plain text after it)
        if pieces[0].strip():
            raise ParseError(f"state text must start with a reason or ending token, found {pieces[0][:40]!r}")
        for i in range(1, len(pieces), 2):
            self.items.append((pieces[i], pieces[i + 1]))
        self.pos = 0

    def peek(self) -> str | None:
        return self.items[self.pos][0] if self.pos < len(self.items) else None

    def take(self) -> tuple[str, str]:
        item = self.items[self.pos]
        self.pos += 1
        return item


def _json_value(text: str, what: str) -> tuple[object, str]:
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as error:
        raise ParseError(f"{what}: bad JSON {text[:60]!r} ({error.msg})") from None
    except RecursionError:
        raise ParseError(f"{what}: JSON nested too deeply") from None
    return value, text[end:]


def _json_str(text: str, what: str) -> tuple[str, str]:
    value, rest = _json_value(text, what)
    if not isinstance(value, str):
        raise ParseError(f"{what}: expected a JSON string, got {text[:60]!r}")
    return value, rest


def _parse_locals(text: str, where: str) -> tuple[dict[str, str], bool]:
    """(values, is_delta) from ``{...}`` / ``{...,..}`` / ``{..}``; nothing may follow it."""
    text = text.rstrip("\n")
    delta = text == "{..}" or text.endswith(",..}")
    body = "{}" if text == "{..}" else (text[:-4] + "}" if delta else text)
    if not body.startswith("{"):
        raise ParseError(f"{where}: locals must be a JSON object, got {text[:80]!r}")
    try:
        pairs = json.loads(body, object_pairs_hook=lambda p: p)
    except json.JSONDecodeError as error:
        raise ParseError(f"{where}: locals are not a JSON object: {text[:80]!r} ({error.msg})") from None
    except RecursionError:
        raise ParseError(f"{where}: locals nested too deeply") from None
    values: dict[str, str] = {}
    for key, value in pairs:
        if not isinstance(value, str):
            raise ParseError(f"{where}: local {key!r} must be a repr string, got {value!r}")
        values[key] = value  # written twice: the last value wins (as in JSON), so all the regex allows parses
    return values, delta


_LINE_RE = re.compile(r"(-?[0-9]+)(.*)", re.S)
_INT_RE = re.compile(r"-?[0-9]{1,9}")


def _small_int(text: str, what: str) -> int:
    """An ASCII integer of at most 9 digits (line numbers, exit codes), else `ParseError`."""
    if not _INT_RE.fullmatch(text):
        raise ParseError(f"{what} must be an integer of at most 9 digits, found {text[:40]!r}")
    return int(text)


def _parse_frame(cur: _Cursor, program: str, new: list[Frame], old: list[Frame],
                 modules: Mapping[str, str] | None = None) -> Frame:
    sep, name = cur.take()
    depth = len(new)
    where = f"frame {depth} (outermost is 0)"
    if not name or _NAME_FORBIDDEN.search(name):
        raise ParseError(f"{where}: bad function name {name!r}")
    file: str | None = None
    source = ""
    if cur.peek() == SRC_SEP:
        _, text = cur.take()
        value, rest = _json_value(text, where)
        if isinstance(value, str) and value and not rest:
            file = value
        elif isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value) and not rest:
            file = value[0]  # the older form ["path", "source text"]
        else:
            raise ParseError(f"{where}: a frame of another file needs its path as a JSON string, got {text[:60]!r}")
    if cur.peek() != LINE_SEP:
        raise ParseError(f"{where}: expected {LINE_SEP} after the function name, found {cur.peek()!r}")
    _, text = cur.take()
    match = _LINE_RE.fullmatch(text)
    if not match:
        raise ParseError(f"{where}: expected a line number then locals, found {text[:60]!r}")
    line = _small_int(match.group(1), f"{where}: line number")
    values, delta = _parse_locals(match.group(2), where)
    if sep == FRAME_SEP:
        if depth >= len(old):
            raise ParseError(f"{where}: {FRAME_SEP} continues a frame, but the previous state has only {len(old)}")
        if delta:
            values = {**{k: normalize_repr(v) for k, v in old[depth].locals.items()}, **values}
    elif delta:
        raise ParseError(f"{where}: a {CALL_SEP} frame (new scope) must write its locals in full, without '..'")
    if file is None:
        source = source_line(program, line)
    else:
        source = module_source_line(modules, file, line)
    return Frame(name=name, line=line, source=source, locals=values, file=file)


def module_source_line(modules: Mapping[str, str] | None, file: str, line: int) -> str:
    """The stripped text of a line of another user file (`modules`: path -> source); '' if unknown."""
    text = (modules or {}).get(file)
    return source_line(text, line) if text is not None else ""


def parse_state(text: str, previous: State | None, program: str, modules: Mapping[str, str] | None = None) -> State:
    """Rebuild the full State from a state text (as rendered or generated), given the previous state.

    `previous` is the state the text's deltas refer to (None for a full snapshot; ``..`` then
    fails). A trailing `STATE_END` and whitespace are optional. Raises `ParseError` with the
    reason when the text is malformed.
    """
    if not isinstance(text, str):
        raise ParseError(f"state text must be a string, got {type(text).__name__}")
    cur = _Cursor(text.strip())
    if cur.peek() is None:
        raise ParseError("empty state text: expected a reason or ending token")
    token, rest = cur.take()
    ending: Ending | None = None
    exit_code: int | None = None
    if token in _TOKEN_TO_REASON:
        reason = _TOKEN_TO_REASON[token]
        if rest.strip():
            raise ParseError(f"unexpected text {rest[:40]!r} after {token}")
    elif token in _TOKEN_TO_ENDING:
        reason, ending = StopReason.EXITED, _TOKEN_TO_ENDING[token]
        if rest.strip():
            exit_code = _small_int(rest.strip(), "exit code")
    else:
        raise ParseError(f"state must start with a reason or ending token, found {token}")
    old = list(reversed(previous.frames)) if previous is not None else []
    new: list[Frame] = []
    while cur.peek() in (FRAME_SEP, CALL_SEP):
        new.append(_parse_frame(cur, program, new, old, modules))
    state = State(reason=reason, frames=list(reversed(new)), exit_code=exit_code, ending=ending)
    _parse_tail(cur, state)
    return state


def _named_string(text: str, what: str, head: str, value_what: str) -> tuple[str, str]:
    """A field written as a name (the return value's function, the exception's type) then one JSON string."""
    name, quote, value = text.partition('"')
    if not name or not quote:
        raise ParseError(f"{what} must be {head} then a JSON string, found {text[:60]!r}")
    if _NAME_FORBIDDEN.search(name):
        raise ParseError(f"{what}: bad {head.lower()} {name!r}")
    literal, rest = _json_str('"' + value, value_what)
    if rest.strip():
        raise ParseError(f"unexpected text {rest[:40]!r} after the {what}")
    return name, literal


def _parse_tail(cur: _Cursor, state: State) -> None:
    """The optional return value, exception and stdout fields, then the end of the state."""
    if cur.peek() == RETURN_SEP:
        name, value = _named_string(cur.take()[1], "return value", "NAME", "return value")
        state.return_value = ReturnValue(name=name, value=value)
    if cur.peek() == EXCEPTION_SEP:
        etype, message = _named_string(cur.take()[1], "exception", "TYPE", "exception message")
        state.exception = ExceptionInfo(type=etype, message=message)
    if cur.peek() == STDOUT:
        _, text = cur.take()
        out, rest = _json_str(text, "stdout")
        if rest.strip():
            raise ParseError(f"unexpected text {rest[:40]!r} after stdout")
        state.stdout = out
    if cur.peek() == STATE_END:
        _, rest = cur.take()
        if rest.strip() or cur.peek() is not None:
            raise ParseError(f"text after {STATE_END}: {(rest or str(cur.peek()))[:40]!r}")
    elif cur.peek() is not None:
        raise ParseError(f"unexpected {cur.peek()} in a state (expected a frame, field, or {STATE_END})")


def parse_session(text: str, program: str, modules: Mapping[str, str] | None = None) -> tuple[list[int | tuple[str, int]], list[tuple[Action | None, State]]]:
    """A whole rendered session or window back into (breakpoints, [(action or None, state), ...]).

    The inverse of `render_segments` (for checking data and tests); raises `ParseError`.
    """
    head, sep, body = text.partition(BREAKPOINTS)
    if not sep or not head.startswith(BOS + SRC_SEP):
        raise ParseError(f"a session starts with {BOS}{SRC_SEP}, the listing, then {BREAKPOINTS}")
    bp_text, newline, body = body.partition("\n")
    if not newline:
        raise ParseError(f"bad breakpoint list {bp_text[:60]!r}")
    breakpoints = parse_breakpoints(bp_text)
    result: list[tuple[Action | None, State]] = []
    previous: State | None = None
    chunks = body.split(STATE_END)
    if chunks[-1].strip():
        raise ParseError(f"session text ends inside a state: {chunks[-1][:60]!r}")
    for chunk in chunks[:-1]:
        action: Action | None = None
        match = re.match("(" + "|".join(re.escape(t) for t in ACTION_TOKENS.values()) + r")(?:" + re.escape(LINE_SEP) + r"[0-9]+)?", chunk)
        if match:
            action, chunk = parse_action(match.group()), chunk[match.end():]
        elif result:
            raise ParseError(f"state {len(result)} is not preceded by an action: {chunk[:60]!r}")
        previous = parse_state(chunk + STATE_END, previous, program, modules)
        result.append((action, previous))
    return breakpoints, result


def parse_breakpoints(text: str) -> list[int | tuple[str, int]]:
    """The breakpoint list after ``<|breakpoints|>`` (as `render_breakpoints` writes it, without the
    newline): program lines as ints, lines of other files as ``(path, line)``."""
    pieces = [p for p in _SPLIT_RE.split(text) if p]
    if len(pieces) % 2:
        raise ParseError(f"bad breakpoint list {text[:60]!r}")
    out: list[int | tuple[str, int]] = []
    file: str | None = None
    for sep, value in zip(pieces[::2], pieces[1::2]):
        if sep == LINE_SEP:
            line = _small_int(value, "breakpoint line")
            out.append(line if file is None else (file, line))
        elif sep == SRC_SEP:
            try:
                path = json.loads(value)
            except json.JSONDecodeError:
                path = None
            if not isinstance(path, str) or not path:
                raise ParseError(f"bad file in the breakpoint list: {value[:60]!r}")
            file = path
        else:
            raise ParseError(f"bad breakpoint list {text[:60]!r}")
    return out


def parse_action(text: str) -> Action:
    """An action rendered by `render_action` (``<|breakpoint|><|line_sep|>N`` or an action token)."""
    pieces = [p for p in _SPLIT_RE.split(text.strip()) if p]
    if not pieces or pieces[0] not in _TOKEN_TO_ACTION:
        raise ParseError(f"not an action: {text[:40]!r}")
    kind = _TOKEN_TO_ACTION[pieces[0]]
    if kind is ActionKind.BREAKPOINT:
        if len(pieces) != 3 or pieces[1] != LINE_SEP:
            raise ParseError(f"a breakpoint action is {BREAKPOINT}{LINE_SEP}N, got {text[:40]!r}")
        return Action(kind=kind, line=_small_int(pieces[2], "breakpoint line"))
    if len(pieces) != 1:
        raise ParseError(f"unexpected text after {pieces[0]}: {text[:40]!r}")
    return Action(kind=kind)


# --- grammar for constrained decoding ----------------------------------------------------------

JSON_CHAR_RE = r'(?:[^"\\|\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})'  # one character inside a JSON string
JSON_STRING_RE = f'"{JSON_CHAR_RE}*"'
_PAIR_RE = JSON_STRING_RE + ":" + JSON_STRING_RE
FULL_LOCALS_RE = r"\{(?:" + _PAIR_RE + r"(?:," + _PAIR_RE + r")*)?\}"
DELTA_LOCALS_RE = r"\{(?:" + _PAIR_RE + r",)*\.\.\}"
LOCALS_ANY_RE = f"(?:{FULL_LOCALS_RE}|{DELTA_LOCALS_RE})"  # a continued frame's locals: in full or as a delta
GENERIC_NAME_RE = r'[^"{}|\s]+'
EXCEPTION_TYPE_RE = r"[A-Za-z_][A-Za-z0-9_.]*"


@dataclass(frozen=True)
class ProgramInfo:
    """What the grammar knows of a program: its executable lines and function names (None: unknown),
    and which lines each frame name can stop on (the lines of every code object of that name)."""

    lines: frozenset[int] | None
    names: frozenset[str] | None
    lines_by_name: dict[str, frozenset[int]] | None = None

    def lines_of(self, name: str) -> frozenset[int] | None:
        """The lines a frame called `name` can stop on (all lines when the name is unknown)."""
        if self.lines_by_name is not None and name in self.lines_by_name:
            return self.lines_by_name[name]
        return self.lines


@lru_cache(maxsize=256)  # a session asks for every step's constraint: compile each program (and user module) once
def program_info(program: str) -> ProgramInfo:
    """Executable lines and code-object names of `program` (from `compile`; unknown if it does not compile).

    The result is shared between callers: treat it as read-only."""
    try:
        code = compile(program, "<program>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError):
        return ProgramInfo(None, None)
    by_name: dict[str, set[int]] = {}
    names: set[str] = set()
    todo = [code]
    while todo:
        current = todo.pop()
        names.update((current.co_name, current.co_qualname))
        own = {line for _, _, line in current.co_lines() if line is not None and line > 0}
        for name in {current.co_name, current.co_qualname}:
            by_name.setdefault(name, set()).update(own)
        todo.extend(c for c in current.co_consts if hasattr(c, "co_lines"))
    lines = frozenset().union(*by_name.values())
    return ProgramInfo(lines, frozenset(names), {name: frozenset(ls) for name, ls in by_name.items() if ls})


def _alternation(items: Sequence[str], fallback: str) -> str:
    return "(?:" + "|".join(items) + ")" if items else fallback


def _lines_re(lines: frozenset[int] | None) -> str:
    return _alternation([str(n) for n in sorted(lines)], r"[0-9]{1,9}") if lines else r"[0-9]{1,9}"


@dataclass(frozen=True)
class StackPatterns:
    """The pieces `state_regex` builds a state's stack from, for grammars that compose stacks of their own
    (`model.decode.project_flow`): regexes without look-arounds, special tokens as literal text."""

    new_frames: dict[str | None, str]  # file (None: the program) -> a new frame of that file (``<|call_sep|>...``)
    new_frame: str  # a new frame of any file
    kept: list[str]  # depth k -> the previous stack's frames 0..k-1 unchanged (k = 0..len; where a frame's file is unknown: shorter)
    continued: list[str]  # depth k -> frames 0..k-1 unchanged, frame k continued on any of its lines
    tail: str  # the return value, exception and stdout that may follow a stack
    endings: str  # an exit state


def stack_patterns(program: str, previous: State | None, modules: Mapping[str, str] | None = None) -> StackPatterns:
    """The stack pieces of the states after `previous` (see `state_regex`)."""
    info = program_info(program)
    module_infos = {path: program_info(text) for path, text in sorted((modules or {}).items())}
    all_names = set(info.names or ()) | {n for m in module_infos.values() for n in (m.names or ())}
    name_re = _alternation([re.escape(n) for n in sorted(all_names)], GENERIC_NAME_RE) if info.names else GENERIC_NAME_RE
    if info.lines_by_name:  # a frame stops only on lines of a code object of its name
        located = _alternation([f"{re.escape(name)}{re.escape(LINE_SEP)}{_lines_re(lines)}"
                                for name, lines in sorted(info.lines_by_name.items())], "")  # fmt: skip
    else:
        located = f"{GENERIC_NAME_RE}{re.escape(LINE_SEP)}{_lines_re(info.lines)}"
    elsewhere = {path: [f"{re.escape(name)}{re.escape(SRC_SEP + json_string(path) + LINE_SEP)}{_lines_re(lines)}"
                        for name, lines in sorted((m.lines_by_name or {"<module>": frozenset({0})}).items())]
                 for path, m in module_infos.items()}  # an empty file: line 0  # fmt: skip
    new_frames: dict[str | None, str] = {None: f"{re.escape(CALL_SEP)}{located}{FULL_LOCALS_RE}"}
    new_frames.update({path: f"{re.escape(CALL_SEP)}{_alternation(where, '')}{FULL_LOCALS_RE}" for path, where in elsewhere.items()})
    if elsewhere:
        located = _alternation([located, *(pattern for where in elsewhere.values() for pattern in where)], located)
    old = list(reversed(previous.frames)) if previous is not None else []
    kept, continued = [""], []
    for frame in old:
        where = info if frame.file is None else module_infos.get(frame.file)
        if where is None:
            break
        src = "" if frame.file is None else SRC_SEP + json_string(frame.file)
        head = f"{re.escape(FRAME_SEP)}{re.escape(frame.name)}{re.escape(src + LINE_SEP)}"
        continued.append(f"{kept[-1]}{head}{_lines_re(where.lines_of(frame.name))}{LOCALS_ANY_RE}")
        kept.append(f"{kept[-1]}{head}{frame.line}{LOCALS_ANY_RE}")
    tail = (
        f"(?:{re.escape(RETURN_SEP)}{name_re}(?:\\.{name_re})?{JSON_STRING_RE})?"  # debugpy: Class.method
        f"(?:{re.escape(EXCEPTION_SEP)}{EXCEPTION_TYPE_RE}{JSON_STRING_RE})?"
        f"(?:{re.escape(STDOUT)}{JSON_STRING_RE})?"
    )
    endings = _alternation([re.escape(t) for t in (*ENDING_TOKENS.values(), EXITED)], "") + "(?:-?[0-9]{1,9})?"
    return StackPatterns(new_frames, f"{re.escape(CALL_SEP)}{located}{FULL_LOCALS_RE}", kept, continued, tail, endings)


def state_regex(program: str, previous: State | None, *, include_end: bool = True,
                modules: Mapping[str, str] | None = None) -> str:
    """A regex (no lookarounds or backreferences) matching every well-formed state text after `previous`.

    Frame names are restricted to the program's code objects' names and each frame's line to the
    lines of the code objects of that name (a module frame never stops inside a function), return-value names to those or ``Name.name`` (debugpy writes ``Class.method``), all
    unrestricted when the program does not compile; locals to JSON objects of strings; and the
    stack to the previous one's continuation rule: ``<|frame_sep|>`` only for a frame at a depth
    where the previous state has a frame of that name with identical frames below it. Every text it matches parses with `parse_state`.
    Frames of other user files (`modules`: path -> source) are allowed with their path, their
    code objects' names and lines (``name<|src_sep|>"path"<|line_sep|>N``); without `modules`, a
    frame of another file in `previous` ends the stack that can be continued. Special tokens
    appear as their literal text.
    """
    parts = stack_patterns(program, previous, modules)
    # every stack is (a new frame | a continued prefix of the previous stack) then new frames: the same
    # language as the union of "new+" and each "prefix new*", with the (long) new-frame pattern written twice
    reasons = [REASON_STEP, REASON_BREAKPOINT, REASON_EXCEPTION, REASON_ENTRY]  # entry: the start, or an inverse step to it
    running = (_alternation([re.escape(r) for r in reasons], "") + _alternation([parts.new_frame, *parts.continued], "")
               + f"(?:{parts.new_frame})*")  # fmt: skip
    return f"(?:{running}|{parts.endings}){parts.tail}" + (re.escape(STATE_END) if include_end else "")


@dataclass
class StateGrammar:
    """A compiled `state_regex` with full-match and prefix checks (the prefix check uses `regex`'s partial matching)."""

    pattern: str

    def __post_init__(self) -> None:
        import regex  # a dependency of transformers; imported here so this module stays light

        self._compiled = regex.compile(self.pattern)

    def matches(self, text: str) -> bool:
        """Whether `text` is a complete well-formed state."""
        return self._compiled.fullmatch(text) is not None

    def allows_prefix(self, text: str) -> bool:
        """Whether `text` can still be extended into a complete well-formed state."""
        return self._compiled.fullmatch(text, partial=True) is not None


def state_grammar(program: str, previous: State | None, *, include_end: bool = True,
                  modules: Mapping[str, str] | None = None) -> StateGrammar:
    """`StateGrammar` of `state_regex(program, previous)`."""
    return StateGrammar(state_regex(program, previous, include_end=include_end, modules=modules))
