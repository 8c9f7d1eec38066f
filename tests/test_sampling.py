"""Trees and trajectory sampling over one recorded trace."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from protocol.debugger import Action, ActionKind
from tracegen.fast import record_program
from tracegen.sampling import MIXED_POLICY, sample_trajectories
from tracegen.trees import ForwardTree, InverseChain

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="module")
def trace():
    return record_program(path=PROGRAMS / "check_run.py")


def test_forward_tree_children_by_action(trace):
    tree = ForwardTree(trace)
    into = tree.child(tree.root, Action(kind=ActionKind.STEP_INTO))
    cont = tree.child(tree.root, Action(kind=ActionKind.CONTINUE))
    assert into.state.location == [("<module>", 6)]
    assert cont.state.reason.value == "exception"
    assert tree.child(tree.root, Action(kind=ActionKind.STEP_INTO)) is into
    assert set(tree.root.children) == {"step_into", "continue"}


def test_inverse_chain_actions(trace):
    chain = InverseChain(trace)
    # chain index 8 is check:4 (v=1); its function's entry is check:2 at index 7
    assert chain.states[8].location[0] == ("check", 4)
    assert chain.inverse(8, ActionKind.INV_STEP_CALL) == 7
    assert chain.inverse(8, ActionKind.INV_STEP_INTO) == 7
    assert chain.inverse(10, ActionKind.INV_STEP_OVER) == 9  # run:8 <- next from run:10 (after the return)
    assert chain.inverse(2, ActionKind.INV_STEP_CALL) is None  # module level
    assert chain.inverse(0, ActionKind.INV_STEP_INTO) is None


def test_sampling_is_deterministic_and_mixes_policies(trace):
    a = sample_trajectories(trace, random.Random(7), 40, 25)
    b = sample_trajectories(trace, random.Random(7), 40, 25)
    assert [t.model_dump_json() for t in a] == [t.model_dump_json() for t in b]
    policies = {t.meta["policy"] for t in a}
    assert {"mixed", "steps", "inverse-uniform"} <= policies
    assert all(len(t.steps) <= 25 for t in a)
    for t in a:
        if t.direction == "inverse":
            assert all(s.action.kind.inverse for s in t.steps)
        elif t.meta["policy"] == "steps":
            assert {s.action.kind for s in t.steps} <= {ActionKind.STEP_INTO, ActionKind.STEP_OVER}
        else:
            assert {s.action.kind for s in t.steps} <= set(MIXED_POLICY)
            for s in t.steps:
                if s.action.kind is ActionKind.BREAKPOINT:
                    assert s.action.line in trace.executed_lines and s.action.source


def test_forward_trajectories_end_at_exit_when_long_enough(trace):
    trajs = sample_trajectories(trace, random.Random(3), 10, 500, inverse_fraction=0.0)
    assert all(t.steps[-1].state.finished and t.ending is not None for t in trajs)
