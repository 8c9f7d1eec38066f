"""Which recorded programs are good training data.

`rejection(trace, kind, policy)` returns why a program's recorded run is not usable (or None):
it must end (no limit hit, not killed), CruxEval-style functions must end normally (others may
end with an uncaught exception, which is part of what the model learns), the number of stops
(line events in the program's own frames) must be within bounds, every repr must be short, and
by default no value may show as a default ``<... object at 0x...>`` repr (a class without a
readable ``__repr__``) except in `OBJECT_REPR_KINDS` (everyday programs and whole modules run by a
driver, whose objects users see so); the globals of another user file's module body (an import) are
not checked. Whole modules run by a driver get wider bounds (`bounds_for`).
`same_run(a, b)` compares two recordings of the same program, for the
determinism check of sources that are not deterministic by construction (files, doctests).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from protocol.debugger import Ending, normalize_repr
from tracegen.trace import LINE, ProgramTrace

# kinds whose programs show user objects as debugpy does, ``<__main__.Item object at 0x?>``, on purpose
OBJECT_REPR_KINDS = frozenset({"everyday", "driven"})
# whole standard-library modules run by a driver (`tracegen.sources.DrivenModuleSource`): the main file steps
# through every top-level statement of the module and holds its tables, as the realworld evaluation's do
WHOLE_MODULE_KINDS = frozenset({"driven"})
# a user class without a readable __repr__ (iterators such as `.0` in comprehensions are fine)
DEFAULT_OBJECT_REPR = re.compile(r"<__main__\.[\w.]+ object at 0x[0-9a-fA-F]+>")


@dataclass(frozen=True)
class FilterPolicy:
    """Bounds a recorded program must meet. `cpu_seconds` is the recorder's CPU limit (the
    "finishes in under 2 s" rule); `max_events` caps the trace so that runaway programs stop early."""

    min_stops: int = 3
    max_stops: int = 300
    max_repr: int = 300
    max_stdout: int = 4000
    cpu_seconds: int = 2
    wall_seconds: float = 15.0
    max_events: int = 5000
    reject_object_reprs: bool = True


def count_stops(trace: ProgramTrace) -> int:
    """Line events in the program's own frames: the stops a stepIn-only session would make."""
    return sum(1 for e in trace.events if e.kind == LINE and trace.frames[e.fid].file is None)


def import_time_tables(trace: ProgramTrace) -> set[int]:
    """Locals tables shown only while another user file is being imported: its module body's globals
    and what its class bodies and the functions they call hold (a package's tables, sentinels, hashes
    of objects), which the repr and determinism checks leave out: the prompt cuts long values, and what
    the checks guard is the computation the program asks for."""
    importing: set[int] = set()
    elsewhere: set[int] = set()
    for e in trace.events:
        stack = e.stack or ()
        depth = max((i for i, (fid, _line, _lid) in enumerate(stack)
                     if trace.frames[fid].file is not None and trace.frames[fid].name == "<module>"), default=-1)
        for i, (_fid, _line, lid) in enumerate(stack):
            (importing if i <= depth else elsewhere).add(lid)
    return importing - elsewhere


def _all_reprs(trace: ProgramTrace):  # noqa: ANN202 - a generator of str
    skip = import_time_tables(trace)
    for lid, table in enumerate(trace.locals_table):
        if lid not in skip:
            yield from table.values()
    for e in trace.events:
        if e.ret_value is not None:
            yield e.ret_value


def rejection(trace: ProgramTrace, kind: str, policy: FilterPolicy = FilterPolicy()) -> str | None:
    """Why this recorded run is not kept (a short reason used as a counter key), or None to keep it."""
    end = trace.end
    if end.ending is Ending.NEVER:
        return f"never ended ({end.how})"
    if end.how == "syntax":
        return "syntax error"
    if end.ending is Ending.ERROR and kind == "crux":
        return "crux function raised"
    exits_early = end.exception is not None and end.exception[0] == "SystemExit"  # sys.exit(code != 0)
    if end.ending is Ending.ERROR and (end.how != "uncaught" or exits_early):
        return "exit code not zero"
    policy = bounds_for(kind, policy)
    stops = count_stops(trace)
    if stops < policy.min_stops:
        return "too few stops"
    if stops > policy.max_stops:
        return "too many stops"
    total_out = sum(len(e.stdout) for e in trace.events) + len(end.stdout)
    if total_out > policy.max_stdout:
        return "too much output"
    for text in _all_reprs(trace):
        if len(text) > policy.max_repr:
            return "repr too long"
    if policy.reject_object_reprs and kind not in OBJECT_REPR_KINDS and _default_repr_outside_init(trace):
        return "default object repr"
    return None


def bounds_for(kind: str, policy: FilterPolicy) -> FilterPolicy:
    """`policy` for programs of `kind`: ten times the stops and values up to 1,000 characters for
    `WHOLE_MODULE_KINDS` (the trajectories are still cut at the dataset's ``max_steps`` actions)."""
    if kind in WHOLE_MODULE_KINDS:
        return replace(policy, max_stops=policy.max_stops * 10, max_repr=max(policy.max_repr, 1000))
    return policy


def _default_repr_outside_init(trace: ProgramTrace) -> bool:
    """A default ``<__main__.C object at 0x..>`` shown anywhere but in an ``__init__`` frame (where
    a half-built object's ``__repr__`` fails, exactly as debugpy shows it)."""
    suspicious = {lid for lid, table in enumerate(trace.locals_table) if any(DEFAULT_OBJECT_REPR.search(v) for v in table.values())}
    if any(e.ret_value is not None and DEFAULT_OBJECT_REPR.search(e.ret_value) for e in trace.events):
        return True
    if not suspicious:
        return False
    for e in trace.events:
        for fid, _line, lid in e.stack or ():
            if lid in suspicious and trace.frames[fid].name != "__init__":
                return True
    return False


def _fingerprint(trace: ProgramTrace) -> tuple:
    events = tuple((e.kind, trace.frames[e.fid].name, e.line, normalize_repr(e.stdout), e.ret_value and normalize_repr(e.ret_value))
                   for e in trace.events)
    skip = import_time_tables(trace)
    tables = tuple(tuple(sorted((k, normalize_repr(v)) for k, v in t.items())) for lid, t in enumerate(trace.locals_table) if lid not in skip)
    return events, tables, trace.end.ending, trace.end.exit_code, normalize_repr(trace.end.stdout)


def same_run(a: ProgramTrace, b: ProgramTrace) -> bool:
    """True when two recordings show the same events, values (addresses aside) and ending."""
    return _fingerprint(a) == _fingerprint(b)
