"""CruxEval-I posing of recorded inverse trajectories: the returned call's arguments hidden."""
from __future__ import annotations

import random

import pytest

from protocol.debugger import ActionKind
from tracegen.shards import read_shard
from tracegen.fast import record_program
from tracegen.posing import POSING, POSING_KEY, app, hide_call_arguments
from tracegen.sampling import sample_trajectories
from train.eval.cruxeval import HIDDEN_INPUT, program_text

PROGRAM = """\
def f(text, n=2):
    out = text * n
    return out.upper()

result = f('ab', n=3)
both = f('x') + f('y')
w = 'é' + f('ü', 1)
f()if False else None
"""
CALL_LINES = {5: "result = f(...)", 7: "w = 'é' + f(...)"}


@pytest.fixture(scope="module")
def trajectories():
    trace = record_program(PROGRAM)
    return sample_trajectories(trace, random.Random(3), 400, 8, inverse_fraction=1.0)


def _module_returns(trajectories):
    return [t for t in trajectories if t.initial.return_value is not None and len(t.initial.frames) == 1]


def test_hides_the_arguments_of_the_call_that_returned(trajectories):
    starts = _module_returns(trajectories)
    assert {t.initial.frames[0].line for t in starts} >= {5, 6, 7}
    hidden_lines = set()
    for traj in starts:
        line = traj.initial.frames[0].line
        hidden = hide_call_arguments(traj)
        if line == 6:  # two calls of f on the line: which one returned is not told by the text
            assert hidden is None
            continue
        assert hidden is not None and hidden.meta[POSING_KEY] == POSING
        hidden_lines.add(line)
        shown = hidden.program.splitlines()
        assert shown[line - 1] == CALL_LINES[line]
        assert [s for i, s in enumerate(shown) if i != line - 1] == [s for i, s in enumerate(PROGRAM.splitlines()) if i != line - 1]
        assert hidden.initial.frames[0].source == CALL_LINES[line]
        # states and actions are as recorded; only the calling line's text changes
        assert [s.action for s in hidden.steps] == [s.action for s in traj.steps]
        for before, after in zip([traj.initial, *[s.state for s in traj.steps]], [hidden.initial, *[s.state for s in hidden.steps]]):
            assert [(f.name, f.line, f.locals) for f in before.frames] == [(f.name, f.line, f.locals) for f in after.frames]
            assert before.return_value == after.return_value
            for frame in after.frames:
                if frame.name == "<module>" and frame.line == line:
                    assert frame.source == CALL_LINES[line]
    assert hidden_lines == {5, 7}


def test_the_first_inverse_call_reads_the_hidden_arguments(trajectories):
    calls = [t for t in _module_returns(trajectories)
             if t.initial.frames[0].line == 5 and t.steps[0].action.kind is ActionKind.INV_STEP_CALL]
    assert calls
    hidden = hide_call_arguments(calls[0])
    assert hidden is not None
    assert hidden.steps[0].state.frames[0].locals == {"text": "'ab'", "n": "3"}


def test_leaves_other_trajectories_alone(trajectories):
    others = [t for t in trajectories if t not in _module_returns(trajectories)]
    assert others and all(hide_call_arguments(t) is None for t in others)
    forward = sample_trajectories(record_program(PROGRAM), random.Random(1), 10, 8, inverse_fraction=0.0)
    assert all(hide_call_arguments(t) is None for t in forward)


def test_matches_cruxeval_input_posing():
    code = "def f(s):\n    return s[::-1]"
    trace = record_program(program_text(code, "'abc'"))
    trajs = sample_trajectories(trace, random.Random(0), 200, 4, inverse_fraction=1.0)
    hidden = [h for h in map(hide_call_arguments, _module_returns(trajs)) if h is not None]
    assert hidden
    assert all(h.program == program_text(code, HIDDEN_INPUT) for h in hidden)


def test_command_line_writes_shards(tmp_path, trajectories):
    from typer.testing import CliRunner

    source = tmp_path / "src"
    source.mkdir()
    (source / "shard-00000.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in trajectories))
    result = CliRunner().invoke(app, [str(source), "--out", str(tmp_path / "out"), "--shard-size", "7"])
    assert result.exit_code == 0, result.output
    written = [t for p in sorted((tmp_path / "out").glob("shard-*.jsonl")) for t in read_shard(p)]
    expected = [h for h in map(hide_call_arguments, trajectories) if h is not None]
    assert [t.model_dump_json() for t in written] == [t.model_dump_json() for t in expected]
    assert len(list((tmp_path / "out").glob("shard-*.jsonl"))) == -(-len(expected) // 7)
    empty = CliRunner().invoke(app, [str(tmp_path / "missing"), "--out", str(tmp_path / "o2")])
    assert empty.exit_code == 2
