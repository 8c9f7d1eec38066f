"""The recorded event trace of one program run (what ``child_runner.py`` writes), as Python objects.

The child writes JSON lines; each is a list whose first item says what it is:

- ``["P", path]``: the program's real path.
- ``["F", file_id, path_or_null]``: a user file (null: the program itself).
- ``["N", fid, name, parent_fid, direct, flags, file_id, firstlineno]``: a new frame. ``parent_fid`` is
  the nearest user frame below it (null at the bottom), ``direct`` is 1 when that frame is its
  ``f_back``; flags: 1 generator/coroutine, 2 library frame called from user code (call/return only),
  4 coroutine (``async def``).
- ``["L", lid, {name: repr}]``: a locals snapshot (interned; events refer to it by ``lid``).
- ``[kind, fid, line, stack, stdout, extra?]``: an event, kind ``c`` call, ``l`` line, ``r`` return,
  ``x`` exception. ``stack`` is ``[[fid, line, lid], ...]`` innermost first (for ``r`` it starts at the
  caller; null for ``c``/``x``). ``stdout`` is what the program printed since the previous event.
  ``extra`` for ``r``: ``[display name, value repr, at a return line, direct, updates]`` (``direct``: 1 when
  the caller, the first stack entry, is the returning frame's ``f_back``: a generator's caller is the
  frame that resumed it this time); for ``x``: ``[type, message]``; for ``l``, optional: ``updates``.
  ``updates`` is ``[[event index, repr], ...]``: the repr now of earlier return values (mutable ones,
  returned into this frame since its last line event) that changed since their return, e.g. a class
  body's ``__class__`` cell, filled after the body returned. debugpy shows a value at the stop.
- ``["E", how, exit_code, exception, stack, stdout]``: the end. ``how``: ``exit`` (normal or
  ``sys.exit(0)`` or ``sys.exit()``), ``uncaught`` (exception ``[type, message]``, ``stack`` the
  traceback's user frames innermost first; also ``sys.exit`` with any other code, which debugpy
  stops on), ``limit`` (an event/output cap hit: the run never ended), ``syntax``.

A missing ``E`` line means the child was killed (time, memory): the trace ends as ``exit_never``.
"""
from __future__ import annotations

import bisect
import dis
import json
import os
import types
from dataclasses import dataclass, field, replace

from protocol.debugger import Ending
from protocol.source_text import read_source

CALL, LINE, RETURN, EXCEPTION = "c", "l", "r", "x"


@dataclass(frozen=True, slots=True)
class FrameInfo:
    """A frame activation (a generator frame keeps one ``fid`` across its resumptions)."""

    fid: int
    name: str
    parent: int | None  # nearest user frame below (towards the module)
    direct: bool  # the parent is this frame's immediate f_back (no library frame between)
    generator: bool
    lib: bool  # a library frame called directly from user code (only call/return events)
    file: str | None  # None: the program; else the path of another user file
    firstlineno: int
    coroutine: bool = False  # an ``async def`` frame (also `generator`)


@dataclass(slots=True)
class Event:
    """One trace event. ``stack`` holds ``(fid, line, lid)`` innermost first (from the caller for returns)."""

    kind: str
    fid: int
    line: int
    stack: tuple[tuple[int, int, int], ...] | None
    stdout: str
    ret_name: str | None = None
    ret_value: str | None = None
    at_return_line: bool = True
    ret_direct: bool = True  # the caller (stack[0]) is the returning frame's f_back
    updates: dict[int, str] | None = None  # event index of an earlier return -> its repr at this event
    exc_type: str | None = None
    exc_message: str | None = None


@dataclass(slots=True)
class TraceEnd:
    """How the run ended."""

    ending: Ending
    exit_code: int | None
    exception: tuple[str, str] | None = None
    stack: tuple[tuple[int, int, int], ...] = ()
    stdout: str = ""
    how: str = "exit"  # exit | uncaught | limit | syntax | killed
    detail: str = ""  # e.g. the sandbox's reason for a kill


