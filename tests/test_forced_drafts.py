"""Drafting the text the grammar forces (`forced_text`, `HFBackend(forced_drafts=...)`): what is forced, and answers
unchanged by it in fewer model calls."""
from __future__ import annotations

from pathlib import Path

import pytest

from model.backends.hf import HFBackend
from model.backends.whole_numbers import ForcedNumber, forced_number_digits
from model.decode.constraints import RegexConstraint
from model.decode.regex_matcher import PartialRegex, regex_matcher, whole_characters
from tests.test_lookup import CountingRunner


def test_forced_text_runs_to_where_a_match_may_branch_or_end() -> None:
    constraint = RegexConstraint(r"<\|a\|>(x|y)bc(de)?")
    assert constraint.forced_text("") == "<|a|>"
    assert constraint.forced_text("<|a|") == ">"
    assert constraint.forced_text("<|a|>") == ""  # x or y
    assert constraint.forced_text("<|a|>y") == "bc"
    assert constraint.forced_text("<|a|>ybc") == ""  # it may end here
    assert constraint.forced_text("<|a|>ybcd") == "e"
    assert constraint.forced_text("z") == ""  # no match extends it


def test_forced_text_keeps_whole_characters() -> None:
    assert regex_matcher("é(a|b)").forced_text("") == "é"
    assert whole_characters("é".encode()[:1]) == ""
    assert whole_characters("aé".encode()[:2]) == "a"
    assert PartialRegex("abc").forced_text("") == ""  # the fallback engine cannot say: nothing is drafted


def test_a_forced_number_needs_its_end() -> None:
    assert forced_number_digits("14{..}") == "14"
    assert forced_number_digits("14") == ""  # another digit may follow
    assert forced_number_digits("{") == ""
    assert forced_number_digits("٣{") == ""  # a digit to str.isdigit, not a line number's
    choice = ForcedNumber("14", (5, 7)).scored([[0.0] * 8, [-1.0] * 8], lambda row: row)
    assert choice.digits == "14" and choice.logprobs == (0.0, -1.0)


def _generate(checkpoint: Path, forced: bool, temperature: float) -> tuple[list[int], list[float], int]:
    backend = HFBackend(checkpoint, forced_drafts=forced)
    runner = CountingRunner(backend._runner)
    backend._runner = runner  # type: ignore[assignment]
    prompt = backend.tokenizer.encode("x = [1, 2, 3]\ny = {'a': 1}\n" * 4, add_special_tokens=False)
    constraint = RegexConstraint(r"x = \[1, 2, 3\]\n(y|z) = \{'a': [0-9]\}\nprint\(x, y\)\n")
    gen = backend.generate(prompt, max_tokens=40, temperature=temperature, stop_ids=[], constraint=constraint)
    backend.close()
    return gen.token_ids, gen.logprobs, runner.calls


@pytest.mark.parametrize("temperature", [0.0, 1.5])
def test_forced_drafts_change_no_answer(tiny_checkpoint: Path, temperature: float) -> None:
    """The tiny random model under a grammar that forces most of the text, greedy and sampled: the same tokens and
    log-probabilities with forced drafts as without, in fewer calls."""
    plain_ids, plain_logprobs, plain_calls = _generate(tiny_checkpoint, False, temperature)
    ids, logprobs, calls = _generate(tiny_checkpoint, True, temperature)
    assert ids == plain_ids and logprobs == pytest.approx(plain_logprobs, abs=1e-4)
    assert calls < plain_calls


def test_the_shipped_model_steps_the_same_in_fewer_calls_with_forced_drafts() -> None:
    """A Continue walked by fine steps (every stop nearly forced by the grammar), forced line numbers among them: the same
    states and confidences with forced drafts as with lookup drafting alone, in fewer calls (how many fewer depends on
    the weights: stage 9 needed at most two thirds; the 8.49M model shipped in session 38, 350 of 385)."""
    from model.paths import DEFAULT_CHECKPOINT
    from model.session import NeuralDebugger
    from protocol.debugger import Action, ActionKind

    program = ("def sell(stock, name):\n    left = stock[name] - 1\n    stock[name] = left\n    return left\n\n\n"
               "stock = {'apple': 3}\nnote = 'start'\nleft = sell(stock, 'apple')\nprint(stock, left)\n")
    walks = []
    for forced in (False, True):
        session = NeuralDebugger.from_checkpoint(DEFAULT_CHECKPOINT, program, coarse_steps="fine")
        session.backend.forced_drafts = forced
        runner = CountingRunner(session.backend._runner)
        session.backend._runner = runner
        session.start()
        session.set_breakpoints([3])
        session.step(Action(kind=ActionKind.CONTINUE))
        records = session._records
        walks.append(([r.state for r in records], [r.generation.logprobs for r in records[1:] if r.generation], runner.calls))
        session.close()
    (plain_states, plain_logprobs, plain_calls), (states, logprobs, calls) = walks
    assert len(states) > 3 and states == plain_states
    assert [lp == pytest.approx(p, abs=1e-4) for lp, p in zip(logprobs, plain_logprobs)] == [True] * len(plain_logprobs)
    assert calls < plain_calls, (calls, plain_calls)
