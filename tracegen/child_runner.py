"""Run one user program under ``sys.settrace`` and write its full event trace (STDLIB ONLY).

Run by path, never imported by the program it traces::

    python -I child_runner.py --program PROG --out TRACE.jsonl [--max-events N] [--cwd DIR] [-- ARGS...]

``-I`` keeps our packages off ``sys.path``; the runner puts the program's own folder first, sets
``__name__ == "__main__"``, ``sys.argv`` and the working directory, so a user's ``model.py`` is
what ``import model`` finds.

Output: JSON lines, one record per line (``tracegen/trace.py`` is the reader and documents every
record). User-code frames only (the program file and files in its folder, not site-packages or the
standard library), like debugpy with ``justMyCode``. A library frame called directly from user code
gets call/return records (debugpy shows its return value as ``(return) name``) but no lines.

Values are rendered like debugpy's variables view (``SafeRepr``, ported below from debugpy 1.8,
MIT licence, Microsoft): strings longer than 2**16 characters and other reprs longer than 2**16
characters are cut to ``head...tail``; inside containers the limit is 128 and at most 59 items are
shown followed by ``...``; a ``__repr__`` that raises shows ``object.__repr__`` (``<mod.Cls object at
0x...>``). Locals are the names debugpy lists at the top level of a frame's variables, in its order
(plain names, then ``_x``, then ``__y``, each sorted): no dunders (``__x__``), no functions/methods,
no classes, no modules (debugpy lists modules; the project leaves them out, like tracegen's debugpy
recorder). ``_``-prefixed names are debugpy's inline "protected variables": shown unless the value's
type is module, function, type, builtin function or method (the recorder's rule).
"""
from __future__ import annotations

import argparse
import dis
import inspect
import io
import json
import os
import sys
import sysconfig
import types
from typing import Any, Callable

MAX_LEVEL_ITEMS = (60, 20)
MAXSTRING_OUTER = 2**16
MAXSTRING_INNER = 128
IMMUTABLE_ATOMS = (int, float, complex, str, bytes, bool, type(None), range)
FLUSH_EVERY = 2000
CO_NEWLOCALS = 0x0002
# DAP variable types the debugpy recorder hides (tracegen/debugpy_recorder.py HIDDEN_TYPES)
HIDDEN_TYPE_NAMES = frozenset({"module", "function", "type", "builtin_function_or_method", "method"})


