"""Which source lines the prompt shows: a listing whose size does not grow with the program.

A short program is listed whole, exactly as `model.prompt.language.render_header` always did. A
program whose listing does not fit the listing budget is shown through the code that matters at
one stop (`choose_listing`), every line with its real number, each run of hidden lines replaced
by one marker line ``<|line_sep|>..`` (``..`` reads as in a delta: "the rest, not written"). Other
user files (modules given by path) appear after the program as sections, each opened by
``<|src_sep|>"path"`` on its own line. The rule, in priority order (`line_priorities`):

0. every frame's current line, with the header lines of what encloses it (the ``def``/``class``
   lines of its scopes and the ``for``/``while``/``if``/``with``/``try`` lines around it);
1. what the next stop can need: the next two statements of the top frame's scope, the ``def``
   line and first body line of every function the top frame's current line can call (resolved
   statically by name through the program and its user modules; a class stands for its
   ``__init__``), the statement after each caller's current line, and the session's breakpoints;
2. the rest of those code objects by distance from the anchor line, counted in statements of
   the scope (one ahead counts 1, one behind 2; a nested function's lines come after its ``def``
   line, so a class body shows its outline of ``def`` lines first): the top frame's function (or
   the module lines around a module-level stop), the callers' functions around their lines
   (distances doubled), and the bodies of the functions every line of the top frame's scope can
   call (a callee's line: the calling line's distance plus its own distance from the ``def``);
3. docstrings, bare strings and comment lines of those regions;
4. every other line of the program, by distance from the top frame's line.

A statement written on several lines (up to `MAX_SPAN`; a compound one: its header) is taken
whole. Lines are taken in that order (ties: file, then line number), each one that still fits
the budget with its markers; a line too long for what is left is passed over. A bounded listing
fills 7/8 of its budget (`SLACK`). `needs` is what tiers 0 and 1 hold for a stop: a listing
*covers* a stop when it shows all of it. `model.prompt.language.window_listing` is the one rule a session and the
training windows apply at every stop: keep the current listing while it covers the stop and
fits beside it, else choose a new one for that stop (and start a new window there).
"""
from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from model.prompt.vocabulary import LINE_SEP, SRC_SEP, json_string
from protocol.debugger import Frame, State

STATE_RESERVE = 384  # tokens a prompt leaves for the predicted state (the session's default max_state_tokens)
HISTORY_ROOM = 64  # tokens a new window leaves for the steps after its first state
SLACK = 8  # a bounded listing fills 7/8 of its budget, and is kept while it fits the whole budget
NEXT_LINES = 2  # tier 1: statements after the top frame's line
BEHIND = 2  # tier 2: a line behind the anchor counts this many lines ahead
MAX_SPAN = 12  # a statement on up to this many lines is shown whole or not at all
INIT_NAMES = ("__init__", "__new__", "__post_init__", "__call__")  # what calling a class runs
FileKey = str | None  # None: the program; else the path of another user file (as frames carry it)


