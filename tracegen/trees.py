"""The paper's state trees over one recorded run.

Forward tree (`ForwardTree`): the root is the first stop; a node's children are the stops each
forward action leads to (built lazily, since a stop's locals depend on the path that reached it:
debugpy's ``(return)`` entries). Nodes hold a forked `ReplaySession`, so expanding is a replay from
that stop, never a rerun of the program.

Inverse tree (`InverseChain`): built on the *step-into chain*, the stops of repeated ``stepIn`` from
the entry (every line the program runs and every return to a caller). From a chain state:

- ``inv_step_into``: the previous chain state (the one ``stepIn`` came from);
- ``inv_step_over``: the latest earlier chain state from which ``next`` lands on this one;
- ``inv_step_call``: the first stop inside the current function's frame (its first body line),
  where the arguments are visible: the state CruxEval-I asks to predict from a later one. On the
  calling line just after a return (return value shown), it is the first stop of the call that
  returned: from ``result = f(...)`` with ``(return) f`` to f's arguments.
An inverse action with no answer (e.g. ``inv_step_call`` at module level) is not available.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from protocol.debugger import Action, ActionKind, State
from tracegen.fast import ReplaySession
from tracegen.trace import ProgramTrace

INVERSE_KINDS = (ActionKind.INV_STEP_INTO, ActionKind.INV_STEP_OVER, ActionKind.INV_STEP_CALL)


@dataclass
class Node:
    """One stop of the forward tree: its state, the session there, and children by action text."""

    id: int
    state: State
    session: ReplaySession
    parent: int | None = None
    action: Action | None = None
    children: dict[str, int] = field(default_factory=dict)


class ForwardTree:
    """Forward state tree of one trace, expanded on demand (`child`)."""

    def __init__(self, trace: ProgramTrace, breakpoints: tuple[int, ...] = (), stop_on_entry: bool = True) -> None:
        session = ReplaySession(trace, breakpoints, stop_on_entry)
        state = session.start()
        self.trace = trace
        self.nodes: list[Node] = [Node(0, state, session)]

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def child(self, node: Node, action: Action) -> Node | None:
        """The stop ``action`` leads to from ``node`` (None when ``node`` is the end)."""
        if node.state.finished:
            return None
        key = str(action)
        if key in node.children:
            return self.nodes[node.children[key]]
        session = node.session.fork()
        state = session.step(action)
        new = Node(len(self.nodes), state, session, node.id, action)
        self.nodes.append(new)
        node.children[key] = new.id
        return new

    def expand(self, node: Node, actions: list[Action]) -> list[Node]:
        """All children of ``node`` for the given actions (skipping none; the end has none)."""
        return [c for a in actions if (c := self.child(node, a)) is not None]


class InverseChain:
    """The step-into chain of a trace and the inverse actions over it (see the module docstring)."""

    def __init__(self, trace: ProgramTrace, max_states: int = 5000) -> None:
        self.trace = trace
        session = ReplaySession(trace)
        self.states: list[State] = [session.start()]
        self.sessions: list[ReplaySession] = [session.fork()]
        self.positions: list[int] = [session.position]
        while not self.states[-1].finished and len(self.states) < max_states:
            self.states.append(session.step(Action(kind=ActionKind.STEP_INTO)))
            self.positions.append(session.position)
            self.sessions.append(session.fork())
        self.index_of = {pos: k for k, pos in enumerate(self.positions)}
        self._over: dict[int, int | None] = {}
        self._stacks: dict[int, tuple[int, ...]] = {}

    def __len__(self) -> int:
        return len(self.states)

    def inverse(self, k: int, kind: ActionKind) -> int | None:
        """The chain index an inverse action leads to from chain index ``k`` (None: not available)."""
        if kind is ActionKind.INV_STEP_INTO:
            return k - 1 if k > 0 else None
        if kind is ActionKind.INV_STEP_OVER:
            return self._inv_over(k)
        if kind is ActionKind.INV_STEP_CALL:
            return self._inv_call(k)
        raise ValueError(f"not an inverse action: {kind.value}")

    def available(self, k: int) -> list[ActionKind]:
        return [kind for kind in INVERSE_KINDS if self.inverse(k, kind) is not None]

    def _inv_over(self, k: int, window: int = 64) -> int | None:
        if k in self._over:
            return self._over[k]
        found = None
        target = self.positions[k]
        for j in range(k - 1, max(-1, k - 1 - window), -1):
            if self.states[j].finished:
                continue
            session = self.sessions[j].fork()
            session.step(Action(kind=ActionKind.STEP_OVER))
            if session.position == target and session.state == self.states[k]:
                found = j
                break
        self._over[k] = found
        return found

    def _stack(self, k: int) -> tuple[int, ...]:
        """Frame ids on the stack of chain state ``k``, innermost first (library frames left out)."""
        cached = self._stacks.get(k)
        if cached is None:
            pos = self.positions[k]
            events = self.trace.events
            stack = events[pos].stack if 0 <= pos < len(events) else self.trace.end.stack
            if self.states[k].finished:
                stack = ()
            frames = self.trace.frames
            cached = tuple(fid for fid, _line, _lid in (stack or ()) if not frames[fid].lib)
            self._stacks[k] = cached
        return cached

    def _inv_call(self, k: int) -> int | None:
        stack = self._stack(k)
        if not stack:
            return None
        fid = stack[0]
        returned = self.returned_frame(k)
        if returned is not None:  # just back on the calling line: the call that returned (CruxEval-I)
            fid, stack = returned, (returned,) + stack
        elif self.trace.frames[fid].parent is None:
            return None
        j = k
        while j > 0 and fid in self._stack(j - 1):
            j -= 1
        while j < k and self._stack(j)[0] != fid:
            j += 1
        return j if j < k else None

    def returned_frame(self, k: int) -> int | None:
        """The frame that just returned to chain state ``k`` (on the calling line, return value shown), else None."""
        if k == 0 or self.states[k].return_value is None:
            return None
        before, now = self._stack(k - 1), self._stack(k)
        if len(before) == len(now) + 1 and before[1:] == now:
            return before[0]
        return None
