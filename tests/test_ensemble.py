"""Companion models (model.backends.ensemble): more checkpoints draw and score a call's arguments beside the session's model."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from model.backends.hf import HFBackend
from model.backends.ensemble import ENSEMBLE_FILE, Companions, EnsembleError, companion_folders, load_companions, named_companions, same_vocabulary
from model.session import NeuralDebugger
from model.session_api import SessionError
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason

from .conftest import build_tiny_checkpoint

PROGRAM = "def f(text):\n    return text.upper()\n\n\nresult = f('ab')\n"


@pytest.fixture(scope="module")
def companion_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second tiny checkpoint: the same tokenizer, other random weights."""
    return build_tiny_checkpoint(tmp_path_factory.mktemp("companion"), seed=1)


def _returned() -> State:
    frame = Frame(name="<module>", line=5, source="result = f('ab')", locals={})
    return State(reason=StopReason.STEP, frames=[frame], return_value=ReturnValue(name="f", value="'AB'"))


def _session(main: Path, companion: Path, **options: object) -> NeuralDebugger:
    backend = HFBackend(main)
    companions = load_companions([companion], backend.tokenizer).backends
    return NeuralDebugger(backend, backend.tokenizer, PROGRAM, max_state_tokens=64, companions=companions, **options)


def test_companions_draw_and_score_a_calls_arguments(tiny_checkpoint: Path, companion_checkpoint: Path) -> None:
    """After inv_step_call every answer's likelihood is the mean of both models' log-probabilities; only the session model's first answer is greedy."""
    session = _session(tiny_checkpoint, companion_checkpoint, call_candidates=3)
    session.start_from(_returned())
    state = session.step(Action(kind=ActionKind.INV_STEP_CALL))
    ranking = session.ranking
    assert 1 <= len(ranking) <= 6 and sum(c.greedy for _, c in ranking) <= 1
    assert len({c.text for _, c in ranking}) == len(ranking)
    companion = session.companions[0]
    assert companion._cached_ids, "the companion drew nothing"
    for _, candidate in ranking:
        assert candidate.likelihood <= 0
    assert state in [s for s, _ in ranking]


def test_the_likelihood_is_the_mean_under_all_models(tiny_checkpoint: Path, companion_checkpoint: Path) -> None:
    """The ranked likelihood of each answer equals the mean of `_score` under the session's model and the companion."""
    session = _session(tiny_checkpoint, companion_checkpoint, call_candidates=2)
    session.start_from(_returned())
    action = Action(kind=ActionKind.INV_STEP_CALL)
    prompt = session._prompt_ids(action)
    ranked = session.ranked_candidates(prompt, session.state, action, 2)
    assert ranked
    alone = NeuralDebugger(session.backend, session.tokenizer, PROGRAM, max_state_tokens=64)
    for record, candidate in ranked:
        own = session._score(session.backend, prompt, record.ids)
        other = session._score(session.companions[0], prompt, record.ids)
        assert own != pytest.approx(other, abs=1e-6)  # two different models
        assert candidate.likelihood == pytest.approx((own + other) / 2, abs=1e-4)
    alone.start_from(_returned())
    single = alone.ranked_candidates(alone._prompt_ids(action), alone.state, action, 2)
    assert len(single) <= len(ranked)
    assert {c.text for _, c in single} <= {c.text for _, c in ranked}  # the session model's own answers are among the ensemble's


def test_companions_stay_out_of_other_actions(tiny_checkpoint: Path, companion_checkpoint: Path) -> None:
    """Forward and coarse actions are ranked by the session's model alone: the companion runs nothing."""
    session = _session(tiny_checkpoint, companion_checkpoint, candidates=3, coarse_candidates=3, call_candidates=1)
    session.start()
    session.step(Action(kind=ActionKind.STEP_OVER))
    session.step(Action(kind=ActionKind.STEP_RETURN))
    assert session.companions[0]._cached_ids == []
    for _, candidate in session.ranking:
        assert candidate.likelihood <= 0