# --------------------------------------------------------------------------------------------
# SafeRepr (port of debugpy/_vendored/pydevd/_pydevd_bundle/pydevd_safe_repr.py, MIT licence)
# --------------------------------------------------------------------------------------------
class SafeRepr:
    """debugpy's value rendering for the variables view (default limits, no hex, not raw)."""

    collection_types = [(tuple, "(", ")", True), (list, "[", "]", False), (frozenset, "frozenset({", "})", False), (set, "{", "}", False)]
    dict_types = [(dict, "{", "}", "", ": ", "")]
    long_iter_types = (list, tuple, bytearray, range, dict, set, frozenset)

    def __init__(self) -> None:
        from collections import OrderedDict, deque

        self.collection_types = list(self.collection_types) + [(deque, "deque([", "])", False)]
        self.dict_types = list(self.dict_types) + [(OrderedDict, "OrderedDict([", "])", "(", ", ", ")")]

    def __call__(self, obj: object) -> str:
        try:
            return "".join(self._repr(obj, 0))
        except Exception:
            try:
                return "An exception was raised: %r" % sys.exc_info()[1]
            except Exception:
                return "An exception was raised"

    def _repr(self, obj, level):
        try:
            obj_repr = type(obj).__repr__
        except Exception:
            obj_repr = None

        def has_obj_repr(t):
            r = t.__repr__
            try:
                return obj_repr == r
            except Exception:
                return obj_repr is r

        for t, prefix, suffix, comma in self.collection_types:
            if isinstance(obj, t) and has_obj_repr(t):
                return self._repr_iter(obj, level, prefix, suffix, comma)
        for t, prefix, suffix, item_prefix, item_sep, item_suffix in self.dict_types:
            if isinstance(obj, t) and has_obj_repr(t):
                return self._repr_dict(obj, level, prefix, suffix, item_prefix, item_sep, item_suffix)
        for t in (str, bytes):
            if isinstance(obj, t) and has_obj_repr(t):
                return self._repr_str(obj, level)
        if self._is_long_iter(obj):
            return self._repr_long_iter(obj)
        return self._repr_obj(obj, level, MAXSTRING_INNER, MAXSTRING_OUTER)

    def _is_long_iter(self, obj, level=0):
        try:
            if isinstance(obj, (str, bytes)):
                return len(obj) > MAXSTRING_INNER
            if not hasattr(obj, "__iter__"):
                return False
            if not isinstance(obj, self.long_iter_types):
                return False
            if obj is iter(obj):
                return False
            if isinstance(obj, range):
                return False
            try:
                module = type(obj).__module__.partition(".")[0]
                if module in ("numpy", "scipy"):
                    return False
            except Exception:
                pass
            if level >= len(MAX_LEVEL_ITEMS):
                return True
            if hasattr(obj, "__len__"):
                try:
                    size = len(obj)
                except Exception:
                    size = None
                if size is not None and size > MAX_LEVEL_ITEMS[level]:
                    return True
                return any((self._is_long_iter(item, level + 1) for item in obj))
            return any(i > MAX_LEVEL_ITEMS[level] or self._is_long_iter(item, level + 1) for i, item in enumerate(obj))
        except Exception:
            return True

    def _repr_iter(self, obj, level, prefix, suffix, comma_after_single_element=False):
        yield prefix
        if level >= len(MAX_LEVEL_ITEMS):
            yield "..."
        else:
            count = MAX_LEVEL_ITEMS[level]
            yield_comma = False
            for item in obj:
                if yield_comma:
                    yield ", "
                yield_comma = True
                count -= 1
                if count <= 0:
                    yield "..."
                    break
                for p in self._repr(item, 100 if item is obj else level + 1):
                    yield p
            else:
                if comma_after_single_element:
                    if count == MAX_LEVEL_ITEMS[level] - 1:
                        yield ","
        yield suffix

    def _repr_long_iter(self, obj):
        try:
            obj_repr = "<%s, len() = %s>" % (type(obj).__name__, len(obj))
        except Exception:
            try:
                obj_repr = "<" + type(obj).__name__ + ">"
            except Exception:
                obj_repr = "<no repr available for object>"
        yield obj_repr

    def _repr_dict(self, obj, level, prefix, suffix, item_prefix, item_sep, item_suffix):
        if not obj:
            yield prefix + suffix
            return
        if level >= len(MAX_LEVEL_ITEMS):
            yield prefix + "..." + suffix
            return
        yield prefix
        count = MAX_LEVEL_ITEMS[level]
        yield_comma = False
        for key in list(obj):
            if yield_comma:
                yield ", "
            yield_comma = True
            count -= 1
            if count <= 0:
                yield "..."
                break
            yield item_prefix
            for p in self._repr(key, level + 1):
                yield p
            yield item_sep
            try:
                item = obj[key]
            except Exception:
                yield "<?>"
            else:
                for p in self._repr(item, 100 if item is obj else level + 1):
                    yield p
            yield item_suffix
        yield suffix

    def _repr_str(self, obj, level):
        try:
            limit = MAXSTRING_INNER if level > 0 else MAXSTRING_OUTER
            if len(obj) <= limit:
                yield repr(obj)
                return
            left_count, right_count = max(1, int(2 * limit / 3)), max(1, int(limit / 3))
            part1 = repr(obj[:left_count])
            part1 = part1[: part1.rindex("'")]
            part2 = repr(obj[-right_count:])
            part2 = part2[part2.index("'") + 1 :]
            yield part1
            yield "..."
            yield part2
        except Exception:
            for part in self._repr_obj(obj, level, MAXSTRING_INNER, MAXSTRING_OUTER):
                yield part

    def _repr_obj(self, obj, level, limit_inner, limit_outer):
        try:
            obj_repr = repr(obj)
        except Exception:
            try:
                obj_repr = object.__repr__(obj)
            except Exception:
                try:
                    obj_repr = "<no repr available for " + type(obj).__name__ + ">"
                except Exception:
                    obj_repr = "<no repr available for object>"
        limit = limit_inner if level > 0 else limit_outer
        if limit >= len(obj_repr):
            yield obj_repr
            return
        left_count, right_count = max(1, int(2 * limit / 3)), max(1, int(limit / 3))
        yield obj_repr[:left_count]
        yield "..."
        yield obj_repr[-right_count:]


