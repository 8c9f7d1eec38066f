"""vLLM's in-process engine (GPU), imported lazily; same `Backend` interface as the server client.

``LLM(model=folder)`` loads the checkpoint; each request is
``llm.generate([{"prompt_token_ids": ids}], SamplingParams(...))`` with a constraint passed as
``SamplingParams(structured_outputs=StructuredOutputsParams(regex=...))``; as with the server client, a
step's grammar's checks beyond the regex are applied to the answer (`base.refuse_unadmitted`), a sampled
request carries its draw's seed (`model.backends.draws`), and `score` teacher-forces through
``SamplingParams(prompt_logprobs=0)``. Prefix caching is on by
default in vLLM V1, so `Generation.prefilled` is the prompt length minus the request's
``num_cached_tokens``.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model.backends.base import BackendError, Constraint, Generation, refuse_unadmitted
from model.backends.draws import DrawCounter

INSTALL_HINT = "vLLM is not installed; on a CUDA machine run `pip install '.[gpu]'` (or use backend=transformers on CPU)"


def _import_vllm() -> Any:
    try:
        import vllm  # type: ignore[import-not-found]
    except ImportError as exc:
        raise BackendError(f"{INSTALL_HINT} ({exc})") from None
    return vllm


class VLLMEngineBackend:
    """A vLLM `LLM` in this process. folder: checkpoint; max_model_len, dtype and seed go to `LLM`."""

    def __init__(self, folder: str | Path, *, max_model_len: int | None = None, dtype: str = "bfloat16", seed: int = 0, **engine_args: Any) -> None:
        vllm = _import_vllm()
        try:
            self.llm = vllm.LLM(model=str(folder), max_model_len=max_model_len, dtype=dtype, seed=seed, generation_config="vllm", **engine_args)
        except Exception as exc:  # noqa: BLE001 - vLLM raises many kinds (no GPU, bad folder)
            raise BackendError(f"vLLM could not load {folder}: {exc}") from exc
        self.max_model_len = max_model_len or int(self.llm.llm_engine.model_config.max_model_len)
        self._draw_seeds = DrawCounter(seed)

    def sampling_params(self, *, max_tokens: int, temperature: float, stop_ids: Sequence[int], constraint: Constraint | None,
                        seed: int | None = None) -> Any:  # fmt: skip
        """The `SamplingParams` of one request (`seed`: a sampled draw's, `model.backends.draws`)."""
        from vllm.sampling_params import SamplingParams, StructuredOutputsParams  # type: ignore[import-not-found]

        structured = StructuredOutputsParams(regex=constraint.regex) if constraint is not None else None
        return SamplingParams(
            max_tokens=max_tokens, temperature=temperature, logprobs=0, stop_token_ids=list(stop_ids),
            skip_special_tokens=False, spaces_between_special_tokens=False, structured_outputs=structured, seed=seed,
        )

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
        seed = self._draw_seeds.next_seed(prompt_ids, temperature)
        params = self.sampling_params(max_tokens=max_tokens, temperature=temperature, stop_ids=stop_ids, constraint=constraint, seed=seed)
        result = self.llm.generate([{"prompt_token_ids": list(prompt_ids)}], params, use_tqdm=False)[0]
        out = result.outputs[0]
        ids = list(out.token_ids)
        logprobs = [float(step[t].logprob) for step, t in zip(out.logprobs or [], ids)]
        stops = set(stop_ids)
        stop_token = ids.pop() if out.finish_reason == "stop" and ids and ids[-1] in stops else None
        cached = getattr(result, "num_cached_tokens", None)
        gen = Generation(
            token_ids=ids, text=out.text, logprobs=logprobs[: len(ids)], finish_reason=str(out.finish_reason),
            prompt_tokens=len(prompt_ids), prefilled=len(prompt_ids) - cached if isinstance(cached, int) else None,
            stop_token=stop_token,
        )
        return refuse_unadmitted(gen, constraint)

    def score(self, prompt_ids: list[int], target_ids: list[int]) -> list[float]:
        """Teacher forcing (`base.Scorer`): each of `target_ids`' log-probability from the joined ids' prompt log-probs."""
        if not target_ids:
            return []
        if not prompt_ids:
            raise BackendError("empty prompt")
        from vllm.sampling_params import SamplingParams  # type: ignore[import-not-found]

        ids = list(prompt_ids) + list(target_ids)
        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, skip_special_tokens=False)
        result = self.llm.generate([{"prompt_token_ids": ids}], params, use_tqdm=False)[0]
        try:
            return [float(result.prompt_logprobs[i][ids[i]].logprob) for i in range(len(prompt_ids), len(ids))]
        except (IndexError, KeyError, TypeError) as exc:
            raise BackendError(f"vLLM returned no prompt log-probabilities for the scored tokens: {exc}") from None

    def close(self) -> None:
        self.llm = None