def listing_budget(context: int, fixed_tokens: int) -> int:
    """Tokens the listing may take in a window of a `context`-token model.

    `fixed_tokens`: the rest of the window's first prompt (the header without its listing, and
    the window's first state in full). What is left after `STATE_RESERVE` for the prediction and
    `HISTORY_ROOM` for the steps that follow (both at most 3/8 and 1/16 of a smaller context) goes
    to the listing: 1024 - 384 - 64 - fixed = 576 - fixed tokens for the shipped model.
    """
    return context - min(STATE_RESERVE, context * 3 // 8) - min(HISTORY_ROOM, context // 16) - fixed_tokens


# --- the source index -------------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """A function or class: its name, first line (decorators included), ``def`` line, last line, parent."""

    name: str
    start: int
    head: int
    end: int
    body: int  # the first statement of its body (after a docstring when there is more)
    is_class: bool
    parent: int | None


@dataclass
class SourceIndex:
    """What the listing rule knows of one file: lines, scopes, headers and calls by line."""

    lines: list[str]
    code: list[int]  # non-blank line numbers, ascending: the lines a full listing writes
    scopes: list[Scope] = field(default_factory=list)
    scope_of: dict[int, int] = field(default_factory=dict)  # line -> innermost scope (absent: module level)
    headers: dict[int, tuple[int, ...]] = field(default_factory=dict)  # line -> enclosing header lines
    calls: dict[int, tuple[str, ...]] = field(default_factory=dict)  # line -> names called on it
    quiet: frozenset[int] = frozenset()  # docstring and comment lines
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)  # line of a multi-line statement -> (first, last)

    def span(self, line: int) -> tuple[int, int]:
        """The lines of the statement `line` belongs to (a compound one: its header), at most `MAX_SPAN`."""
        return self.spans.get(line, (line, line))

    def scope_at(self, line: int) -> int | None:
        return self.scope_of.get(line)

    def frame_scope(self, name: str, line: int) -> int | None:
        """The scope a frame called `name` stopped at `line` runs in: the innermost one of that name
        around the line (a class body stops on its ``class`` line), else the line's own scope."""
        best = None
        for i, scope in enumerate(self.scopes):
            if scope.name == name and scope.start <= line <= scope.end:
                best = i
        return best if best is not None else self.scope_at(line)

    def region(self, scope: int | None) -> list[int]:
        """Code lines of a scope (nested scopes included); of the module level when None."""
        if scope is None:
            return [line for line in self.code if line not in self.scope_of]
        s = self.scopes[scope]
        return self.code[bisect.bisect_left(self.code, s.start) : bisect.bisect_right(self.code, s.end)]

    def next_code(self, line: int, count: int, scope: int | None = None) -> list[int]:
        """The next `count` code lines after `line` in its scope (`scope`, default the line's own)."""
        scope = self.scope_at(line) if scope is None else scope
        out: list[int] = []
        for other in self.code[bisect.bisect_right(self.code, self.span(line)[1]) :]:
            if len(out) >= count:
                break
            if other in self.quiet or self.span(other)[0] != other:  # one line per statement: its first
                continue
            if self.scope_at(other) == scope:
                out.append(other)
            elif scope is not None and other > self.scopes[scope].end:
                break
        return out

    def neighbours(self, line: int) -> tuple[int | None, int | None]:
        """The code lines just before and after `line` (None at the ends)."""
        i = bisect.bisect_left(self.code, line)
        before = self.code[i - 1] if i > 0 else None
        j = i + 1 if i < len(self.code) and self.code[i] == line else i
        after = self.code[j] if j < len(self.code) else None
        return before, after


def program_lines(program: str) -> list[str]:
    """The program split into lines the way Python numbers them (``\\n``, ``\\r\\n``, ``\\r``)."""
    return re.split(r"\r\n|\r|\n", program)


# --- listing lines ----------------------------------------------------------------------------


LISTING_ELIDED = LINE_SEP + "..\n"  # a run of listing lines left out (a bounded listing)


def listing_line(number: int, text: str) -> str:
    """One listing line: ``<|line_sep|>N text`` (right-stripped, ``<|`` written ``< |``) and a newline."""
    return f"{LINE_SEP}{number} {text.rstrip().replace('<|', '< |')}\n"


def listing_file_header(path: str) -> str:
    """Opens the listing section of another user file: ``<|src_sep|>"path"`` and a newline."""
    return SRC_SEP + json_string(path) + "\n"


@lru_cache(maxsize=64)
def source_index(source: str) -> SourceIndex:
    """The index of one file's source (cached; treat it as read-only). A file that does not parse
    has no scopes: all its lines are module level."""
    lines = program_lines(source)
    code = [n for n, text in enumerate(lines, start=1) if text.strip()]
    comments = {n for n in code if lines[n - 1].lstrip().startswith("#")}
    index = SourceIndex(lines=lines, code=code, quiet=frozenset(comments))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return index
    quiet = set(comments)
    headers: dict[int, set[int]] = {}
    calls: dict[int, set[str]] = {}

    def docstring(body: list[ast.stmt]) -> None:
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            quiet.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))

    for node in ast.walk(tree):  # any bare string statement (a docstring anywhere) compiles to nothing: never a stop
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            quiet.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))

    def walk(node: ast.AST, parent: int | None) -> None:
        for child in ast.iter_child_nodes(node):
            scope = parent
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                end = child.end_lineno or child.lineno
                body = child.body
                has_doc = len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
                first = body[1] if has_doc else body[0]
                docstring(body)
                scope = len(index.scopes)
                index.scopes.append(Scope(child.name, start, child.lineno, end, first.lineno, isinstance(child, ast.ClassDef), parent))
                for line in range(body[0].lineno, end + 1):  # the def/class lines run in the parent scope
                    index.scope_of[line] = scope
                    if line > child.lineno:
                        headers.setdefault(line, set()).add(child.lineno)
            elif isinstance(child, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.Match)) or (
                type(child).__name__ == "TryStar"
            ):
                end = getattr(child, "end_lineno", None) or child.lineno
                handlers = [h.lineno for h in getattr(child, "handlers", [])]
                for line in range(child.lineno + 1, end + 1):
                    headers.setdefault(line, set()).add(child.lineno)
                    headers[line].update(h for h in handlers if h < line)
            elif isinstance(child, ast.Call):
                func = child.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if name:
                    for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                        calls.setdefault(line, set()).add(name)
            walk(child, scope)

    docstring(tree.body)
    try:
        walk(tree, None)
    except RecursionError:
        return SourceIndex(lines=lines, code=code, quiet=frozenset(comments))
    index.quiet = frozenset(quiet)
    index.headers = {line: tuple(sorted(h)) for line, h in headers.items()}
    index.spans = _statement_spans(tree)
    index.calls = {line: tuple(sorted(c)) for line, c in calls.items()}
    return index