# --------------------------------------------------------------------------------------------
# The tracer
# --------------------------------------------------------------------------------------------
class StdoutCapture(io.TextIOBase):
    """Replaces ``sys.stdout``: keeps what the program prints (to be attached to the next event)."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.total = 0
        self.limit = limit
        self.overflow = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.total + len(text) > self.limit:
            self.overflow = True
            raise OutputLimit()
        self.parts.append(text)
        self.total += len(text)
        return len(text)

    def flush(self) -> None:
        pass

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def take(self) -> str:
        if not self.parts:
            return ""
        text = "".join(self.parts)
        self.parts.clear()
        return text


class EventLimit(BaseException):
    """Raised inside the program when the event cap is reached (the run ends as exit_never)."""


class OutputLimit(BaseException):
    """Raised inside the program when it printed more than the output cap."""


def _stdlib_dirs() -> tuple[str, ...]:
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            dirs.add(os.path.realpath(sysconfig.get_paths()[key]))
        except Exception:
            pass
    return tuple(sorted(dirs))


def is_immutable(value: object, depth: int = 0) -> bool:
    """True when the repr of ``value`` can never change (atoms, and tuples/frozensets of them)."""
    t = type(value)
    if t in IMMUTABLE_ATOMS:
        return True
    if (t is tuple or t is frozenset) and depth < 3:
        return all(is_immutable(v, depth + 1) for v in value)
    return False


def return_lines(code: types.CodeType) -> frozenset[int]:
    """Lines of the code's RETURN_VALUE instructions (pydevd's ``collect_return_info``)."""
    lines = set()
    current = None
    starts = dict(dis.findlinestarts(code))
    for instr in dis.get_instructions(code):
        if instr.offset in starts:
            current = starts[instr.offset]
        if instr.opname == "RETURN_VALUE" and current is not None:
            lines.add(current)
    return frozenset(lines)


# Library files pydevd never traces, by base name (pydevd_dont_trace_files.DONT_TRACE, debugpy 1.8): a
# function of theirs called from user code shows no ``(return)`` value, e.g. the decoder input() calls.
PYDEVD_NEVER_TRACED = frozenset({
    "Queue.py", "queue.py", "socket.py", "weakref.py", "_weakrefset.py", "linecache.py", "threading.py",
    "dis.py", "io.py", "cp1252.py", "utf_8.py", "codecs.py",
})


class Tracer:
    """Records call/line/return/exception events of user frames with their locals' reprs."""

    def __init__(self, program: str, out, max_events: int, max_stdout: int) -> None:
        self.program = os.path.realpath(program)
        self.folder = os.path.dirname(self.program)
        self.exclude = _stdlib_dirs()
        self.runner_file = os.path.realpath(__file__)
        self.out = out
        self.max_events = max_events
        self.n_events = 0
        self.buffer: list[str] = []
        self.stdout = StdoutCapture(max_stdout)
        self.safe_repr = SafeRepr()
        self.user_code: dict[types.CodeType, bool] = {}
        self.file_ids: dict[str, int] = {}
        self.frame_ids: dict[int, int] = {}  # id(frame) -> fid (frames are kept alive in live_frames)
        self.live_frames: dict[int, types.FrameType] = {}
        self.frame_cache: dict[int, tuple] = {}  # fid -> (keys, ids, immutable, lid, f_lasti)
        self.locals_ids: dict[str, int] = {}
        self.routine_types: dict[type, bool] = {}
        self.repr_cache: dict[tuple, str] = {}
        self.return_lines: dict[types.CodeType, frozenset[int]] = {}
        self.next_fid = 0
        self.limit_hit = False
        self.current_exc: BaseException | None = None
        self.exc_frames: dict[int, tuple[int, types.FrameType]] = {}
        # caller fid -> {func name: (event index, value, repr at return)}: mutable return values whose
        # repr is taken again where debugpy would show them (see ``return_updates``)
        self.pending: dict[int, dict[str, tuple[int, object, str]]] = {}

    # ---- output -------------------------------------------------------------------------
    def emit(self, record: list) -> None:
        self.buffer.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        if len(self.buffer) >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        if self.buffer:
            self.out.write("\n".join(self.buffer) + "\n")
            self.out.flush()
            self.buffer.clear()

    # ---- classification ----------------------------------------------------------------
    def is_user(self, code: types.CodeType) -> bool:
        known = self.user_code.get(code)
        if known is None:
            filename = code.co_filename
            if filename.startswith("<") or not filename:
                known = False
            else:
                path = os.path.realpath(filename)
                known = path == self.program or (
                    path.startswith(self.folder + os.sep)
                    and path != self.runner_file
                    and not any(path.startswith(d + os.sep) for d in self.exclude)
                    and "site-packages" not in path
                )
            self.user_code[code] = known
        return known

    def file_id(self, filename: str) -> int:
        fid = self.file_ids.get(filename)
        if fid is None:
            fid = self.file_ids[filename] = len(self.file_ids)
            path = os.path.realpath(filename)
            self.emit(["F", fid, None if path == self.program else path])
        return fid

    def is_routine(self, value: object) -> bool:
        t = type(value)
        known = self.routine_types.get(t)
        if known is None:
            known = is_routine_value(value)
            if t is not type and not isinstance(value, type):
                self.routine_types[t] = known
        return known

    def value_repr(self, value: object) -> str:
        t = type(value)
        if t is int or t is str or t is bool or t is float:
            key = (t, value)
            text = self.repr_cache.get(key)
            if text is None:
                text = self.safe_repr(value)
                if len(self.repr_cache) < 100_000:
                    self.repr_cache[key] = text
            return text
        return self.safe_repr(value)

    # ---- snapshots ---------------------------------------------------------------------
    def plain_items(self, frame: types.FrameType) -> list[tuple[str, object]]:
        """The frame's locals debugpy lists inline (pydevd's ``get_var_scope``): dunders (``__x__``)
        go to "special variables"; other ``_x`` / ``x__`` names are "protected variables", shown
        inline, hidden only by the type of their value (like the debugpy recorder); the rest is hidden
        when it is a function, class or module."""
        items = []
        for name, value in frame.f_locals.items():
            if not hidden_local(name, value, self.is_routine):
                items.append((name, value))
        return items

    def locals_id(self, fid: int, frame: types.FrameType) -> int:
        items = self.plain_items(frame)
        keys = tuple(name for name, _ in items)
        ids = tuple(id(v) for _, v in items)
        cached = self.frame_cache.get(fid)
        if cached is not None and cached[0] == keys and cached[1] == ids and cached[2]:
            self.frame_cache[fid] = (keys, ids, True, cached[3], frame.f_lasti)
            return cached[3]
        immutable = all(is_immutable(v) for _, v in items)
        shown = {name: self.value_repr(v) for name, v in sorted(items, key=_sort_key)}
        text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
        lid = self.locals_ids.get(text)
        if lid is None:
            lid = self.locals_ids[text] = len(self.locals_ids)
            self.emit(["L", lid, shown])
        self.frame_cache[fid] = (keys, ids, immutable, lid, frame.f_lasti)
        return lid

    def stack(self, frame: types.FrameType | None) -> list[list[int]]:
        """``[[fid, line, lid], ...]`` for the user frames from ``frame`` outwards."""
        out = []
        top = True
        cache = self.frame_cache
        while frame is not None:
            fid = self.frame_ids.get(id(frame))
            if fid is not None and self.live_frames.get(fid) is frame:
                cached = None if top else cache.get(fid)
                code = frame.f_code
                if (cached is not None and cached[2] and cached[4] == frame.f_lasti
                        and code.co_flags & CO_NEWLOCALS and not code.co_cellvars):
                    # a waiting function frame that ran no bytecode since its snapshot and holds only
                    # immutable values, with no cells a callee could rebind: its locals are unchanged
                    lid = cached[3]
                else:
                    lid = self.locals_id(fid, frame)
                out.append([fid, frame.f_lineno or 0, lid])
                top = False
            frame = frame.f_back
        return out

    # ---- events ------------------------------------------------------------------------
    def fid_of(self, frame: types.FrameType, lib: bool) -> int:
        fid = self.frame_ids.get(id(frame))
        if fid is not None and self.live_frames.get(fid) is frame:
            return fid
        fid = self.next_fid
        self.next_fid += 1
        self.frame_ids[id(frame)] = fid
        self.live_frames[fid] = frame
        code = frame.f_code
        back = frame.f_back
        parent = None
        direct = False
        b = back
        while b is not None:
            pfid = self.frame_ids.get(id(b))
            if pfid is not None and self.live_frames.get(pfid) is b:
                parent = pfid
                direct = b is back
                break
            b = b.f_back
        flags = 0
        if code.co_flags & 0xA0:
            flags |= 1  # generator / coroutine
        if lib:
            flags |= 2
        if code.co_flags & 0x80:
            flags |= 4  # coroutine (async def)
        file_id = -1 if lib else self.file_id(code.co_filename)
        self.emit(["N", fid, code.co_name, parent, 1 if direct else 0, flags, file_id, code.co_firstlineno])
        return fid

    def record(self, kind: str, fid: int, frame: types.FrameType, stack_from, extra: list | None = None) -> None:
        """One event: ``[kind, fid, line, stack-or-null, stdout-since-last-event, extra?]``."""
        self.n_events += 1
        if self.n_events > self.max_events:
            self.limit_hit = True
            raise EventLimit()
        out = self.stdout.take() if self.stdout.parts else ""
        rec = [kind, fid, frame.f_lineno or 0, None if stack_from is None else self.stack(stack_from), out]
        if extra is not None:
            rec.append(extra)
        self.emit(rec)

    def global_trace(self, frame: types.FrameType, event: str, arg):
        if event != "call":
            return None
        code = frame.f_code
        if self.is_user(code):
            fid = self.fid_of(frame, lib=False)
            self.record("c", fid, frame, None)
            return self.local_trace
        filename = code.co_filename
        if filename == self.runner_file or filename == __file__ or filename.startswith("<"):
            return None  # our own frames; frozen/generated code (importlib) that pydevd never traces
        back = frame.f_back
        if back is not None and self.is_user(back.f_code):
            if os.path.basename(filename) in PYDEVD_NEVER_TRACED:
                return None  # not even a (return) value: pydevd skips these files whatever the step
            fid = self.fid_of(frame, lib=True)
            self.record("c", fid, frame, None)
            return self.lib_trace
        return None

    def local_trace(self, frame: types.FrameType, event: str, arg):
        fid = self.frame_ids[id(frame)]
        if event == "line":
            if self.pending and fid in self.pending:
                self.record("l", fid, frame, frame, self.return_updates(self.pending.pop(fid)))
            else:
                self.record("l", fid, frame, frame)
        elif event == "return":
            self.record_return(fid, frame, arg)
        elif event == "exception":
            exc_type, exc, _tb = arg
            if exc_type in (EventLimit, OutputLimit):
                return self.local_trace
            if exc is not self.current_exc:
                self.current_exc = exc
                self.exc_frames = {}
            self.exc_frames[id(frame)] = (fid, frame)
            self.record("x", fid, frame, None, [exc_type.__qualname__, _safe_str(exc)])
        return self.local_trace

    def lib_trace(self, frame: types.FrameType, event: str, arg):
        if event == "return":
            self.record_return(self.frame_ids[id(frame)], frame, arg)
        return self.lib_trace

    def record_return(self, fid: int, frame: types.FrameType, value: object) -> None:
        """The ``r`` event: extra ``[display name (``Cls.meth`` for methods, like pydevd), value repr,
        at a return line, the caller (first stack entry) is f_back, updates]``. A mutable value is kept
        until the caller's next line event, where its repr is taken again (debugpy shows it at the stop)."""
        code = frame.f_code
        name = _func_name(code, frame)
        rl = self.return_lines.get(code)
        if rl is None:
            rl = self.return_lines[code] = return_lines(code)
        at_return_line = (frame.f_lineno or 0) in rl
        text = self.value_repr(value)
        self.n_events += 1
        if self.n_events > self.max_events:
            self.limit_hit = True
            raise EventLimit()
        back = frame.f_back
        stack = self.stack(back)
        caller = stack[0][0] if stack else None
        direct = 1 if caller is not None and self.live_frames.get(caller) is back else 0
        waiting = self.pending.get(caller) if caller is not None else None
        updates = self.return_updates(waiting) if waiting else []
        out = self.stdout.take() if self.stdout.parts else ""
        self.emit(["r", fid, frame.f_lineno or 0, stack, out, [name, text, 1 if at_return_line else 0, direct, updates]])
        if caller is not None and not is_immutable(value):
            self.pending.setdefault(caller, {})[name] = (self.n_events - 1, value, text)
        self.finish_frame(fid, frame)

    def return_updates(self, waiting: dict[str, tuple[int, object, str]]) -> list[list]:
        """``[[event index, repr now], ...]`` for the waiting return values whose repr changed since their return."""
        updates = []
        for index, value, text in waiting.values():
            now = self.value_repr(value)
            if now != text:
                updates.append([index, now])
        return updates

    def finish_frame(self, fid: int, frame: types.FrameType) -> None:
        if frame.f_code.co_flags & 0xA0:
            # a generator frame that yields stays alive; it is finished when it is collected
            if frame.f_lasti >= 0 and not _generator_done(frame):
                return
        self.live_frames.pop(fid, None)
        self.frame_ids.pop(id(frame), None)
        self.frame_cache.pop(fid, None)
        self.pending.pop(fid, None)