def test_a_checkpoint_names_its_companions(tmp_path: Path, tiny_checkpoint: Path) -> None:
    """ensemble.json's folders are found; a missing folder or an unreadable file is a problem line, never an exception."""
    main = tmp_path / "main"
    shutil.copytree(tiny_checkpoint, main)
    assert companion_folders(main) == Companions()  # no ensemble.json: none, no problem
    shutil.copytree(tiny_checkpoint, tmp_path / "other")
    (main / ENSEMBLE_FILE).write_text(json.dumps({"companions": ["../other"]}))
    assert companion_folders(main) == Companions(folders=[(tmp_path / "other").resolve()])
    (main / ENSEMBLE_FILE).write_text(json.dumps({"companions": ["../missing", "../other"]}))
    found = companion_folders(main)
    assert found.folders == [(tmp_path / "other").resolve()]
    assert len(found.problems) == 1 and "'../missing'" in found.problems[0] and "without it" in found.problems[0]
    for bad in ("{not json", json.dumps({"companions": "../other"}), json.dumps({"models": []}), "\udcff"):
        (main / ENSEMBLE_FILE).write_text(bad, errors="surrogateescape")
        found = companion_folders(main)
        assert found.folders == [] and len(found.problems) == 1 and found.problems[0].startswith("cannot read"), found