def _statement_spans(tree: ast.AST) -> dict[int, tuple[int, int]]:
    """Each line of a statement written on several lines (a compound statement: its header, up to
    the line before its body) mapped to the statement's (first, last) line; spans over `MAX_SPAN`
    lines (long literals) are left out."""
    spans: dict[int, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        first = node.lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = body[0].lineno - 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
                first = min(d.lineno for d in node.decorator_list)
        else:
            last = node.end_lineno or first
        if first < last <= first + MAX_SPAN - 1:
            for line in range(first, last + 1):
                spans.setdefault(line, (first, last))
    return spans


@dataclass(frozen=True)
class Sources:
    """The program and the other user files the listing may show (path -> source), in a fixed order."""

    program: str
    modules: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, program: str, modules: Mapping[str, str] | None = None) -> "Sources":
        return cls(program, tuple(sorted((modules or {}).items())))

    def files(self) -> list[FileKey]:
        return [None, *(path for path, _ in self.modules)]

    def text(self, file: FileKey) -> str | None:
        if file is None:
            return self.program
        for path, text in self.modules:
            if path == file:
                return text
        return None

    def index(self, file: FileKey) -> SourceIndex | None:
        text = self.text(file)
        return None if text is None else source_index(text)

    def resolve(self, name: str) -> list[tuple[FileKey, Scope]]:
        """Functions and methods called `name`, and a class's ``__init__`` (with the class line), in every file."""
        found: list[tuple[FileKey, Scope]] = []
        for file in self.files():
            index = self.index(file)
            assert index is not None
            for i, scope in enumerate(index.scopes):
                if scope.name != name:
                    continue
                found.append((file, scope))
                if scope.is_class:
                    found += [(file, s) for s in index.scopes if s.parent == i and s.name in INIT_NAMES]
        return found


# --- priorities -------------------------------------------------------------------------------

Key = tuple[int, int]  # (tier, distance): smaller comes first


class _Ranks:
    def __init__(self) -> None:
        self.keys: dict[tuple[FileKey, int], Key] = {}

    def offer(self, file: FileKey, line: int, tier: int, distance: int, index: SourceIndex) -> None:
        if not 1 <= line <= len(index.lines):
            return
        if tier in (1, 2) and line in index.quiet:
            tier = 3
        key = (tier, distance)
        first, last = index.span(line)
        for other in range(first, last + 1):  # a statement on several lines comes whole
            if not index.lines[other - 1].strip():
                continue
            old = self.keys.get((file, other))
            if old is None or key < old:
                self.keys[(file, other)] = key


def _distance(line: int, anchor: int, weight: int = 1) -> int:
    return weight * (line - anchor if line >= anchor else BEHIND * (anchor - line))


def _scope_distances(index: SourceIndex, scope: int | None, anchor: int) -> dict[int, int]:
    """How far each code line of a scope is from `anchor`, in statements: the scope's own statements
    by their count from the anchor (ahead once, behind twice; a class's ``def`` lines are one apart;
    a statement's other lines as its first), a nested function's line after its ``def`` line (its
    distance, plus 2, plus the lines between)."""
    region = index.region(scope)
    own = [line for line in region if index.scope_at(line) == scope and line not in index.quiet and index.span(line)[0] == line]
    at = bisect.bisect_left(own, index.span(anchor)[0])
    distances: dict[int, int] = {}
    for i, line in enumerate(own):
        distances[line] = i - at if i >= at else BEHIND * (at - i)
    for line in region:
        if line in distances:
            continue
        i = bisect.bisect_right(own, line) - 1
        head = own[i] if i >= 0 else None
        distances[line] = (distances[head] + 2 + line - head) if head is not None else _distance(line, anchor)
    return distances


def _user_frames(state: State, sources: Sources) -> list[tuple[Frame, SourceIndex]]:
    """The state's frames (innermost first) whose file the listing can show."""
    out = []
    for frame in state.frames:
        index = sources.index(frame.file)
        if index is not None and 1 <= frame.line <= len(index.lines):
            out.append((frame, index))
    return out


