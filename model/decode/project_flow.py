"""Static control flow in a project: a program with other user files (`modules`, path -> source).

`model.static.flow` follows one file. In a project the previous stop's top frames are frames of one file (the program
or a module), over frames of other files; `ProjectFlowConstraint` narrows the next stop in three parts:

1. the top frames go on as that file's flow says (`FlowConstraint` over the file's source, those frames alone, the
   frames under them unchanged): the other files' code runs as library code does, calling back only what library code
   can (functions passed as values, overrides of a library base class...);
2. a stop with a frame of another file above the frames kept: only as an exception, a breakpoint (where any is set) or
   a Step Into's (the call of another file's function or an import of another file);
3. below the top frames: once they are left (a return, an exception caught by a caller), any well-formed stop of the
   frames under them, and the endings.

`ProjectStep.plan` writes parts 2 and 3; `model.decode.constraints.ProjectFlowConstraint` joins them with part 1.

Exception stops, whatever their frames, come from one pattern of any stack over the previous one (part 1 leaves them
out): they are rare, and that pattern is shared with part 3, which keeps the grammar small. Each part is a superset of
what debugpy does where the file's flow is; `tests/test_project_flow.py` checks every recorded stop of real two-file
projects.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from model.prompt import language as lang
from model.static.flow import EXIT_NAMES
from model.static.line_nodes import statements_at
from protocol.debugger import Action, ActionKind, Frame, State, StopReason

if TYPE_CHECKING:
    from model.static.call_args import KnownEntry
    from model.static.flow import ProgramFlow


def file_lines(pairs: Sequence[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    """``(path, line)`` breakpoints (a trajectory's ``file_breakpoints``) as path -> lines."""
    found: dict[str, list[int]] = {}
    for path, line in pairs:
        found.setdefault(path, []).append(line)
    return {path: tuple(sorted(lines)) for path, lines in found.items()}


def top_block(previous: State) -> int:
    """The depth (outermost first) where the previous stack's top run of frames of one file begins."""
    frames = list(reversed(previous.frames))
    start = len(frames)
    while start > 0 and frames[start - 1].file == frames[-1].file:
        start -= 1
    return start


@dataclass(frozen=True)
class ProjectStep:
    """A forward step of a project, planned: the file its top frames are in (None: the program) and that file's
    `source`, `top` (those frames alone, as the file's own stack), the regex `below` of the frames under them,
    `own_breakpoints` (that file's), whether code of the other files can exit the program (`exits`), and `others`:
    the state regexes of parts 2 and 3 and the endings (see the module docstring), to join with part 1's."""

    file: str | None
    source: str
    top: State
    below: str
    start: int
    own_breakpoints: tuple[int, ...]
    exits: bool
    others: tuple[str, ...]
    entered: str | None = None  # a project file whose module body the step certainly enters (`_first_import`): part 1 is left out

    @classmethod
    def plan(cls, program: str, previous: State, action: Action, modules: Mapping[str, str], breakpoints: Sequence[int] = (),
             file_breakpoints: Mapping[str, Sequence[int]] | None = None) -> "ProjectStep":  # fmt: skip
        file_breakpoints = {f: lines for f, lines in (file_breakpoints or {}).items() if lines}
        frames = list(reversed(previous.frames))
        start = top_block(previous)
        file = frames[-1].file
        parts = lang.stack_patterns(program, previous, modules)
        others = [text for path, text in modules.items() if path != file] + ([program] if file is not None else [])
        exits = any(name in text for text in others for name in EXIT_NAMES)
        top = previous.model_copy(update={"frames": [f.model_copy(update={"file": None}) for f in reversed(frames[start:])]})
        sources = {None: program, **modules}
        marks = _breakpoint_lines(sources, breakpoints, file_breakpoints, action)
        own = tuple(breakpoints) if file is None else tuple(file_breakpoints.get(file, ()))
        below = parts.kept[start] if start else ""
        imported = _first_import(sources, frames) if action.kind is ActionKind.STEP_INTO else None
        entering = _module_entry(parts, sources, imported, marks) if imported is not None else ""
        if entering:  # the step certainly enters that file's module body (or the import raises)
            return cls(file, sources[file], top, below, start, own, exits, (_any_stop(parts, 0), entering), entered=imported)
        bodies = [_any_stop(parts, start), _entering(parts, file, action, sources, top), _at_breakpoints(parts, start, sources, marks),
                  _called_again(parts, start, frames, sources)]  # fmt: skip
        if start or exits:
            bodies.append(parts.endings + parts.tail)
        return cls(file, sources[file], top, below, start, own, exits, tuple(b for b in bodies if b))


def _reasons(reasons: Sequence[StopReason]) -> str:
    return "(?:" + "|".join(re.escape(lang.REASON_TOKENS[r]) for r in reasons) + ")"


def _any_stop(parts: lang.StackPatterns, start: int) -> str:
    """An exception stop with any stack over the previous one's frames (part 2's and part 3's; part 1 leaves exceptions
    here), and part 3: a step or breakpoint stop of a frame under the top ones continued, any frames above it."""
    exception = _reasons([StopReason.EXCEPTION]) + "(?:" + "|".join(parts.continued + parts.kept[-1:]) + ")"
    options = [exception, _reasons([StopReason.EXCEPTION, *([StopReason.STEP, StopReason.BREAKPOINT] if start else [])]) + parts.new_frame]
    if start:
        options.append(_reasons([StopReason.STEP, StopReason.BREAKPOINT]) + "(?:" + "|".join(parts.continued[:start]) + ")")
    return "(?:" + "|".join(options) + f")(?:{parts.new_frame})*{parts.tail}"


def _called_again(parts: lang.StackPatterns, start: int, frames: Sequence[Frame], sources: Mapping[str | None, str]) -> str:
    """Part 3's stops where, once the top frames are left, the frame under them calls a function of the same name as
    the first top frame (another ``__init__``, the same function again): the language writes that new frame as the old
    one continued (same name, same depth), on a first line of such a function, then any frames above it. A module
    body (an import runs it once) is not."""
    from model.static.flow import EXIT, FlowUnavailable, program_flow

    if not start:
        return ""
    old = frames[start]
    try:
        scopes = [s for s in program_flow(sources[old.file]).by_name.get(old.name, []) if s.kind == "function"]
    except FlowUnavailable:
        return ""
    lines = sorted({line for scope in scopes for line in scope.entry} - {EXIT})
    if not lines:
        return ""
    src = "" if old.file is None else lang.SRC_SEP + lang.json_string(old.file)
    frame = f"{re.escape(lang.FRAME_SEP + old.name + src + lang.LINE_SEP)}(?:{'|'.join(map(str, lines))}){lang.LOCALS_ANY_RE}"
    return f"{_reasons([StopReason.STEP, StopReason.BREAKPOINT])}{parts.continued[start - 1]}{frame}(?:{parts.new_frame})*{parts.tail}"


def _entering(parts: lang.StackPatterns, file: str | None, action: Action, sources: Mapping[str | None, str], top: State) -> str:
    """Part 2's steps: a Step Into's one new frame of another file on the previous stack (whose `top` frames are of
    `file`), of a code object the top frame's line can start (`_entered`), on its first line; a call of another file's
    plain function or class whose arguments are all known (`model.static.call_args.imported_entry_values`) with those
    locals."""
    from model.static.call_args import imported_entry_values

    if action.kind is not ActionKind.STEP_INTO or len(parts.kept) != len(parts.continued) + 1:
        return ""
    others = [path for path in parts.new_frames if path != file]
    entered = _entered(sources, file, top.frames[0])
    if entered is None:  # a file whose code objects cannot be placed: any new frame of another file
        frames = [parts.new_frames[path] for path in others]
    else:
        modules = {path: text for path, text in sources.items() if path is not None and path != file}
        known = {key: entry for key, entry in imported_entry_values(sources[file], top, modules).items() if entry.complete}
        frames = [_frames_at(path, sources[path], _with_known(entered.get(path), {name: e for (p, name), e in known.items() if p == path}))
                  for path in others]  # fmt: skip
    frames = [f for f in frames if f]
    return f"{_reasons([StopReason.STEP])}{parts.kept[-1]}(?:{'|'.join(frames)}){parts.tail}" if frames else ""


def _module_entry(parts: lang.StackPatterns, sources: Mapping[str | None, str], path: str, marks: Mapping[str | None, frozenset[int]]) -> str:
    """The stop entering `path`'s module body: the previous stack, then that module's frame on its first line, no
    locals shown yet (a fresh module binds only dunders); a breakpoint stop where that line has one."""
    from model.static.flow import EXIT, FlowUnavailable, program_flow

    try:
        lines = frozenset(line for s in program_flow(sources[path]).by_name.get("<module>", []) for line in s.entry) - {EXIT}
    except FlowUnavailable:
        return ""
    frame = _frames_at(path, sources[path], {("<module>", "{}"): lines})
    if not frame:
        return ""
    reasons = [StopReason.STEP, *([StopReason.BREAKPOINT] if lines & marks.get(path, frozenset()) else [])]
    return f"{_reasons(reasons)}{parts.kept[-1]}{frame}{parts.tail}"


def _first_import(sources: Mapping[str | None, str], frames: Sequence[Frame]) -> str | None:
    """The project file a Step Into from the top of `frames` (outermost first) certainly starts to import: every frame
    is a module body (main's, then the imports in progress), the top one on ``import m`` or ``from m import ...`` of a
    top-level project file ``m.py`` (not a standard library name, which Python may have imported already), and no
    statement before the line of any frame can have imported ``m`` (`_quiet_before`)."""
    import sys

    if not frames or any(f.name != "<module>" for f in frames):
        return None
    top = frames[-1]
    paths = {path.removesuffix(".py"): path for path in sources if path is not None and path.endswith(".py") and "/" not in path}
    try:
        statement = next(iter(_statements_on(sources[top.file], top.line)), None)
    except (SyntaxError, ValueError, MemoryError, RecursionError):  # a file Python cannot parse: its flow says nothing
        return None
    if isinstance(statement, ast.Import) and len(statement.names) == 1:
        name = statement.names[0].name
    elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
        name = statement.module
    else:
        return None
    path = paths.get(name)
    if path is None or path == top.file or name in sys.stdlib_module_names:
        return None
    if not all(_quiet_before(sources, f, name) for f in frames):
        return None
    return path


_DYNAMIC_IMPORTS = re.compile(r"\b(?:__import__|import_module|importlib|runpy|exec|eval)\b")


def _quiet_before(sources: Mapping[str | None, str], frame: Frame, name: str) -> bool:
    """Whether nothing that ran before `frame`'s line can have imported `name`: the file's text before that line
    does not mention it (nor import dynamically), nor does any project file that text mentions, or that those
    mention (code that ran before is that text's, the standard library's, and those files')."""
    source = sources[frame.file]
    before = "".join(source.splitlines(keepends=True)[: max(frame.line - 1, 0)])
    seen: set[str] = set()
    todo = [before]
    while todo:
        text = todo.pop()
        if _mentions(text, name) or _DYNAMIC_IMPORTS.search(text):
            return False
        for path, other in sources.items():
            module = (path or "").removesuffix(".py").replace("/", ".")
            if path is not None and path not in seen and _mentions(text, module.split(".")[-1]):
                seen.add(path)
                todo.append(other)
    return True


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def _at_breakpoints(parts: lang.StackPatterns, start: int, sources: Mapping[str | None, str], marks: Mapping[str | None, frozenset[int]]) -> str:
    """Part 2's breakpoint stops: the frames under the top ones unchanged, some of the top ones continued, new frames,
    the top one of any file on a breakpoint line of its file (`marks`)."""
    tops = [_frames_at(path, text, {(name, None): lines & marks[path] for name, lines in (lang.program_info(text).lines_by_name or {}).items()})
            for path, text in sources.items() if marks.get(path)]  # fmt: skip
    tops = [t for t in tops if t]
    if not tops or len(parts.kept) <= start:
        return ""
    kept = "(?:" + "|".join([parts.kept[start], *parts.continued[start:]]) + ")"
    return f"{_reasons([StopReason.BREAKPOINT])}{kept}(?:{parts.new_frame})*(?:{'|'.join(tops)}){parts.tail}"


def _entered(sources: Mapping[str | None, str], file: str | None, top: Frame) -> dict[str | None, dict[str, frozenset[int]]] | None:
    """Per other file, the code objects a Step Into from `top` (a frame of `file`) can stop in first, on their first
    lines; None when a file cannot be followed. Resolved by name, as `model.static.flow` resolves a line's calls: the
    functions and methods the line names (called or passed), the ``__init__``/``__new__``/``__post_init__`` of the classes it
    names and of their bases, the file's module body where the line imports, and what any call may run: the file's
    dunders and properties, functions used as values in any file, generators resuming."""
    from model.static.flow import EXIT, FlowUnavailable, _init_scopes, program_flow

    try:
        caller = program_flow(sources[file])
        callees = {path: program_flow(text) for path, text in sources.items() if path != file}
    except FlowUnavailable:
        return None
    scopes = caller.scope_at(top.name, top.line)
    if not scopes:
        return None
    calls = [c for c in (scope.calls.get(top.line) for scope in scopes) if c is not None]
    named = {n for c in calls for n in c.names | c.attrs} | _line_names(sources[file], top.line)
    classes = _base_names(caller, named)
    calling = any(c.calls for c in calls)
    iterating = any(c.iterates for c in calls)
    importing = _imports_on(sources[file], top.line)
    values = caller.values.union(*(callee.values for callee in callees.values()))
    found: dict[str | None, dict[str, frozenset[int]]] = {}
    for path, callee in callees.items():
        starts: set[tuple[str, frozenset[int]]] = set(callee.anywhere)
        for name in named | classes:
            starts |= {(f.name, f.entry) for f in callee.functions.get(name, [])}
            starts |= {(f.name, f.entry) for f in _init_scopes(name, callee.classes, callee.functions)}
        if calling:
            starts |= set(callee.escaping) | {(f.name, f.entry) for name in values for f in callee.functions.get(name, [])}
        if calling or iterating:
            starts |= set(callee.resumable)
        if importing:
            starts |= {(s.name, s.entry) for s in callee.by_name.get("<module>", [])}
        merged: dict[str, set[int]] = {}
        for name, lines in starts:
            merged.setdefault(name, set()).update(set(lines) - {EXIT})
        found[path] = {name: frozenset(lines) for name, lines in merged.items() if lines}
        if importing and not lang.program_info(sources[path]).lines_by_name:  # a file without code stops on line 0
            found[path]["<module>"] = frozenset({0})
    return found


def _base_names(flow: "ProgramFlow", names: set[str]) -> set[str]:
    """The names of the bases (through the program's own classes) of the program's classes among `names`."""
    found: set[str] = set()
    todo = [n for n in names if n in flow.classes]
    while todo:
        node, _ = flow.classes[todo.pop()]
        for base in node.bases:
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
            if name and name not in found:
                found.add(name)
                if name in flow.classes:
                    todo.append(name)
    return found


def _statements_on(source: str, line: int) -> list[ast.stmt]:
    """The innermost statements whose lines hold `line`."""
    found = statements_at(source).get(line, ())
    return [n for n in found if not any(o is not n and n.lineno <= o.lineno and (o.end_lineno or o.lineno) <= (n.end_lineno or n.lineno)
                                        for o in found)]  # fmt: skip


def _line_names(source: str, line: int) -> set[str]:
    """Every name and attribute the statement on `line` mentions (a function it passes on may be called by library code)."""
    names: set[str] = set()
    for stmt in _statements_on(source, line):
        nodes = [*stmt.decorator_list, *stmt.bases] if isinstance(stmt, ast.ClassDef) else \
            [*stmt.decorator_list, stmt.args] if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else [stmt]
        for node in nodes:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name):
                    names.add(sub.id)
                elif isinstance(sub, ast.Attribute):
                    names.add(sub.attr)
    return names


