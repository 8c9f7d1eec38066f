"""One decoding spec per step (`model.decode.spec`): plain and full specs differ as documented, and the transformers
backend and the vLLM server client, given the same spec, return the same answer with the same score.

The vLLM side runs against a stand-in HTTP server that plays vLLM's ``/v1/completions`` with the tiny real model
of `tiny_checkpoint`: greedy decoding that honours the ``structured_outputs.regex`` the request carries (and only
that), raw log-probabilities of the chosen tokens, and ``prompt_logprobs`` for teacher forcing.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from model.backends.base import Generation, Scorer, refuse_unadmitted
from model.backends.hf import HFBackend, split_utf8, token_bytes_table
from model.backends.vllm_server import VLLMServerBackend
from model.decode.spec import SpecOptions, build_spec
from model.decoding import FULL_RULES, PLAIN_RULES
from model.prompt import language as lang
from model.session import NeuralDebugger
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.local_http import LocalHTTPServer

PROGRAM = "def add(a, b):\n    c = a + b\n    return c\n\nx = add(1, 2)\ny = [x, x * 2]\nprint(y)\n"


class ModelStandIn:
    """A real HTTP server in a thread answering like vLLM from a transformers model (no KV cache: a full forward per token)."""

    def __init__(self, folder: Path) -> None:
        import regex
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch, self.regex = torch, regex
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
        self.table = token_bytes_table(self.tokenizer, int(self.model.config.vocab_size))
        self.bodies: list[dict[str, Any]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.bodies.append(body)
                payload = json.dumps(stand_in.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.http = LocalHTTPServer(Handler)
        self.url = self.http.url

    def close(self) -> None:
        self.http.close()

    def _logprobs(self, ids: list[int]) -> Any:
        """Log-softmax rows after every one of `ids`."""
        with self.torch.inference_mode():
            logits = self.model(input_ids=self.torch.tensor([ids])).logits[0].float()
        return self.torch.log_softmax(logits, dim=-1)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = list(body["prompt"])
        if body.get("prompt_logprobs") is not None:  # teacher forcing: each prompt token's log-prob, None for the first
            rows = self._logprobs(prompt)
            entries: list[Any] = [None] + [{str(t): {"logprob": float(rows[i - 1][t]), "rank": 1, "decoded_token": ""}}
                                           for i, t in enumerate(prompt) if i]  # fmt: skip
            return {"choices": [{"index": 0, "text": "", "token_ids": [0], "finish_reason": "length", "prompt_logprobs": entries}]}
        assert body["temperature"] == 0.0, "the stand-in decodes greedily"
        pattern = self.regex.compile(body["structured_outputs"]["regex"], self.regex.DOTALL)
        stops = set(body["stop_token_ids"])
        ids: list[int] = []
        logprobs: list[float] = []
        data = b""
        finish = "length"
        while len(ids) < body["max_tokens"]:
            rows = self._logprobs(prompt + ids)[-1]
            token = next((int(t) for t in self.torch.argsort(rows, descending=True).tolist() if self._allowed(pattern, data, int(t))), None)
            if token is None:
                finish = "abort"
                break
            ids.append(token)
            logprobs.append(float(rows[token]))
            data += self.table[token] or b""
            if token in stops:
                finish = "stop"
                break
        text_ids = ids[:-1] if finish == "stop" else ids
        return {
            "choices": [{"index": 0, "text": self.tokenizer.decode(text_ids, skip_special_tokens=False), "token_ids": ids,
                         "logprobs": {"token_logprobs": logprobs}, "finish_reason": finish,
                         "stop_reason": ids[-1] if finish == "stop" else None}],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(ids)},
        }  # fmt: skip

    def _allowed(self, pattern: Any, data: bytes, token: int) -> bool:
        """Whether the regex still matches (in part; in full for the stop token, whose text ends the regex) after `token`."""
        piece = self.table[token]
        if not piece:
            return False
        split = split_utf8(data + piece)
        if split is None:
            return False
        text, tail = split
        return pattern.fullmatch(text + ("\ufffd" if tail else ""), partial=True) is not None


@pytest.fixture(scope="module")
def stand_in(tiny_checkpoint: Path) -> Iterator[ModelStandIn]:
    server = ModelStandIn(tiny_checkpoint)
    yield server
    server.close()


ENTRY = State(reason=StopReason.ENTRY, frames=[Frame(name="<module>", line=5, source="x = add(1, 2)")])
INSIDE = State(reason=StopReason.STEP, frames=[Frame(name="add", line=2, source="    c = a + b", locals={"a": "1", "b": "2"}),
                                               Frame(name="<module>", line=5, source="x = add(1, 2)")])  # fmt: skip
AFTER = State(reason=StopReason.STEP, frames=[Frame(name="add", line=3, source="    return c", locals={"a": "1", "b": "2", "c": "3"}),
                                              Frame(name="<module>", line=5, source="x = add(1, 2)")])  # fmt: skip
RETURNED = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=5, source="x = add(1, 2)")],
                 return_value=ReturnValue(name="add", value="3"))  # fmt: skip


def test_plain_and_full_specs_differ_as_documented() -> None:
    """Both keep well-formedness, control flow, the repr and call-chain checks; full adds the measured narrowing
    (the keys a frame can show, the arguments a call passes) and draws several answers after inv_step_call and the
    coarse actions, with the companions after inv_step_call."""
    step_into, step_over = Action(kind=ActionKind.STEP_INTO), Action(kind=ActionKind.STEP_OVER)
    specs = {rules: (build_spec(PROGRAM, ENTRY, step_into, SpecOptions(rules=rules)), build_spec(PROGRAM, INSIDE, step_over, SpecOptions(rules=rules)))
             for rules in (FULL_RULES, PLAIN_RULES)}  # fmt: skip
    called, stepped = lang.render_state(INSIDE, ENTRY), lang.render_state(AFTER, INSIDE)
    for rules, (into, over) in specs.items():
        assert into.grammar is not None and over.grammar is not None
        assert into.grammar.unfolded == over.grammar.unfolded == ("reprs", "call_chain")
        assert into.grammar.admits(called) and over.grammar.admits(stepped)
        assert not into.grammar.admits(called.replace("<|line_sep|>2", "<|line_sep|>3"))  # control flow: both
        assert not into.grammar.admits(called.replace('"b":"2"', '"b":"(("'))  # an impossible repr: both
        full = rules is FULL_RULES
        assert into.grammar.admits(called.replace('"b":"2"', '"b":"7"')) is not full  # known_entries: full only
        assert over.grammar.admits(stepped.replace('"c"', '"zzz"')) is not full  # frame_names: full only
    assert specs[FULL_RULES][0].grammar.regex != specs[PLAIN_RULES][0].grammar.regex
    for kind, count in ((ActionKind.INV_STEP_CALL, 8), (ActionKind.CONTINUE, 4), (ActionKind.STEP_OVER, 1)):
        full_spec = build_spec(PROGRAM, RETURNED, Action(kind=kind), SpecOptions(rules=FULL_RULES))
        plain_spec = build_spec(PROGRAM, RETURNED, Action(kind=kind), SpecOptions(rules=PLAIN_RULES))
        assert (full_spec.plan.count, plain_spec.plan.count) == (count, 1)
        assert full_spec.plan.ensemble is (kind is ActionKind.INV_STEP_CALL) and plain_spec.plan.ensemble is False
        assert full_spec.scoring == plain_spec.scoring  # one scoring rule: plain draws one answer, so it never ranks
    call = build_spec(PROGRAM, RETURNED, Action(kind=ActionKind.INV_STEP_CALL))
    assert call.scoring.evidence and not call.scoring.stale and not call.scoring.checks  # check_weight 0: no check term
    assert build_spec(PROGRAM, RETURNED, Action(kind=ActionKind.CONTINUE)).scoring.stale
    assert build_spec(PROGRAM, ENTRY, step_into, SpecOptions(constrained=False)).grammar is None


def test_a_regex_only_answer_the_unfolded_checks_refuse_comes_back_rejected() -> None:
    """vLLM enforces the regex; the spec's repr check is applied to what comes back."""
    import regex

    grammar = build_spec(PROGRAM, ENTRY, Action(kind=ActionKind.STEP_INTO), SpecOptions(rules=PLAIN_RULES)).grammar
    assert grammar is not None
    good = lang.render_state(INSIDE, ENTRY)
    bad = good.replace('"b":"2"', '"b":"(("')
    assert grammar.regex.endswith(regex.escape(lang.STATE_END))
    assert regex.fullmatch(grammar.regex, bad, flags=regex.DOTALL)  # the regex alone lets it through
    assert refuse_unadmitted(Generation(token_ids=[1], text=bad, finish_reason="stop"), grammar).finish_reason == "rejected"
    assert refuse_unadmitted(Generation(token_ids=[1], text=good, finish_reason="stop"), grammar).finish_reason == "stop"
    assert refuse_unadmitted(Generation(token_ids=[1], text=bad, finish_reason="length"), grammar).finish_reason == "length"


