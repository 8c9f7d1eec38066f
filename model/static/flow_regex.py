"""The state grammar narrowed to the stops static control flow allows (`model.static.flow.FlowSet`).

`flow_state_regex(program, previous, flow)` is `model.prompt.language.state_regex` with the stack part
replaced per reason: `<|reason_step|>` only with the flow's step shapes (each frame's line from the
allowed set, kept frames on their exact line, a new frame only where a call can start one),
`<|reason_breakpoint|>` only with the top frame on a breakpoint line, `<|reason_exception|>` any
stack, `<|reason_entry|>` never after a forward action, and the endings other than `<|exit_never|>`
only where the program may end. Exception info (`<|exception_sep|>`) only at an exception stop or
the end, a return value only at a stop in a running program (the recorders' rule: debugpy's
``exceptionInfo`` is asked at exception stops). Frame markers follow the language's rule 2 (`<|frame_sep|>` for a
frame that continues the previous state's frame at that depth). An unconstrained flow gives
`state_regex` unchanged. Like `state_regex`: no look-arounds or back-references (vLLM's grammar
engines take it as is).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from model.prompt import language as lang
from model.static.flow import (INIT_METHODS, AnyStack, Continue, FlowSet, FlowUnavailable, KnownReturn, ProgramFlow, Push, ScopeFlow, Shape,
                               _library_based, program_flow, startable_from)  # fmt: skip
from model.static.frame_names import calling_names, frame_names as visible_names
from model.static.line_effects import quiet_lines
from model.static.return_kinds import local_kinds, return_kinds, return_literals
from model.static.value_kinds import kinds_value_regex
from protocol.debugger import Ending, Frame, State, StopReason, display_key

if TYPE_CHECKING:
    from model.static.call_args import KnownEntry
    from model.static.line_effects import KeptLocals

# the exception in flight: debugpy's exceptionInfo, asked only at an exception stop (and kept for the end after an uncaught one)
KNOWN = "<known>"  # marks the stops that show `FlowSet.known_return`
RAISED = "<raised>"  # marks the returners of a stop an exception passed through (`FlowSet.raised`): None is shown
EXCEPTION_TAIL_RE = f"(?:{re.escape(lang.EXCEPTION_SEP)}{lang.EXCEPTION_TYPE_RE}{lang.JSON_STRING_RE})?"

Names = dict[tuple[str, int], frozenset[str]]  # (code object name, line) -> visible names (`model.static.frame_names`)
Typed = Mapping[str, frozenset[str]]  # a frame's local -> the builtin kinds its value can have (`model.static.return_kinds.local_kinds`)



def alt(items: Iterable[str]) -> str:
    """One regex group of the alternatives (empty when there are none)."""
    items = list(items)
    return "(?:" + "|".join(items) + ")" if items else ""


def _lines(lines: Iterable[int]) -> str:
    return alt(str(n) for n in sorted(set(lines)))


def kept_frames(old: list[Frame], depth: int, calling: "Names | None" = None) -> str:
    """The previous stack's frames ``0..depth-1`` (outermost first) unchanged: each continued on its line. With `calling`
    (`model.static.frame_names.calling_names`), a frame's keys are the names it may show while its line waits on a call
    (a program's callee may mutate their values, or bind a `global` it declares, so values stay free)."""
    return "".join(f"{re.escape(lang.FRAME_SEP)}{re.escape(f.name)}{re.escape(lang.LINE_SEP)}{f.line}{_kept_locals(f, calling)}" for f in old[:depth])


def _kept_locals(frame: Frame, calling: "Names | None") -> str:
    visible = calling.get((frame.name, frame.line)) if calling is not None and frame.file is None else None
    return lang.LOCALS_ANY_RE if visible is None else locals_regex(visible, True, base=list(frame.locals))


def _frame(marker: str, name: str, lines: Iterable[int], names: "Names | None" = None, known: "KnownEntry | None" = None,
           kept: "KeptLocals | None" = None, base: "Sequence[str] | None" = None, typed: "Typed | None" = None) -> str:  # fmt: skip
    """A top frame `name` on one of `lines`; with `names` (`model.static.frame_names`), its locals' keys are the names visible on that line.
    `known` (a new frame's known parameters, `model.static.call_args`): those keys only with their values, or the whole locals object.
    `kept` (a continued frame after one step, `model.static.line_effects`): a delta lists only what may change, kept values stay.
    `typed` (`model.static.return_kinds.local_kinds`): a local's value begins as one of its kinds."""
    lines = set(lines)
    if not lines:
        return ""
    continued = marker == lang.FRAME_SEP
    if known is not None and known.lines is not None and not continued and lines - known.lines:  # another code object of the name
        from dataclasses import replace

        return alt(f for f in (_frame(marker, name, lines & known.lines, names, replace(known, lines=None), kept, base, typed),
                               _frame(marker, name, lines - known.lines, names, None, kept, base, typed)) if f)  # fmt: skip
    head = f"{re.escape(marker)}{re.escape(name)}{re.escape(lang.LINE_SEP)}"
    if known is not None and known.complete and not continued:
        return head + _lines(lines) + re.escape(known.locals_text())
    fixed = known.values if known is not None else None
    if not names:
        return head + _lines(lines) + (lang.LOCALS_ANY_RE if continued else lang.FULL_LOCALS_RE)
    kept = kept if continued else None
    groups: dict[tuple[frozenset[str] | None, frozenset[str]], list[int]] = {}
    for line in sorted(lines):
        required = kept.required.get(line, frozenset()) if kept is not None else frozenset()
        visible = names.get((name, line))
        groups.setdefault((None if visible is None else frozenset(visible), required), []).append(line)
    def body(visible: frozenset[str] | None, required: frozenset[str]) -> str:
        if visible is None:
            return lang.LOCALS_ANY_RE if continued else lang.FULL_LOCALS_RE
        if kept is not None:
            return kept_locals_regex(visible, kept, required, typed)
        return locals_regex(visible, continued, fixed, base, typed)

    return head + alt(_lines(group) + body(*key) for key, group in groups.items())


def kept_locals_regex(visible: frozenset[str], kept: "KeptLocals", required: frozenset[str] = frozenset(), typed: "Typed | None" = None) -> str:
    """A continued frame's locals after one step: a delta of the names that may change, or in full with the kept values;
    either lists the `required` names (new names the line certainly binds, `model.static.certain_bindings`; one bound to a literal with its repr). The full
    form (the language writes it when a name disappears) keeps every name the line cannot rebind, and is not offered
    when no shown name can disappear."""
    keys = kept.delta_keys(visible)
    required = required & keys
    literals = {k: v for k, v in kept.literals.items() if k in required}  # a required name bound to a literal: its repr
    delta = delta_locals_regex(_delta_order(keys, kept.order), required, typed, literals)
    stay = kept.shown - kept.may_disappear()  # their objects stay, so they stay shown
    fixed = {**kept.kept, **literals}
    if not stay <= visible:  # the visible names miss one: no narrowing of the full form
        return f"(?:{delta}|{full_locals_regex(kept.full_keys(visible), fixed, required, typed)})"
    if not kept.may_disappear():  # written in full only when a name disappears (`language._frame_locals`): none can
        return delta
    return f"(?:{delta}|{full_locals_regex(kept.full_keys(visible), fixed, required | stay, typed)})"


def locals_regex(visible: Iterable[str], delta_allowed: bool, fixed: "Mapping[str, str] | None" = None,
                 base: "Sequence[str] | None" = None, typed: "Typed | None" = None) -> str:  # fmt: skip
    """A frame's locals object whose keys are among `visible` (in full, or with `delta_allowed` also as a delta
    against a frame that showed `base`, in that order); a key of `fixed` only with its value there."""
    full = full_locals_regex(visible, fixed, typed=typed)
    if not delta_allowed:
        return full
    keys = frozenset(visible)
    delta = delta_locals_regex(_delta_order(keys, base), typed=typed) if base is not None else _unordered_delta(keys)
    return f"(?:{full}|{delta})"


MAX_ORDERED = 16  # more keys than this: the full object's keys in any order (the ordered regex grows with the square)


def _pair(key: str, fixed: "Mapping[str, str] | None", typed: "Typed | None" = None) -> str:
    if fixed and key in fixed:
        value = re.escape(lang.json_string(fixed[key]))
    else:
        value = kinds_value_regex(typed[key]) if typed and key in typed else lang.JSON_STRING_RE
    return re.escape(lang.json_string(key)) + ":" + value


def full_locals_regex(keys: Iterable[str], fixed: "Mapping[str, str] | None" = None, required: frozenset[str] = frozenset(),
                      typed: "Typed | None" = None) -> str:  # fmt: skip
    """A full locals object: some of `keys` (the `required` ones always), each at most once, in debugpy's order
    (`protocol.debugger.display_key`)."""
    ordered = sorted(set(keys), key=display_key)
    if not ordered:
        return r"\{\}"
    pairs = [_pair(k, fixed, typed) for k in ordered]
    if len(pairs) > MAX_ORDERED:  # any order: what is required is not enforced
        pair = alt(pairs)
        return rf"\{{(?:{pair}(?:,{pair})*)?\}}"
    needed = [i for i, k in enumerate(ordered) if k in required]
    first = needed[0] if needed else len(pairs) - 1  # the object starts at or before its first required key

    def rest(i: int) -> str:
        return "".join(f",{p}" if ordered[j] in required else f"(?:,{p})?" for j, p in enumerate(pairs[i + 1:], i + 1))

    starts = [pairs[i] + rest(i) for i in range(first + 1)]
    return rf"\{{{alt(starts)}\}}" if needed else rf"\{{{alt(starts)}?\}}"


def delta_locals_regex(ordered: Sequence[str], required: frozenset[str] = frozenset(), typed: "Typed | None" = None,
                       fixed: "Mapping[str, str] | None" = None) -> str:  # fmt: skip
    """A delta: some of `ordered` (the `required` ones always; each at most once, in that order), then ``..}``; a key
    of `fixed` only with its value there."""
    pairs = [_pair(k, fixed, typed) for k in ordered]
    return r"\{" + "".join(f"{p}," if k in required else f"(?:{p},)?" for k, p in zip(ordered, pairs)) + r"\.\.\}"


def _unordered_delta(keys: frozenset[str]) -> str:
    key = alt(re.escape(lang.json_string(k)) for k in sorted(keys))
    return f"\\{{(?:{key}:{lang.JSON_STRING_RE},)*\\.\\.\\}}" if key else r"\{\.\.\}"


def _delta_order(keys: frozenset[str], base: "Sequence[str] | None") -> list[str]:
    """The order a delta lists `keys` in: changed ones in the old frame's order, then new ones in debugpy's."""
    base = list(base or ())
    return [k for k in base if k in keys] + sorted((k for k in keys if k not in base), key=display_key)


def _shape(shape: Shape, old: list[Frame], info: lang.ProgramInfo, names: "Names | None" = None,
           entry: "Mapping[str, KnownEntry] | None" = None, kept: "Mapping[int, KeptLocals] | None" = None,
           before_line: bool = True, kinds: "Mapping[str, Typed] | None" = None, calling: "Names | None" = None) -> str:  # fmt: skip
    """The stacks `shape` allows. `before_line`: the stop comes before the top frame's line runs (a step or a
    breakpoint, not an exception raised in the middle of it), so any top frame's keys are its line's visible names.
    `kinds`: function name -> its typed locals (`model.static.return_kinds.local_kinds`). `calling`: the keys of the
    frames kept below the top (`kept_frames`)."""
    kinds = kinds or {}
    if isinstance(shape, Continue):
        if shape.depth >= len(old) or not shape.lines:
            return ""
        frame = old[shape.depth]
        head = _frame(lang.FRAME_SEP, frame.name, shape.lines, names if frame.file is None else None,
                      kept=(kept or {}).get(shape.depth), base=list(frame.locals), typed=kinds.get(frame.name) if frame.file is None else None)  # fmt: skip
        return kept_frames(old, shape.depth, calling) + head
    if isinstance(shape, Push):
        options = []
        for name, lines in sorted(shape.frames, key=lambda f: f[0]):
            continues = shape.depth < len(old) and old[shape.depth].name == name and old[shape.depth].file is None
            known = (entry or {}).get(name) if shape.depth == len(old) else None  # a call from the top frame's line
            base = list(old[shape.depth].locals) if continues else None
            options.append(_frame(lang.FRAME_SEP if continues else lang.CALL_SEP, name, lines, names, known, base=base, typed=kinds.get(name)))
        body = alt(o for o in options if o)
        return kept_frames(old, shape.depth, calling) + body if body else ""
    return _any_stack(shape, old, info, names if before_line else None, calling)


def _any_stack(shape: AnyStack, old: list[Frame], info: lang.ProgramInfo, names: "Names | None" = None,
               calling: "Names | None" = None) -> str:  # fmt: skip
    """Any stack (the grammar's continuation rule) whose top frame satisfies `shape`; with `names`
    (`model.static.frame_names`) the top frame's locals' keys are the names visible on its line when the
    shape fixes where the top frame is (a breakpoint stop, which comes before its line runs). The
    frames below the top stopped in the middle of a line (a call), where a name may already be bound
    by that line (`(y := 1) + g()`): those kept from the previous stack take `calling`'s keys for their line
    (`kept_frames`), the others stay unconstrained, as the frames an exception stops."""
    by_name = info.lines_by_name or {}

    def top_lines(name: str, lines: Iterable[int]) -> set[int]:
        if shape.top_names is not None and name not in shape.top_names:
            return set()
        return set(lines) & set(shape.top_lines) if shape.top_lines is not None else set(lines)

    def new_frame(located: list[str]) -> str:
        return f"{re.escape(lang.CALL_SEP)}{alt(located)}{lang.FULL_LOCALS_RE}" if located else ""

    line_sep = re.escape(lang.LINE_SEP)
    new_any = new_frame([f"{re.escape(n)}{line_sep}{_lines(ls)}" for n, ls in sorted(by_name.items()) if ls])
    restricted = shape.top_lines is not None or shape.top_names is not None
    top_names = names if restricted else None  # the top frame's keys, where the top frame is fixed
    new_top = alt(f for f in (_frame(lang.CALL_SEP, n, top_lines(n, ls), top_names) for n, ls in sorted(by_name.items())) if f)
    most = shape.max_new
    stars = "*" if most is None else f"{{0,{most - 1}}}"
    pushed = (f"(?:{new_any}){stars}{new_top}" if restricted else f"(?:{new_any}){'+' if most is None else f'{{1,{most}}}'}") if new_top and most != 0 else ""
    options = [pushed] if pushed else []
    for depth, frame in enumerate(old):
        if frame.file is not None:
            break
        own = info.lines_of(frame.name) or frozenset()
        here = _frame(lang.FRAME_SEP, frame.name, top_lines(frame.name, own), top_names, base=list(frame.locals))
        if not restricted and here:  # the frame, then any frames
            options.append(kept_frames(old, depth, calling) + here + (f"(?:{new_any}){'*' if most is None else f'{{0,{most}}}'}" if new_any else ""))
            continue
        if here:  # the frame on top
            options.append(kept_frames(old, depth, calling) + here)
        if pushed and own:
            options.append(kept_frames(old, depth, calling) + _frame(lang.FRAME_SEP, frame.name, own) + pushed)
    return alt(options)


def flow_state_regex(program: str, previous: State, flow: FlowSet, *, include_end: bool = True,
                     entry: "Mapping[str, KnownEntry] | None" = None, kept: "Mapping[int, KeptLocals] | None" = None,
                     frame_names: bool = True, typed_returns: bool = True, below: str = "", file: str | None = None) -> str:  # fmt: skip
    """A regex of the state texts after `previous` that `flow` allows (see the module docstring); `entry`
    (`model.static.call_args.entry_values`, for a step_into) fixes known parameters of a frame the top frame's line calls;
    `kept` (`model.static.line_effects.kept_locals`, for a step) narrows the continued frames' locals. `frame_names`: a
    frame's keys are the names visible on its line (`model.static.frame_names`); `typed_returns`: a return value of the
    kinds its function returns (`model.static.return_kinds`), and a function's locals of the kinds its bindings give
    (`local_kinds`); off, any keys and any value (`model.decoding`'s plain rules). `below` and `file` place `previous` (a
    stack of one file's frames, `program` that file's source) on top of frames of other files (`model.decode.project_flow`):
    `below` matches those frames, written after the reason; `file` (None: the main program) is written into each frame;
    then no ending (leaving the frames goes to `below`'s, which the caller's grammar answers)."""
    if flow.unconstrained:
        return lang.state_regex(program, previous, include_end=include_end)
    info = lang.program_info(program)
    if not info.lines_by_name:
        return lang.state_regex(program, previous, include_end=include_end)
    old = list(reversed(previous.frames))
    names = visible_names(program) if frame_names else None
    calling = calling_names(program) if frame_names else None
    kinds = local_kinds(program) if typed_returns else None
    running = []
    elsewhere = bool(below) or file is not None  # other user files' code can run from this one's, as library code can
    value = f"{re.escape(lang.RETURN_SEP)}{return_value_regex(program, info.names or (), typed=typed_returns, elsewhere=elsewhere)}"
    for token, reason, shapes in ((lang.REASON_STEP, StopReason.STEP, flow.step), (lang.REASON_BREAKPOINT, StopReason.BREAKPOINT, flow.breakpoint),
                                  (lang.REASON_EXCEPTION, StopReason.EXCEPTION, flow.exception)):  # fmt: skip
        steps_kept = kept if token == lang.REASON_STEP else None  # a breakpoint may stop after more lines of the frame ran
        stacks = []
        for must in (True, False):  # a frame left by a return shows its value (FlowSet.returned); others may
            groups: dict[tuple[str, ...] | None, list[str]] = {}  # the functions whose return value the stop may show (None: any) -> shapes
            for shape in shapes:
                if flow.must_return(shape, reason) == must:
                    text = _shape(shape, old, info, names, entry, steps_kept, token != lang.REASON_EXCEPTION, kinds, calling)
                    returners = _returners(program, old, shape, elsewhere)
                    if returners is not None and reason is StopReason.STEP and isinstance(shape, Continue) and shape.depth in flow.raised:
                        returners = (RAISED, *returners)
                    if reason is StopReason.STEP and flow.knows_return(shape):
                        returners = (KNOWN,)
                    if text:
                        groups.setdefault(returners, []).append(text)
            for returners, bodies in groups.items():
                if returners == (KNOWN,) and flow.known_return is not None:
                    shown = known_return_regex(flow.known_return)
                elif returners is not None and returners[:1] == (RAISED,):
                    shown = returned_value_regex(program, returners[1:], typed=typed_returns, raised=True)
                else:
                    shown = value if returners is None else returned_value_regex(program, returners, typed=typed_returns)
                if not shown:  # nothing can have returned into the frame
                    stacks.append(f"(?:{alt(bodies)})")
                else:
                    stacks.append(f"(?:{alt(bodies)}){shown}" if must else f"(?:{alt(bodies)})(?:{shown})?")
        if stacks:
            raised = EXCEPTION_TAIL_RE if token == lang.REASON_EXCEPTION else ""  # exception info only at an exception stop
            running.append(re.escape(token) + below + _in_file(alt(stacks), file) + raised)
    endings = list(lang.ENDING_TOKENS.values()) + [lang.EXITED] if flow.exit else [lang.ENDING_TOKENS[Ending.NEVER]] if flow.limit_end else []
    if below and running:
        endings = []
    if endings or not running:
        running.append(alt(re.escape(t) for t in endings or [lang.ENDING_TOKENS[Ending.NEVER]]) + "(?:-?[0-9]{1,9})?" + EXCEPTION_TAIL_RE)
    return alt(running) + f"(?:{re.escape(lang.STDOUT)}{lang.JSON_STRING_RE})?" + (re.escape(lang.STATE_END) if include_end else "")


def _in_file(stacks: str, file: str | None) -> str:
    """`stacks` (frames of one file) with `file`'s path written into each frame (None: the main program's, no path)."""
    if file is None:
        return stacks
    return stacks.replace(re.escape(lang.LINE_SEP), re.escape(lang.SRC_SEP + lang.json_string(file) + lang.LINE_SEP))


def return_value_regex(program: str, names: Iterable[str], *, typed: bool = True, elsewhere: bool = False) -> str:
    """A return value: the function's name (or ``Class.name``) and its repr, of a kind `model.static.return_kinds` allows
    (`typed`; else any repr). `elsewhere`: code of other user files can run from the program's, as library code can."""
    names = sorted(names)
    if elsewhere or _imports(program):  # a library function written in Python shows its return value too (``(return) wraps``)
        return f"(?:{lang.GENERIC_NAME_RE}\\.)?{lang.GENERIC_NAME_RE}{lang.JSON_STRING_RE}"
    name_re = alt(re.escape(n) for n in names) or lang.GENERIC_NAME_RE
    literals = return_literals(program) if typed else {}
    typed = return_kinds(program) if typed else {}
    options = [f"{re.escape(n)}{_literal_values_regex(literals[n]) if n in literals else kinds_value_regex(kinds)}"
               for n, kinds in sorted(typed.items()) if n in names]
    plain = [n for n in names if n not in typed]
    if plain or not names:  # the untyped functions (any name when the program's names are unknown)
        options.append(f"{alt(re.escape(n) for n in plain) or lang.GENERIC_NAME_RE}{lang.JSON_STRING_RE}")
    return f"(?:{name_re}\\.)?{alt(options)}"


def _returners(program: str, old: Sequence[Frame], shape: Shape, elsewhere: bool = False) -> tuple[str, ...] | None:
    """The functions whose return value a stop of `shape` may show (None: any the language allows). Back in a caller:
    the frame that was left (`_returned_by`). On in the same frame, in a program that imports nothing (no library code
    written in Python can run): the functions its line can start (`model.static.flow.startable_from`: calls, dunders,
    properties, functions passed as values, generators it resumes), none when it can start none; in any program, none
    after a line that runs no code (`model.static.line_effects.quiet_lines`). `elsewhere`: as if the program imported
    something (other user files' code can run)."""
    if not isinstance(shape, Continue):
        return None
    if shape.depth < len(old) - 1:
        returned = _returned_by(program, old, shape.depth)
        return None if returned is None else (returned,)
    top = old[-1]
    if elsewhere or _imports(program):
        return () if (top.name, top.line) in quiet_lines(program) else None  # a quiet line runs no code: nothing returns
    try:
        started = startable_from(program_flow(program), top.name, top.line)
    except FlowUnavailable:
        return None
    return None if started is None else tuple(sorted(started))


def _returned_by(program: str, old: Sequence[Frame], depth: int) -> str | None:
    """The function whose return value a stop in frame `depth` (outermost first) shows after the frames above it were
    left: the frame just above it, ``old[depth + 1]``, when only user code calls that function (not
    `model.static.flow`'s ``indirect``: no library frame can stand between it and its caller). None when that cannot be said."""
    if depth + 1 >= len(old):
        return None
    frame = old[depth + 1]
    try:
        flow = program_flow(program)
    except FlowUnavailable:
        return None
    scopes = flow.scope_at(frame.name, frame.line)
    if not scopes or any(s.indirect or s.generator or s.kind not in ("function", "comprehension") for s in scopes):
        return None  # a class body returns to its metaclass (an Enum's, a TypedDict's: library code) before the module
    if frame.name in INIT_METHODS and any(_built_by_library(flow, s) for s in scopes):
        return None
    return frame.name


def _built_by_library(flow: ProgramFlow, scope: ScopeFlow) -> bool:
    """Whether the class holding method `scope` has a library base or a keyword (``metaclass=``), `model.static.flow`'s
    `_library_based`, or ``object`` written as a base: library code (an Enum's ``__call__``) may then stand between its
    ``__init__`` and the caller."""
    for name, (node, _) in flow.classes.items():
        if any(stmt is scope.node for stmt in node.body):
            return _library_based(name, flow.classes) or any(isinstance(b, ast.Name) and b.id == "object" for b in node.bases)
    return True


def returned_value_regex(program: str, names: Sequence[str], *, typed: bool = True, raised: bool = False) -> str:
    """The return value of one of the program's functions `names` (their frames' names), of a kind
    `model.static.return_kinds` allows (`typed`; else any repr), or None where the frame was left by an exception
    (`raised`); empty when `names` is. debugpy writes a method's as ``Class.name``, the class of its first argument: one
    of the program's classes."""
    if not names:
        return ""
    flow = program_flow(program)
    typed_kinds = return_kinds(program) if typed else {}
    literals = return_literals(program) if typed else {}
    owners = alt(re.escape(c) for c in sorted(flow.classes))
    options = []
    for name in names:
        kinds = typed_kinds.get(name)
        owner = f"(?:{owners}\\.)" if owners else ""
        if owner and not _plain_method(flow, name):
            owner += "?"
        if raised:
            shown = re.escape(lang.json_string("None"))
        elif name in literals:
            shown = _literal_values_regex(literals[name])
        else:
            shown = kinds_value_regex(kinds) if kinds else lang.JSON_STRING_RE
        options.append(f"{owner}{re.escape(name)}{shown}")
    return f"{re.escape(lang.RETURN_SEP)}{alt(options)}"


def known_return_regex(known: KnownReturn) -> str:
    """`FlowSet.known_return` as written in a state: its name and one of its reprs."""
    return f"{re.escape(lang.RETURN_SEP)}{re.escape(known.name)}{_literal_values_regex(known.values)}"


def _literal_values_regex(reprs: Iterable[str]) -> str:
    """A return value shown as one of `reprs` (`model.static.return_kinds.return_literals`)."""
    return alt(re.escape(lang.json_string(text)) for text in sorted(reprs))


def _plain_method(flow: ProgramFlow, name: str) -> bool:
    """Whether debugpy certainly writes function `name`'s return value as ``Class.name``: it is a method of one class alone
    (no other class of the program defines it, so ``super()`` cannot run it for a subclass that overrides it) with a first
    parameter: debugpy qualifies the name by the class of the first argument when that class's attribute runs this code."""
    scopes = flow.functions.get(name, [])
    owners = [node for node, _ in flow.classes.values() if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name for s in node.body)]
    if len(scopes) != 1 or len(owners) != 1:
        return False
    node = scopes[0].node
    if not any(stmt is node for stmt in owners[0].body):
        return False
    args = node.args  # type: ignore[attr-defined]
    return bool(args.posonlyargs or args.args)  # a decorated one (staticmethod, classmethod) is `indirect`: never asked


@lru_cache(maxsize=32)
def _imports(program: str) -> bool:
    """Whether the program imports anything (or cannot be parsed): its calls may return from library Python code.
    Cached: asked for every forward step's grammar."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return True
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree))