def is_routine_value(value: object) -> bool:
    """Whether debugpy files `value` under its hidden groups: a routine, a method wrapper, a module or a class."""
    try:
        return inspect.isroutine(value) or isinstance(value, (types.MethodWrapperType, types.ModuleType)) or inspect.isclass(value)
    except Exception:
        return False


def hidden_local(name: str, value: object, is_routine: Callable[[object], bool] = is_routine_value) -> bool:
    """Whether a frame's local `name` bound to `value` is left out of the shown locals, as debugpy leaves it out:
    dunders; a ``_``-name whose type is a module, function, class or method; any other name bound to a routine,
    module or class (`is_routine`)."""
    if name.startswith("_") or name.endswith("__"):
        if (name.startswith("__") and name.endswith("__")) or name == "_pydev_stop_at_break":
            return True
        return _type_name(value) in HIDDEN_TYPE_NAMES
    return is_routine(value)


def _type_name(value: object) -> str:
    """The DAP ``type`` pydevd gives a value (``value.__class__.__name__``)."""
    try:
        return value.__class__.__name__
    except Exception:
        return type(value).__name__


def _sort_key(item: tuple[str, object]) -> tuple[int, str]:
    """pydevd's ``sorted_attributes_key`` on a (name, value) pair: plain names, then ``_x``, then ``__x``."""
    name = item[0]
    if name.startswith("__"):
        return (3, name) if name.endswith("__") else (2, name)
    return (1, name) if name.startswith("_") else (0, name)