@dataclass(slots=True)
class ProgramTrace:
    """Everything one run of a program showed: source, frames, locals snapshots, events, the end."""

    source: str
    path: str | None
    frames: dict[int, FrameInfo]
    locals_table: list[dict[str, str]]
    events: list[Event]
    end: TraceEnd
    stderr: str = ""
    lines: list[str] = field(default_factory=list)
    real_path: str | None = None  # the program file's real path, as the child ran it (``P`` record)
    # sources of other user files by the path frames carry (set by `relativize`: relative paths)
    module_sources: dict[str, str] = field(default_factory=dict)

    _code_lines: list[int] | None = None

    def __post_init__(self) -> None:
        if not self.lines:
            self.lines = self.source.splitlines()

    @property
    def code_lines(self) -> list[int]:
        """Sorted lines that start code in the program (pydevd's ``_get_code_lines``, nested code included)."""
        if self._code_lines is None:
            try:
                code = compile(self.source, self.path or "<program>", "exec", 0, dont_inherit=True)
            except (SyntaxError, ValueError):
                self._code_lines = []
            else:
                self._code_lines = sorted(set(_code_lines(code)))
        return self._code_lines

    def adjust_breakpoint(self, line: int) -> int:
        """Where debugpy puts a breakpoint asked for on ``line``: that line if it starts code, else the
        nearest preceding line that does (unchanged when there is none)."""
        lines = self.code_lines
        if line in lines:
            return line
        idx = bisect.bisect_left(lines, line)
        return lines[idx - 1] if idx > 0 else line

    @property
    def folder(self) -> str | None:
        """The real folder the program ran in (its user modules live under it); None if unknown."""
        return os.path.dirname(self.real_path) if self.real_path else None

    def file_path(self, file: str) -> str:
        """The real path of a user file given absolutely or relative to the program's folder."""
        if os.path.isabs(file) or self.folder is None:
            return os.path.realpath(file)
        return os.path.realpath(os.path.join(self.folder, file))

    def adjust_file_breakpoint(self, file: str, line: int) -> tuple[str, int]:
        """`adjust_breakpoint` for a breakpoint in another user file: ``(real path, line)``."""
        path = self.file_path(file)
        lines = file_code_lines(path)
        if line in lines or not lines:
            return path, line
        idx = bisect.bisect_left(lines, line)
        return path, (lines[idx - 1] if idx > 0 else line)

    def source_line(self, line: int, file: str | None = None) -> str:
        """The text of a 1-based line (stripped), of the program or of another user file."""
        if file is None:
            return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        if file in self.module_sources:
            lines = self.module_sources[file].splitlines()
            return lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return _file_line(file, line)

    def relativize(self, folder: str, sources: dict[str, str]) -> None:
        """Make frames of other user files carry their path relative to `folder` (with ``/``) and keep
        their `sources` (``{relative path: source}``), so the trace outlives the folder it ran in."""
        prefix = folder.rstrip(os.sep) + os.sep
        for fid, info in list(self.frames.items()):
            if info.file is not None and info.file.startswith(prefix):
                rel = info.file[len(prefix):].replace(os.sep, "/")
                self.frames[fid] = replace(info, file=rel)
        self.module_sources = dict(sources)

    def adjust_module_breakpoint(self, file: str, line: int) -> int:
        """`adjust_breakpoint` in a module of `module_sources`."""
        try:
            code = compile(self.module_sources[file], file, "exec", 0, dont_inherit=True)
        except (SyntaxError, ValueError):
            return line
        lines = sorted(set(_code_lines(code)))
        if line in lines or not lines:
            return line
        idx = bisect.bisect_left(lines, line)
        return lines[idx - 1] if idx > 0 else line

    @property
    def executed_lines(self) -> list[int]:
        """Program lines that had at least one line event, sorted."""
        lines = {e.line for e in self.events if e.kind == LINE and self.frames[e.fid].file is None}
        return sorted(lines)


_FILE_CACHE: dict[str, list[str]] = {}
_CODE_LINES_CACHE: dict[str, list[int]] = {}