def _cases() -> list[tuple[State, Action, State]]:
    """(stop, action, the stop debugpy reaches)."""
    next_line = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=6, source="y = [x, x * 2]", locals={"x": "3"})])
    return [(ENTRY, Action(kind=ActionKind.STEP_INTO), INSIDE), (ENTRY, Action(kind=ActionKind.STEP_OVER), next_line),
            (INSIDE, Action(kind=ActionKind.STEP_OVER), AFTER), (INSIDE, Action(kind=ActionKind.STEP_RETURN), RETURNED)]


@pytest.mark.slow  # 8 answers decoded twice, the stand-in without a KV cache: 178 s on the busy 2-core machine
@pytest.mark.timeout(900)
def test_transformers_and_vllm_server_give_the_same_answer_and_score(tiny_checkpoint: Path, stand_in: ModelStandIn) -> None:
    """Same spec, same prompt: the same token ids, text, finish and log-probs wherever the regex-greedy answer passes the
    spec's unfolded checks; where it does not, the answers part where vLLM's (regex only) breaks a check, which the
    transformers mask refused. Any answer (the model's, and the true next stop) scores the same through both backends'
    teacher forcing under the spec's scoring rule."""
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, max_state_tokens=48, companions=[])
    hf = session.backend
    assert isinstance(hf, HFBackend)
    hf.whole_numbers = False  # a transformers-only search (docs/inference.md): vLLM writes a line number digit by digit
    server = VLLMServerBackend(stand_in.url, model="nd", seed=0, timeout=600)  # the stand-in decodes without a KV cache: slow on a busy machine
    assert isinstance(server, Scorer)
    decode = session.tokenizer.decode
    same = 0
    for rules in (FULL_RULES, PLAIN_RULES):
        options = replace(session._spec_options(), rules=rules)
        for previous, action, truth in _cases():
            session.start_from(previous)
            spec = build_spec(PROGRAM, previous, action, options)
            assert spec.grammar is not None
            prompt, stop = session._prompt_ids(action), [session.stop_id]
            ask = {"max_tokens": spec.plan.max_tokens, "temperature": spec.plan.temperature, "stop_ids": stop, "constraint": spec.grammar}
            ours, theirs = hf.generate(prompt, **ask), server.generate(prompt, **ask)
            assert stand_in.bodies[-1]["structured_outputs"] == {"regex": spec.grammar.regex}
            if theirs.token_ids == ours.token_ids:
                same += 1
                assert (theirs.text, theirs.finish_reason, theirs.stop_token) == (ours.text, ours.finish_reason, ours.stop_token)
                assert theirs.logprobs == pytest.approx(ours.logprobs, abs=1e-4)
            else:
                at = next(i for i, (a, b) in enumerate(zip(ours.token_ids, theirs.token_ids)) if a != b)
                assert theirs.logprobs[:at] == pytest.approx(ours.logprobs[:at], abs=1e-4)
                prefixes = [decode(theirs.token_ids[:end], skip_special_tokens=False) for end in range(at + 1, len(theirs.token_ids) + 1)]
                assert not all(spec.grammar.allows(text) for text in prefixes) or theirs.finish_reason == "rejected", \
                    (ours.text, theirs.text)  # vLLM's answer breaks an unfolded check past where they part
            target = ours.token_ids + ([ours.stop_token] if ours.stop_token is not None else [])
            forced_ours, forced_theirs = hf.score(prompt, target), server.score(prompt, target)
            assert forced_theirs == pytest.approx(forced_ours, abs=1e-4)
            assert forced_ours[: len(ours.logprobs)] == pytest.approx(ours.logprobs, abs=1e-4)  # raw log-probs, as generated
            true_ids = session._encode(lang.render_state(truth, previous))  # the true next stop, its stop token included
            assert true_ids[-1] == session.stop_id
            mine = spec.scoring.candidate(lang.render_state(truth, None), truth, [hf.score(prompt, true_ids)], greedy=True)
            other = spec.scoring.candidate(lang.render_state(truth, None), truth, [server.score(prompt, true_ids)], greedy=True)
            assert math.isfinite(spec.scoring.score(mine))
            assert spec.scoring.score(other) == pytest.approx(spec.scoring.score(mine), abs=1e-3)
            assert (other.violations, other.stale) == (mine.violations, mine.stale)
    server.close()
    session.close()
    assert same >= 1, "no case where both backends answered alike"
