"""bench/bench_session.py's summary: Continue / Step Out arrivals are counted where debugpy stopped, until the first divergence."""
from __future__ import annotations

from bench.bench_session import Run, StepTime, summary


def _run(*steps: tuple[str, list | None]) -> Run:
    return Run(steps=[StepTime("p.py", i, request, 10.0 * (i + 1), stop) for i, (request, stop) in enumerate(steps)])


def test_coarse_requests_are_counted_until_the_first_divergence() -> None:
    a, b, c = ["step", "f", 2, 2], ["breakpoint", "g", 5, 3], ["step", "<module>", 9, 1]
    neural = [_run(("stepIn", a), ("continue", b), ("stepOut", a), ("continue", b)),  # the Step Out diverges: the last is not compared
              _run(("continue", c))]
    real = [_run(("stepIn", a), ("continue", b), ("stepOut", c), ("continue", b)), _run(("continue", c))]
    info = summary({"neural": neural, "debugpy": real})
    assert info["arrived"] == {"continue": {"same": 2, "compared": 2}, "stepOut": {"same": 0, "compared": 1}}
    assert (info["same_stops"], info["compared"]) == (3, 4)
