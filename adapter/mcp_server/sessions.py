"""The open debugging sessions of one MCP server: isolated, bounded in number, reaped when idle.

Each `OpenSession` owns its own `DebugSession` (its own model and KV cache), the breakpoints, the
trail of (action, stop) the agent saw (what `verify` replays), and a lock: two calls on one session
run one after the other, calls on two sessions run side by side (the SDK runs each tool in a worker
thread). `SessionRegistry` hands out ids, refuses a session past `max_sessions`, and closes sessions
idle for more than `idle_seconds` (at every call and from a periodic reaper).
"""
from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from adapter.launch_config import Program
from model.session_api import DebugSession
from protocol.debugger import Action, State

BUSY_WAIT_S = 600.0  # a call waits this long for another call on the same session to finish


class RegistryError(Exception):
    """No such session, or no room for another; the message says what to do."""


@dataclass
class OpenSession:
    """One agent's debugging session (see the module docstring)."""

    session_id: str
    backend: str  # neural | debugpy | compare
    program: Program
    session: DebugSession
    breakpoints: list[int] = field(default_factory=list)
    file_breakpoints: dict[str, list[int]] = field(default_factory=dict)  # other user file (as given) -> lines
    trail: list[tuple[Action | None, State]] = field(default_factory=list)  # the stops shown, each after its action
    edited: set[int] = field(default_factory=set)  # indexes in `trail` of stops the agent edited (set_variable)
    replayable: bool = True  # False once a step back went before the first stop (the trail no longer starts at the entry)
    comparer: Any = None  # adapter.compare.LockstepComparer for backend "compare"
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_used: float = field(default_factory=time.monotonic)

    def close(self) -> None:
        for closing in (self.session.close, getattr(self.comparer, "close", None)):
            if closing is not None:
                try:
                    closing()
                except Exception:  # noqa: BLE001 - closing must never fail the call that ends a session
                    pass


class SessionRegistry:
    """Open sessions by id; at most `max_sessions`, each closed after `idle_seconds` without a call."""

    def __init__(self, max_sessions: int = 4, idle_seconds: float = 900.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_sessions = max(1, int(max_sessions))
        self.idle_seconds = float(idle_seconds)
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, OpenSession] = {}
        self._opening = 0  # sessions being opened (their slot is taken before the slow model load)

    def open(self, make: Callable[[str], OpenSession]) -> OpenSession:
        """Reserve a slot, build the session with `make(session_id)` (slow: loads a model), and register it."""
        self.reap()
        with self._lock:
            if len(self._sessions) + self._opening >= self.max_sessions:
                raise RegistryError(f"{self.max_sessions} sessions are open already (the server's limit): end one with end_session, "
                                    f"or wait: a session idle for {self.idle_seconds:g} s is ended")  # fmt: skip
            self._opening += 1
            session_id = secrets.token_hex(4)
            while session_id in self._sessions:
                session_id = secrets.token_hex(4)
        try:
            opened = make(session_id)
        finally:
            with self._lock:
                self._opening -= 1
        opened.last_used = self._clock()
        with self._lock:
            self._sessions[session_id] = opened
        return opened

    @contextmanager
    def use(self, session_id: str) -> Iterator[OpenSession]:
        """The session `session_id`, held for this call alone."""
        self.reap()
        with self._lock:
            opened = self._sessions.get(session_id)
        if opened is None:
            raise RegistryError(self._unknown(session_id))
        if not opened.lock.acquire(timeout=BUSY_WAIT_S):
            raise RegistryError(f"session {session_id} is busy with another call; try again")
        try:
            if self._sessions.get(session_id) is not opened:
                raise RegistryError(self._unknown(session_id))
            yield opened
        finally:
            opened.last_used = self._clock()
            opened.lock.release()

    def end(self, session_id: str) -> None:
        with self._lock:
            opened = self._sessions.pop(session_id, None)
        if opened is None:
            raise RegistryError(self._unknown(session_id))
        with opened.lock:
            opened.close()

    def reap(self) -> list[str]:
        """Close the sessions idle for more than `idle_seconds` (not one in use); their ids."""
        now = self._clock()
        reaped: list[OpenSession] = []
        with self._lock:
            for session_id, opened in list(self._sessions.items()):
                if now - opened.last_used > self.idle_seconds and opened.lock.acquire(blocking=False):
                    del self._sessions[session_id]
                    reaped.append(opened)
        for opened in reaped:
            opened.close()
            opened.lock.release()
        return [o.session_id for o in reaped]

    def close_all(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for opened in sessions:
            opened.close()

    @property
    def ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def _unknown(self, session_id: str) -> str:
        return (f"no session {session_id!r}: start one with start_session (open: {', '.join(self.ids) or 'none'}; "
                f"a session idle for {self.idle_seconds:g} s is ended)")  # fmt: skip