def _generator_done(frame: types.FrameType) -> bool:
    """Best effort: a generator frame returned for good (not suspended at a yield)."""
    try:
        code = frame.f_code.co_code
        op = code[frame.f_lasti]
        return dis.opname[op] != "YIELD_VALUE"
    except Exception:
        return True


def _safe_str(exc: object) -> str:
    try:
        return str(exc)
    except Exception:
        return "<str raised>"


def _func_name(code: types.CodeType, frame: types.FrameType) -> str:
    """pydevd's ``get_func_name``: ``Class.method`` when the first argument's class owns this code."""
    func_name = code.co_name
    try:
        if code.co_varnames:
            first = code.co_varnames[0]
            f_locals = frame.f_locals
            if first in f_locals:
                obj = f_locals[first]
                cls = obj if inspect.isclass(obj) else getattr(obj, "__class__", type(obj))
                if hasattr(cls, func_name):
                    method = getattr(cls, func_name)
                    if getattr(method, "__code__", None) == code:
                        return "%s.%s" % (cls.__name__, func_name)
    except Exception:
        pass
    return func_name


def forbid_processes() -> None:
    """Process creation raises PermissionError (a fork-bomb guard that also holds for root)."""

    def refuse(*_args, **_kwargs):
        raise PermissionError("creating processes is not allowed in the tracegen sandbox")

    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnl", "spawnle"):
        if hasattr(os, name):
            setattr(os, name, refuse)
    try:
        import _posixsubprocess

        _posixsubprocess.fork_exec = refuse
    except ImportError:
        pass