def file_code_lines(path: str) -> list[int]:
    """Sorted lines that start code in a user file (as `ProgramTrace.code_lines`); [] if unreadable."""
    lines = _CODE_LINES_CACHE.get(path)
    if lines is None:
        try:
            code = compile(read_source(path, errors="replace"), path, "exec", 0, dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            lines = []
        else:
            lines = sorted(set(_code_lines(code)))
        _CODE_LINES_CACHE[path] = lines
    return lines


def _code_lines(code: types.CodeType):
    for _, lineno in dis.findlinestarts(code):
        if lineno is not None:
            yield lineno
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_filename == code.co_filename:
            yield from _code_lines(const)


def _file_line(path: str, line: int) -> str:
    lines = _FILE_CACHE.get(path)
    if lines is None:
        try:
            lines = read_source(path, errors="replace").splitlines()
        except OSError:
            lines = []
        _FILE_CACHE[path] = lines
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def parse_trace(text: str, source: str, path: str | None, stderr: str = "", killed: str = "") -> ProgramTrace:
    """Build a ProgramTrace from the child's JSON lines (a cut-off last line is ignored)."""
    frames: dict[int, FrameInfo] = {}
    files: dict[int, str | None] = {}
    table: list[dict[str, str]] = []
    events: list[Event] = []
    end: TraceEnd | None = None
    real_path: str | None = None
    for raw in text.splitlines():
        if not raw:
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            break  # the child was killed mid-line
        tag = rec[0]
        if tag == LINE or tag == RETURN or tag == CALL or tag == EXCEPTION:
            stack = None if rec[3] is None else tuple((s[0], s[1], s[2]) for s in rec[3])
            ev = Event(tag, rec[1], rec[2], stack, rec[4])
            if tag == RETURN:
                extra = rec[5]
                ev.ret_name, ev.ret_value, ev.at_return_line = extra[0], extra[1], bool(extra[2])
                if len(extra) > 4:
                    ev.ret_direct = bool(extra[3])
                    if extra[4]:
                        ev.updates = {k: text for k, text in extra[4]}
            elif tag == LINE:
                if len(rec) > 5 and rec[5]:
                    ev.updates = {k: text for k, text in rec[5]}
            elif tag == EXCEPTION:
                ev.exc_type, ev.exc_message = rec[5][0], rec[5][1]
            events.append(ev)
        elif tag == "L":
            table.append(rec[2])
        elif tag == "N":
            _, fid, name, parent, direct, flags, file_id, first = rec
            file = None if file_id < 0 else files.get(file_id)
            frames[fid] = FrameInfo(fid, name, parent, bool(direct), bool(flags & 1), bool(flags & 2), file, first, bool(flags & 4))
        elif tag == "F":
            files[rec[1]] = rec[2]
        elif tag == "P":
            real_path = rec[1]
        elif tag == "E":
            end = _parse_end(rec)
    if end is None:
        end = TraceEnd(Ending.NEVER, None, how="killed", detail=killed or "the program was stopped before it ended")
    return ProgramTrace(source, path, frames, table, events, end, stderr, real_path=real_path)


def _parse_end(rec: list) -> TraceEnd:
    _, how, code, exc, stack, out = rec
    stack_t = tuple((s[0], s[1], s[2]) for s in stack)
    exception = (exc[0], exc[1]) if exc else None
    if how == "exit":
        return TraceEnd(Ending.NORMAL if code == 0 else Ending.ERROR, code, None, (), out, how)
    if how == "uncaught":  # the exit status is 1, or sys.exit's for a SystemExit debugpy stops on
        return TraceEnd(Ending.ERROR, code if isinstance(code, int) else 1, exception, stack_t, out, how)
    if how == "syntax":
        return TraceEnd(Ending.ERROR, 1, exception, (), out, how, detail=exception[1] if exception else "")
    return TraceEnd(Ending.NEVER, None, exception, (), out, how, detail=exception[1] if exception else "")