def _callees(sources: Sources, index: SourceIndex, lines: Iterable[int]) -> list[tuple[FileKey, Scope]]:
    names = sorted({name for line in lines for name in index.calls.get(line, ())})
    return [found for name in names for found in sources.resolve(name)]


def _offer_stop(ranks: _Ranks, sources: Sources, state: State) -> None:
    """Tiers 0 and 1 of a stop: its frames' lines and headers, and what the next stop can need."""
    frames = _user_frames(state, sources)
    for depth, (frame, index) in enumerate(frames):
        ranks.offer(frame.file, frame.line, 0, depth, index)
        for header in index.headers.get(frame.line, ()):
            ranks.offer(frame.file, header, 0, depth, index)
        scope_id = index.frame_scope(frame.name, frame.line)
        if depth == 0:
            for k, line in enumerate(index.next_code(frame.line, NEXT_LINES, scope_id)):
                ranks.offer(frame.file, line, 1, k, index)
            for file, scope in _callees(sources, index, [frame.line]):
                callee = sources.index(file)
                assert callee is not None
                ranks.offer(file, scope.head, 1, 0, callee)
                ranks.offer(file, scope.body, 1, 0, callee)
        else:
            for line in index.next_code(frame.line, 1, scope_id):
                ranks.offer(frame.file, line, 1, depth, index)


def needs(state: State, program: str, modules: Mapping[str, str] | None = None) -> set[tuple[FileKey, int]]:
    """The lines a listing must show to serve this stop (tiers 0 and 1, breakpoints aside)."""
    ranks = _Ranks()
    _offer_stop(ranks, Sources.of(program, modules), state)
    return set(ranks.keys)


def line_priorities(state: State, program: str, breakpoints: Sequence[int | tuple[str, int]] = (),
                    modules: Mapping[str, str] | None = None) -> list[tuple[FileKey, int]]:
    """Every line the listing may show at this stop, in the order the listing takes them (see the module doc)."""
    sources = Sources.of(program, modules)
    ranks = _Ranks()
    _offer_stop(ranks, sources, state)
    program_index = source_index(program)
    marks = sorted({(None, b) if isinstance(b, int) else (str(b[0]), int(b[1])) for b in breakpoints}, key=lambda fl: (fl[0] or "", fl[1]))
    for i, (file, line) in enumerate(marks):  # a session breakpoint: its line and what encloses it
        index = sources.index(file)
        if index is None or not 1 <= line <= len(index.lines):
            continue
        ranks.offer(file, line, 1, 10 + i, index)
        for header in index.headers.get(line, ()):
            ranks.offer(file, header, 1, 10 + i, index)
    frames = _user_frames(state, sources)
    for depth, (frame, index) in enumerate(frames):
        weight = 1 if depth == 0 else 2
        scope_id = index.frame_scope(frame.name, frame.line)
        soon = _scope_distances(index, scope_id, frame.line)
        for line, distance in soon.items():
            ranks.offer(frame.file, line, 2, weight * distance, index)
        if depth == 0:  # the callees of every line of the scope, by how soon that line runs
            for calling, distance in soon.items():
                if index.scope_at(calling) != scope_id or calling not in index.calls:
                    continue
                for file, scope in _callees(sources, index, [calling]):
                    callee = sources.index(file)
                    assert callee is not None
                    for line in callee.region(callee.scopes.index(scope)):
                        ranks.offer(file, line, 2, distance + line - scope.head, callee)
    top = frames[0] if frames else None
    anchor = top[0].line if top is not None and top[0].file is None else 1
    for line in program_index.code:
        ranks.offer(None, line, 4, _distance(line, anchor), program_index)
    order = {file: i for i, file in enumerate(sources.files())}
    return sorted(ranks.keys, key=lambda fl: (ranks.keys[fl], order.get(fl[0], len(order)), fl[1]))


