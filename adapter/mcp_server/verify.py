"""A session's stops replayed under the real recorder: the divergences between prediction and reality.

`verify_trail` RUNS the program (once, in tracegen's sandbox, through `model.oracle.OracleDebugger`,
whose stops are debugpy's: tests/test_parity.py) with the session's breakpoints, takes the same
actions the agent took, and compares each stop with `protocol.compare.compare_states`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from adapter.mcp_server.results import Divergence, Stop
from model.session_api import SessionError
from protocol.compare import compare_states, describe_diff
from protocol.debugger import Action, State


def verify_trail(program: str, path: str, trail: Sequence[tuple[Action | None, State]], breakpoints: Sequence[int],
                 file_breakpoints: dict[str, list[int]], edited: set[int], show: Callable[[State], Stop]) -> tuple[int, list[Divergence], str | None]:  # fmt: skip
    """(stops compared, divergences, note) for `trail` (the entry stop, then one stop per action)."""
    from model.oracle import OracleDebugger

    real_session = OracleDebugger(program, path, breakpoints=list(breakpoints))
    divergences: list[Divergence] = []
    notes: list[str] = []
    compared = 0
    try:
        for file, lines in file_breakpoints.items():
            real_session.set_file_breakpoints(file, lines)
        real = real_session.start()
        for index, (action, predicted) in enumerate(trail):
            if index > 0:
                if real.finished:
                    notes.append(f"the real program had ended before stop {index + 1}")
                    break
                assert action is not None
                real = real_session.step(action)
            compared += 1
            diff = compare_states(predicted, real)
            if not diff.matched:
                divergences.append(Divergence(stop=index + 1, action=None if action is None else str(action), fields=diff.mismatched_fields(),
                                              text=describe_diff(predicted, real, diff), real=show(real)))  # fmt: skip
    except SessionError as exc:
        notes.append(f"the recorder stopped: {exc}")
    finally:
        real_session.close()
    if edited:
        notes.append("stops " + ", ".join(str(i + 1) for i in sorted(edited)) + " were edited with set_variable: the real program did not see the edit")
    return compared, divergences, "; ".join(notes) or None