def _imports_on(source: str, line: int) -> bool:
    return any(isinstance(stmt, (ast.Import, ast.ImportFrom)) for stmt in _statements_on(source, line))


def _with_known(lines: Mapping[str, frozenset[int]] | None, known: "Mapping[str, KnownEntry]") -> dict[tuple[str, str | None], frozenset[int]] | None:
    """`_entered`'s code objects of one file, keyed by (name, locals text): a known entry's (on its own first lines where
    it says which) with its locals, the rest with None (any locals)."""
    if lines is None:
        return None
    keyed: dict[tuple[str, str | None], frozenset[int]] = {}
    for name, ls in lines.items():
        entry = known.get(name)
        own = ls if entry is None or entry.lines is None else ls & entry.lines
        if entry is not None and own:
            keyed[(name, entry.locals_text())] = own
        if entry is None or ls - own:
            keyed[(name, None)] = ls - own if entry is not None else ls
    return keyed


def _frames_at(path: str | None, source: str, lines: Mapping[tuple[str, str | None], frozenset[int]] | None) -> str:
    """A new frame of file `path` (None: the program) of one of `lines`' code objects, keyed (name, its locals text or
    None: any), on one of its lines ("" when none)."""
    if not lines:
        return ""
    src = "" if path is None else lang.SRC_SEP + lang.json_string(path)
    located = [f"{re.escape(name)}{re.escape(src + lang.LINE_SEP)}(?:{'|'.join(str(n) for n in sorted(ls))})"
               + (lang.FULL_LOCALS_RE if text is None else re.escape(text))
               for (name, text), ls in sorted(lines.items(), key=lambda item: (item[0][0], item[0][1] or "")) if ls]  # fmt: skip
    if not located:
        return ""
    return f"{re.escape(lang.CALL_SEP)}(?:{'|'.join(located)})"


def _breakpoint_lines(sources: Mapping[str | None, str], breakpoints: Sequence[int], file_breakpoints: Mapping[str, Sequence[int]],
                      action: Action) -> dict[str | None, frozenset[int]]:  # fmt: skip
    """File (None: the program) -> the lines a breakpoint stop's top frame can be on: the breakpoints (the program's and
    the run-to line, the other files'), and for one on a line that starts no statement, the statement line before it (as
    `model.static.flow` places them)."""
    marks: dict[str | None, set[int]] = {None: set(breakpoints)}
    for path, lines in file_breakpoints.items():
        marks.setdefault(path, set()).update(lines)
    if action.kind is ActionKind.BREAKPOINT and action.line is not None:
        marks[None].add(action.line)
    placed: dict[str | None, frozenset[int]] = {}
    for path, lines in marks.items():
        code = sorted(lang.program_info(sources[path]).lines or ()) if path in sources else []
        before = {max((n for n in code if n <= line), default=line) for line in lines}
        if lines:
            placed[path] = frozenset(lines | before)
    return placed


__all__ = ["ProjectStep", "file_lines", "top_block"]
