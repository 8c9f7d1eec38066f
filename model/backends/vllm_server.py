"""A client for vLLM's OpenAI-compatible server (`vllm serve`), token ids in and out.

Each request is one POST to ``/v1/completions`` with the prompt as token ids. The body always
carries `max_tokens` and `temperature` (vLLM's defaults are 16 and 1.0), asks for the sampled
tokens' log-probs and their ids (`return_token_ids`), keeps special tokens in the text, and
passes a constraint as ``structured_outputs: {"regex": ...}`` (vLLM 0.12+; the old `guided_*`
fields are silently ignored there). A step's constraint is its decoding spec's grammar (`model.decode.spec`):
the checks it holds beyond the regex are applied to the answer that comes back (`base.refuse_unadmitted`:
a refused answer finishes "rejected"). A sampled request carries its draw's seed
(`model.backends.draws`), so the answers drawn for one stop differ and the same stop draws them again.
`score` teacher-forces a continuation through ``prompt_logprobs`` (vLLM's extension: the log-probability
of each prompt token, raw like the sampled ones), so the session ranks several answers by the same
rule as with the transformers backend. Prefix caching happens on the server: `Generation.prefilled`
is the prompt length minus ``usage.prompt_tokens_details.cached_tokens`` when the server reports
it (``vllm serve --enable-prompt-tokens-details``), else None. Standard library only (urllib).
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from model.backends.base import BackendError, Constraint, Generation, refuse_unadmitted
from model.backends.draws import DrawCounter


class VLLMServerBackend:
    """Talks to one vLLM server.

    url: the server root (``http://host:8000``; a trailing ``/v1`` is accepted). model: the served
    model name (default: the first one ``/v1/models`` lists). timeout: seconds per request.
    retries: extra attempts after a connection failure (0: fail at once). seed: sent when set (a sampled request
    sends its draw's seed, `model.backends.draws.draw_seed` of it).
    """

    def __init__(self, url: str, *, model: str | None = None, timeout: float = 60.0, retries: int = 0, seed: int | None = None, max_model_len: int | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise BackendError(f"the vLLM URL must start with http:// or https://, got {url!r}")
        root = url.rstrip("/")
        self.root = root[: -len("/v1")] if root.endswith("/v1") else root
        self.model = model
        self.timeout = timeout
        self.retries = max(0, retries)
        self.seed = seed
        self.max_model_len = max_model_len
        self._draw_seeds = DrawCounter(seed) if seed is not None else None

    # ---------------------------------------------------------------- public

    def request_body(
        self,
        prompt_ids: list[int],
        *,
        max_tokens: int,
        temperature: float,
        stop_ids: Sequence[int],
        constraint: Constraint | None = None,
        seed: int | None = None,
    ) -> dict[str, Any]:
        """The JSON body of the completion request (exposed so tests can pin it); `seed`: instead of the backend's."""
        body: dict[str, Any] = {
            "model": self.served_model(),
            "prompt": [int(t) for t in prompt_ids],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "logprobs": 1,
            "stop_token_ids": [int(t) for t in stop_ids],
            "return_token_ids": True,
            "skip_special_tokens": False,
            "spaces_between_special_tokens": False,
        }
        seed = self.seed if seed is None else seed
        if seed is not None:
            body["seed"] = int(seed)
        if constraint is not None:
            body["structured_outputs"] = {"regex": constraint.regex}
        return body

    def generate(
        self,
        prompt_ids: list[int],
        *,
        max_tokens: int,
        temperature: float,
        stop_ids: Sequence[int],
        constraint: Constraint | None = None,
        deadline: float | None = None,  # not enforced inside one request: `max_tokens` bounds it (base.Backend)
        stop_repeats: bool = False,  # likewise (base.Backend)
    ) -> Generation:
        if not prompt_ids:
            raise BackendError("empty prompt")
        seed = self._draw_seeds.next_seed(prompt_ids, temperature) if self._draw_seeds is not None else None
        body = self.request_body(prompt_ids, max_tokens=max_tokens, temperature=temperature, stop_ids=stop_ids, constraint=constraint, seed=seed)
        answer = self._post("/v1/completions", body)
        return refuse_unadmitted(parse_completion(answer, len(prompt_ids), set(int(s) for s in stop_ids)), constraint)

    def score(self, prompt_ids: list[int], target_ids: list[int]) -> list[float]:
        """Teacher forcing (`base.Scorer`): the natural-log probability of each of `target_ids` after `prompt_ids` and the
        targets before it, from the server's ``prompt_logprobs`` of the joined ids (one token is generated and dropped)."""
        if not target_ids:
            return []
        if not prompt_ids:
            raise BackendError("empty prompt")
        ids = [int(t) for t in prompt_ids] + [int(t) for t in target_ids]
        body = {"model": self.served_model(), "prompt": ids, "max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 0,
                "skip_special_tokens": False}  # fmt: skip
        return parse_prompt_logprobs(self._post("/v1/completions", body), ids, len(prompt_ids))

    def served_model(self) -> str:
        """The model name to send: the one given, else the first listed by ``/v1/models``."""
        if self.model is None:
            listing = self._get("/v1/models")
            try:
                self.model = str(listing["data"][0]["id"])
            except (KeyError, IndexError, TypeError):
                raise BackendError(f"the vLLM server at {self.root} lists no model in /v1/models: {str(listing)[:200]}") from None
        return self.model

    def close(self) -> None:
        """Nothing to release: each request opens its own connection."""

    # --------------------------------------------------------------- helpers

    def _get(self, route: str) -> Any:
        return self._send(urllib.request.Request(self.root + route, method="GET"))

    def _post(self, route: str, body: dict[str, Any]) -> Any:
        data = json.dumps(body).encode()
        request = urllib.request.Request(self.root + route, data=data, method="POST", headers={"Content-Type": "application/json"})
        return self._send(request)

    def _send(self, request: urllib.request.Request) -> Any:
        last: Exception | None = None
        for _ in range(self.retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read()
                break
            except urllib.error.HTTPError as exc:
                raise BackendError(f"the vLLM server at {self.root} answered HTTP {exc.code}: {_error_message(exc)}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                last = exc
        else:
            reason = getattr(last, "reason", last)
            raise BackendError(f"the vLLM server at {self.root} does not answer ({reason}); start it with `neural-debugger serve-model CKPT`") from None
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BackendError(f"the vLLM server at {self.root} answered something that is not JSON: {raw[:200]!r}") from None


def _error_message(exc: urllib.error.HTTPError) -> str:
    try:
        payload = json.loads(exc.read())
        error = payload.get("error", payload)
        return str(error.get("message", error) if isinstance(error, dict) else error)[:500]
    except Exception:  # noqa: BLE001 - any unreadable error body
        return str(exc.reason)


def parse_completion(answer: Any, prompt_len: int, stops: set[int]) -> Generation:
    """Turn a ``/v1/completions`` answer into a `Generation` (the stop token taken off the ids)."""
    try:
        choice = answer["choices"][0]
        text = choice["text"]
        ids = choice.get("token_ids")
        finish = choice.get("finish_reason") or "stop"
    except (KeyError, IndexError, TypeError):
        raise BackendError(f"the vLLM server answered an unexpected body (no choices[0].text): {str(answer)[:300]}") from None
    if not isinstance(ids, list) or not all(isinstance(t, int) for t in ids):
        raise BackendError("the vLLM server returned no token ids; it needs vLLM >= 0.10.2 (`return_token_ids`)")
    logprobs = [float(x) if x is not None else 0.0 for x in ((choice.get("logprobs") or {}).get("token_logprobs") or [])]
    stop_token = None
    stop_reason = choice.get("stop_reason")
    if finish == "stop" and ids and ids[-1] in stops:
        stop_token = ids.pop()
    elif finish == "stop" and isinstance(stop_reason, int):
        stop_token = stop_reason
    logprobs = logprobs[: len(ids)]
    usage = answer.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens")
    prompt_tokens = int(usage.get("prompt_tokens", prompt_len))
    return Generation(
        token_ids=ids,
        text=text if isinstance(text, str) else str(text),
        logprobs=logprobs,
        finish_reason=str(finish),
        prompt_tokens=prompt_tokens,
        prefilled=prompt_tokens - int(cached) if isinstance(cached, int) else None,
        stop_token=stop_token,
    )


def parse_prompt_logprobs(answer: Any, ids: list[int], start: int) -> list[float]:
    """The log-probabilities of ``ids[start:]`` from a completion answer's ``choices[0].prompt_logprobs`` (one entry per
    prompt token, None for the first; each maps token ids, as JSON keys, to ``{"logprob": ...}``)."""
    try:
        entries = answer["choices"][0]["prompt_logprobs"]
        out = []
        for position in range(start, len(ids)):
            entry = entries[position]
            out.append(float(entry[str(ids[position])]["logprob"]))
        return out
    except (KeyError, IndexError, TypeError, ValueError):
        raise BackendError(f"the vLLM server answered no prompt log-probabilities for the scored tokens: {str(answer)[:300]}") from None