def _exit_status(code: object) -> int:
    """The process exit status of ``sys.exit(code)``: None is 0, an int is taken modulo 256, anything else is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    return 1


def _hard_exit(tracer: "Tracer", real_stdout: Any, real_exit: Callable[[int], Any]) -> Callable[[int], Any]:
    """A stand-in for ``os._exit`` while the program runs: it ends the trace with the exit status
    (debugpy shows ``exited`` with that code and no stop), then leaves at once as the real one does
    (no ``finally`` blocks, no atexit), with status 0 so the parent reads a finished trace."""

    def exit_now(status: int) -> None:
        if not isinstance(status, int):
            real_exit(status)  # raises TypeError as the real one does
        sys.settrace(None)
        sys.stdout = real_stdout
        tracer.emit(["E", "exit", int(status) & 0xFF, None, [], tracer.stdout.take()])
        tracer.flush()
        sys.stderr.flush()
        real_exit(0)

    return exit_now


def _uncaught_stack(tracer: "Tracer", exc: BaseException) -> list:
    """The traceback's user frames, innermost first: ``[frame id, line, locals id]`` each."""
    tb = exc.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    stack = []
    known = tracer.exc_frames if exc is tracer.current_exc else {}
    for t in reversed(frames):
        entry = known.get(id(t.tb_frame))
        if entry is not None and entry[1] is t.tb_frame:
            stack.append([entry[0], t.tb_lineno, tracer.locals_id(entry[0], t.tb_frame)])
    return stack


