"""Data breakpoints ("Break on Value Change"): stop where a watched value differs from the stop before.

A real Python debugger cannot offer them (debugpy#1291): it would have to trap every write. A
predicted session holds each state in hand, so Continue with data breakpoints set runs predicted
steps (stepIn, the finest stops there are) and compares each watched value (`adapter.watch`) with
its value at the previous stop. A change counts as a hit; the breakpoint's hit condition and
condition decide, as for line breakpoints (`adapter.conditions`), judged in the watched frame. Only
value changes (access type ``write``) can be watched: a state shows values, not reads.

A value that is not there (its frame not on the stack, the name not yet set) is no change: when the
frame comes back (a new call), the watch starts again from the value it then has.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from adapter.conditions import BreakpointRule, ConditionError, ConditionRaised, check_hit_condition, should_stop
from adapter.watch import WatchTarget
from protocol import dap
from protocol.debugger import State

DEFAULT_MAX_STEPS = 200  # predicted steps one Continue runs without a change before it stops anyway (launch: dataBreakpointSteps)


@dataclass
class DataBreakpoint:
    """One watched value: its target, its condition/hit count, and its value at the last stop seen."""

    id: int
    target: WatchTarget
    rule: BreakpointRule
    last: str | None = None


@dataclass(frozen=True)
class Change:
    """A watched value that changed between two stops and whose rule says stop."""

    breakpoint: DataBreakpoint
    old: str
    new: str
    frame_index: int

    def describe(self) -> str:
        return f"{self.breakpoint.target.where()}: {self.old} -> {self.new}"


@dataclass
class DataBreakpoints:
    """The data breakpoints of one connection (setDataBreakpoints replaces them all)."""

    items: list[DataBreakpoint] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # lines for the Debug Console (a condition that cannot be judged)
    _next_id: int = 1

    def replace(self, asked: list[dap.DataBreakpoint], state: State | None) -> list[dict]:
        """Set the breakpoints `asked` (armed with their values at `state`); DAP Breakpoint objects, in order."""
        kept: list[DataBreakpoint] = []
        result: list[dict] = []
        for bp in asked:
            try:
                target = WatchTarget.from_data_id(bp.data_id)
                if bp.access_type not in (None, "write"):
                    raise ValueError(f"only value changes can be watched (access type write), not {bp.access_type}: "
                                     "a predicted state shows values, not reads")
                if bp.hit_condition:
                    check_hit_condition(bp.hit_condition)
            except (ValueError, ConditionError) as exc:
                result.append({"verified": False, "message": str(exc)})
                continue
            item = DataBreakpoint(id=self._next_id, target=target,
                                  rule=BreakpointRule(0, bp.condition or None, bp.hit_condition or None))
            self._next_id += 1
            item.last = target.read(state) if state is not None else None
            kept.append(item)
            result.append({"id": item.id, "verified": True, "description": target.where()})
        self.items = kept
        return result

    def __bool__(self) -> bool:
        return bool(self.items)

    def arm(self, state: State) -> None:
        """Take each watched value at `state` as the one later stops are compared with."""
        for item in self.items:
            item.last = item.target.read(state)

    def changes(self, state: State) -> list[Change]:
        """The watched values that differ at `state` from the stop before and whose rule says stop.

        Every value is taken as the new reference, so each change is seen once.
        """
        found: list[Change] = []
        for item in self.items:
            old, new = item.last, item.target.read(state)
            item.last = new
            if old is None or new is None or old == new:
                continue
            index = item.target.frame_index(state)
            assert index is not None  # the value was read in it
            if self._stops(item, state, index):
                found.append(Change(item, old, new, index))
        return found

    def _stops(self, item: DataBreakpoint, state: State, index: int) -> bool:
        try:
            return should_stop(item.rule, state, index)
        except ConditionRaised as exc:
            if not item.rule.noted:
                item.rule.noted = True
                self.notes.append(f"the condition of the data breakpoint on {item.target.where()} raises ({exc}); "
                                  "not stopping there, as for a line breakpoint")
            return False
        except ConditionError as exc:
            self.notes.append(f"data breakpoint on {item.target.where()}: {exc}; stopping here")
            return True