# --- the listing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    """The lines a prompt shows: per file (None: the program), the line numbers, ascending.

    `full`: the whole program, rendered exactly as a plain header (no markers, no other file)."""

    sections: tuple[tuple[FileKey, tuple[int, ...]], ...]
    full: bool = False

    def shows(self, file: FileKey, line: int) -> bool:
        for key, lines in self.sections:
            if key == file:
                i = bisect.bisect_left(lines, line)
                return i < len(lines) and lines[i] == line
        return False

    def covers(self, state: State, program: str, modules: Mapping[str, str] | None = None) -> bool:
        """Whether this listing shows everything the stop `state` needs (`needs`)."""
        if self.full and not modules:
            return True
        return all(self.shows(file, line) for file, line in needs(state, program, modules))

    def line_count(self) -> int:
        return sum(len(lines) for _, lines in self.sections)


def full_listing(program: str) -> Listing:
    return Listing(((None, tuple(source_index(program).code)),), full=True)


class _Cost:
    """Token cost of a growing selection, kept incrementally (lines, elision markers, file headers)."""

    def __init__(self, sources: Sources, line_cost: Callable[[FileKey, int], int], marker: int, file_header: Callable[[FileKey], int]) -> None:
        self.sources = sources
        self.line_cost = line_cost
        self.marker = marker
        self.file_header = file_header
        self.chosen: dict[FileKey, set[int]] = {}
        self.total = 0

    def _runs_change(self, file: FileKey, line: int) -> int:
        """How the number of hidden runs changes when `line` is shown (an empty section counts one run)."""
        index = self.sources.index(file)
        assert index is not None
        chosen = self.chosen.get(file)
        hidden = [n is not None and (chosen is None or n not in chosen) for n in index.neighbours(line)]
        return 1 if all(hidden) else (-1 if not any(hidden) else 0)

    def delta(self, file: FileKey, line: int) -> int:
        """Tokens the listing grows by when `line` is shown."""
        change = self._runs_change(file, line)
        if file not in self.chosen:  # the section's first line: its header, and the runs around the line
            return self.file_header(file) + self.line_cost(file, line) + (1 + change) * self.marker
        return self.line_cost(file, line) + change * self.marker

    def add(self, file: FileKey, line: int, cost: int) -> None:
        self.chosen.setdefault(file, set()).add(line)
        self.total += cost


def choose_listing(
    state: State,
    program: str,
    budget: int,
    count_tokens: Callable[[str], int],
    *,
    breakpoints: Sequence[int | tuple[str, int]] = (),
    modules: Mapping[str, str] | None = None,
) -> Listing:
    """The listing for a window that starts at `state`, at most `budget` tokens (`listing_text` of it).

    The whole program when it fits (and nothing of another file is needed); otherwise the lines
    of `line_priorities` in order while they fit. Deterministic in its arguments.
    """
    sources = Sources.of(program, modules)
    program_index = source_index(program)
    costs: dict[tuple[FileKey, int], int] = {}

    def line_cost(file: FileKey, line: int) -> int:
        key = (file, line)
        if key not in costs:
            index = sources.index(file)
            assert index is not None
            costs[key] = count_tokens(listing_line(line, index.lines[line - 1]))
        return costs[key]

    full_cost = count_tokens(listing_text(full_listing(program), program))
    wanted_elsewhere = bool(modules) and any(file is not None for file, _ in needs(state, program, modules))
    if full_cost <= budget and not wanted_elsewhere:
        return full_listing(program)
    budget -= budget // SLACK  # room for the window's first state to grow while the listing is kept
    cost = _Cost(sources, line_cost, count_tokens(LISTING_ELIDED), lambda f: 0 if f is None else count_tokens(listing_file_header(f)))
    order = line_priorities(state, program, breakpoints, modules)
    program_full = full_cost <= budget
    if program_full:
        for line in program_index.code:
            cost.add(None, line, line_cost(None, line))
        cost.total = full_cost
        order = [fl for fl in order if fl[0] is not None]
    smallest = min(count_tokens(listing_line(1, "")), cost.marker)
    for file, line in order:
        if budget - cost.total < smallest:
            break
        step = cost.delta(file, line)
        if cost.total + step <= budget:  # a line too long for what is left is passed over, not the end
            cost.add(file, line, step)
    files = sources.files()
    sections = tuple((file, tuple(sorted(cost.chosen[file]))) for file in files if cost.chosen.get(file))
    return Listing(sections)


def listing_text(listing: Listing, program: str, modules: Mapping[str, str] | None = None) -> str:
    """The listing as it goes between the two ``<|src_sep|>`` of the header."""
    sources = Sources.of(program, modules)
    parts: list[str] = []
    for file, lines in listing.sections:
        index = sources.index(file)
        if index is None:
            continue
        if file is not None:
            parts.append(listing_file_header(file))
        shown = set(lines)
        hidden = False
        for line in index.code:
            if line in shown:
                parts.append(listing_line(line, index.lines[line - 1]))
                hidden = False
            elif not hidden:
                parts.append(LISTING_ELIDED)
                hidden = True
    return "".join(parts)


NO_LISTING = Listing(())  # a header without any line: what `window_listing` counts as the fixed part