def run(program: str, out_path: str, argv: list[str], max_events: int, max_stdout: int, cwd: str | None) -> int:
    """Run the program, write the trace to ``out_path``; returns the exit code for this process."""
    with open(out_path, "w", encoding="utf-8") as out:
        tracer = Tracer(program, out, max_events, max_stdout)
        with open(program, "rb") as f:
            source = f.read()  # bytes: compile() honours a coding declaration and a byte-order mark
        tracer.emit(["P", tracer.program])
        if cwd:
            os.chdir(cwd)
        sys.path.insert(0, os.path.dirname(tracer.program))
        sys.argv = [program, *argv]
        main = types.ModuleType("__main__")
        main.__dict__.update({"__file__": program, "__builtins__": __builtins__, "__cached__": None})
        sys.modules["__main__"] = main
        real_stdout = sys.stdout
        sys.stdout = tracer.stdout
        status: list = ["exit", 0]
        try:
            code = compile(source, program, "exec")
        except SyntaxError as exc:
            sys.stdout = real_stdout
            tracer.emit(["E", "syntax", 1, ["SyntaxError", str(exc)], [], ""])
            tracer.flush()
            return 0
        real_exit = os._exit
        os._exit = _hard_exit(tracer, real_stdout, real_exit)
        try:
            sys.settrace(tracer.global_trace)
            try:
                exec(code, main.__dict__)
            finally:
                sys.settrace(None)
        except EventLimit:
            status = ["limit", None, ["EventLimit", f"more than {max_events} events"], []]
        except OutputLimit:
            status = ["limit", None, ["OutputLimit", f"more than {max_stdout} characters of stdout"], []]
        except SystemExit as exc:
            code_ = exc.code
            if code_ is not None and not isinstance(code_, int):
                sys.stderr.write(str(code_) + "\n")
            if code_ in (0, None):
                status = ["exit", 0]
            else:  # debugpy stops on it like on an uncaught exception (it ignores only codes 0 and None)
                status = ["uncaught", _exit_status(code_), ["SystemExit", _safe_str(exc)], _uncaught_stack(tracer, exc)]
        except MemoryError:
            status = ["limit", None, ["MemoryError", "the memory limit was reached"], []]
        except BaseException as exc:  # noqa: BLE001 - the program's uncaught exception
            status = ["uncaught", 1, [type(exc).__qualname__, _safe_str(exc)], _uncaught_stack(tracer, exc)]
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
        finally:
            sys.settrace(None)
            sys.stdout = real_stdout
            os._exit = real_exit
        tail = tracer.stdout.take()
        if status[0] == "exit":
            tracer.emit(["E", "exit", status[1], None, [], tail])
        else:
            tracer.emit(["E", status[0], status[1], status[2], status[3], tail])
        tracer.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Trace one Python program (tracegen child runner).")
    parser.add_argument("--program", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--max-events", type=int, default=200_000)
    parser.add_argument("--max-stdout", type=int, default=1_000_000)
    parser.add_argument("--cwd", default=None)
    parser.add_argument("--no-fork", action="store_true", help="make os.fork, subprocess and os.system raise PermissionError")
    parser.add_argument("args", nargs="*")
    ns = parser.parse_args(argv)
    if ns.no_fork:
        forbid_processes()
    return run(ns.program, ns.out, ns.args, ns.max_events, ns.max_stdout, ns.cwd)


if __name__ == "__main__":
    sys.exit(main())