def test_a_companion_with_another_tokenizer_is_refused(tmp_path: Path, tiny_checkpoint: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(tiny_checkpoint, other)
    spec = json.loads((other / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    first, second = sorted(vocab, key=vocab.get)[300:302]
    vocab[first], vocab[second] = vocab[second], vocab[first]  # two ids swapped: the same tokens, other ids
    (other / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    main = HFBackend(tiny_checkpoint)
    assert same_vocabulary(main.tokenizer, HFBackend(tiny_checkpoint).tokenizer)
    with pytest.raises(EnsembleError, match="another tokenizer"):
        load_companions([other], main.tokenizer)
    with pytest.raises(EnsembleError, match="not a checkpoint folder"):
        load_companions([tmp_path / "nowhere"], main.tokenizer)
    lenient = load_companions([other, tmp_path / "nowhere", tiny_checkpoint], main.tokenizer, strict=False)
    assert lenient.folders == [tiny_checkpoint] and len(lenient.backends) == 1
    assert "another tokenizer" in lenient.problems[0] and "nowhere" in lenient.problems[1]
    (tmp_path / "main").mkdir()
    (tmp_path / "main" / ENSEMBLE_FILE).write_text(json.dumps({"companions": ["../other", "../gone"]}))
    named = named_companions(tmp_path / "main", main.tokenizer)  # both left out, each with its reason
    assert named.backends == [] and len(named.problems) == 2
    assert "'../gone'" in named.problems[0] and "another tokenizer" in named.problems[1]


def _problems(tmp_path: Path) -> Path:
    problem = {"id": "t0", "code": "def f(text):\n    return text.upper()", "input": "'ab'", "output": "'AB'"}
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(problem) + "\n")
    return path


def _cruxeval(tmp_path: Path, model: Path, name: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "neural_debugger_cli", "eval", "cruxeval", "--mode", "input", "--model", str(model), "--problems",
           str(_problems(tmp_path)), "--out", str(tmp_path / name), "--max-state-tokens", "24", "--call-candidates", "2", "--no-progress", *extra]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parent.parent)


@pytest.mark.slow
def test_eval_takes_the_checkpoints_companions_unless_told(tmp_path: Path, tiny_checkpoint: Path, companion_checkpoint: Path) -> None:
    """eval cruxeval: ensemble.json's companions by default, --solo none, --companion those given; the summary says which; a bad one is a clear error."""
    main = tmp_path / "main"
    shutil.copytree(tiny_checkpoint, main)
    (main / ENSEMBLE_FILE).write_text(json.dumps({"companions": [str(companion_checkpoint)]}))
    for name, extra, expected in (("default", (), [str(companion_checkpoint.resolve())]), ("solo", ("--solo",), []),
                                  ("given", ("--companion", str(tiny_checkpoint)), [str(tiny_checkpoint)])):  # fmt: skip
        done = _cruxeval(tmp_path, main, name, *extra)
        assert done.returncode == 0, done.stderr
        assert json.loads((tmp_path / name / "summary.json").read_text())["companions"] == expected
    (main / ENSEMBLE_FILE).write_text(json.dumps({"companions": ["../nowhere"]}))
    done = _cruxeval(tmp_path, main, "copied")  # a checkpoint copied without its companion: a warning, the model alone
    assert done.returncode == 0 and "warning:" in done.stderr and "nowhere" in done.stderr, done.stderr
    assert json.loads((tmp_path / "copied" / "summary.json").read_text())["companions"] == []
    done = _cruxeval(tmp_path, main, "bad", "--companion", str(tmp_path / "nowhere"))  # asked for by name: an error
    assert done.returncode == 2 and "nowhere" in done.stderr and "Traceback" not in done.stderr


def test_a_session_from_a_checkpoint_loads_its_companions(tmp_path: Path, tiny_checkpoint: Path, companion_checkpoint: Path) -> None:
    main = tmp_path / "main"
    shutil.copytree(tiny_checkpoint, main)
    assert NeuralDebugger.from_checkpoint(main, PROGRAM).companions == []
    (main / ENSEMBLE_FILE).write_text(json.dumps({"companions": [str(companion_checkpoint)]}))
    assert len(NeuralDebugger.from_checkpoint(main, PROGRAM).companions) == 1
    assert NeuralDebugger.from_checkpoint(main, PROGRAM, companions=()).companions == []
    assert NeuralDebugger.from_checkpoint(main, PROGRAM).notices == []
    for text in ("[", json.dumps({"companions": ["../gone"]})):  # unreadable, or a companion not copied along: the model alone, and a notice
        (main / ENSEMBLE_FILE).write_text(text)
        session = NeuralDebugger.from_checkpoint(main, PROGRAM)
        assert session.companions == [] and len(session.notices) == 1, session.notices
        assert session.start().top is not None
    with pytest.raises(SessionError, match="not a checkpoint folder"):
        NeuralDebugger.from_checkpoint(main, PROGRAM, companions=[tmp_path / "gone"])
    with pytest.raises(SessionError, match="transformers backend"):
        NeuralDebugger.from_checkpoint(main, PROGRAM, backend="vllm", vllm_url="http://127.0.0.1:9", companions=[companion_checkpoint])


def test_the_adapter_says_when_a_companion_is_left_out(tmp_path: Path, tiny_checkpoint: Path) -> None:
    """A launch on a checkpoint copied without its companion succeeds, says why in the Debug Console, and steps."""
    from tests.dap_client import TcpAdapter

    main = tmp_path / "main"
    shutil.copytree(tiny_checkpoint, main)
    (main / ENSEMBLE_FILE).write_text(json.dumps({"companions": ["../companion-gone"]}))
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    with TcpAdapter() as adapter, adapter.client() as client:
        client.ok("initialize", {"adapterID": "neural"})
        assert client.request("launch", {"program": str(program), "model": str(main), "stopOnEntry": True})["success"]
        client.wait_event("initialized")
        client.ok("configurationDone")
        assert client.wait_event("stopped")["body"]["reason"] == "entry"
        console = [e["body"]["output"] for e in client.drain("output") if e["body"].get("category") == "console"]
        assert any("companion-gone" in line and "without it" in line for line in console), console
        client.ok("next", {"threadId": 1})
        # the step is answered: a stop, or the end the random model predicts (a bounded step closes a value that runs
        # into a repetition where it began, and `exit 555...` closes as an exit)
        client.wait_any(("stopped", "exited"))
        client.ok("disconnect")
