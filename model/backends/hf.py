"""In-process inference with transformers (CPU or CUDA), keeping the KV cache of the shared prefix.

`HFBackend(folder)` loads `AutoModelForCausalLM` and the tokenizer from a checkpoint folder. One
backend serves one debugging session: each request reuses the cached keys/values of the longest
common prefix with what is already in the cache (the program source and the history), so a step
prefills only its new tokens (`Generation.prefilled`). Decoding is a plain loop: greedy at
temperature 0, otherwise sampling; a `Constraint` is applied exactly by checking candidates in
order of probability (greedy) or by rejection sampling (sampling), which picks the same token as
masking every disallowed id. torch and transformers are imported lazily.
"""
from __future__ import annotations

import codecs
import inspect
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model.backends.base import BackendError, Constraint, Generation
from model.backends.whole_numbers import NumberChoice, best_number

_REJECTIONS_BEFORE_SCAN = 16

# A line number follows this token; greedy decoding picks the whole number at once (whole_numbers.py).
NUMBER_AFTER = b"<|line_sep|>"
# Characters that may follow a complete line number (a frame's locals open with "{").
NUMBER_ENDERS = ("{", "<", "\n", " ", '"', ",", "}")

# Held while importing transformers and loading a checkpoint: transformers' lazy module is not safe
# to import (or to resolve its names) from several threads at once, and the adapter's first
# launches run in concurrent worker threads ("cannot import name 'AutoModelForCausalLM'").
TRANSFORMERS_LOCK = threading.Lock()


def _byte_decoder() -> dict[str, int]:
    """The inverse of GPT-2's byte-to-unicode table used by byte-level BPE."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def token_bytes_table(tokenizer: Any, size: int) -> list[bytes | None]:
    """The bytes each token id stands for (special tokens: their text); None for ids the tokenizer lacks."""
    decoder = _byte_decoder()
    special = {int(i): str(t) for i, t in getattr(tokenizer, "added_tokens_decoder", {}).items()}
    table: list[bytes | None] = []
    known = len(tokenizer)
    for token_id in range(size):
        if token_id in special:
            table.append(special[token_id].encode())
            continue
        if token_id >= known:
            table.append(None)
            continue
        piece = tokenizer.convert_ids_to_tokens(token_id)
        if piece is None:
            table.append(None)
        elif all(ch in decoder for ch in piece):
            table.append(bytes(decoder[ch] for ch in piece))
        else:
            table.append(tokenizer.decode([token_id]).encode())
    return table


def split_utf8(data: bytes) -> tuple[str, bytes] | None:
    """(text, incomplete tail) of `data`: the tail can still become one character; None if `data` is not UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(data, final=False)
    except UnicodeDecodeError:
        return None
    tail = decoder.getstate()[0]
    return text, tail


def decode_prefix(data: bytes) -> str:
    """UTF-8 text of `data`, leaving out an incomplete multi-byte character at its end."""
    split = split_utf8(data)
    return split[0] if split is not None else data.decode("utf-8", errors="replace")


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two id sequences."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class HFBackend:
    """A transformers causal LM in this process; one instance per session (it owns the KV cache).

    folder: a Hugging Face checkpoint folder (config.json, model.safetensors, tokenizer.json...).
    device: "cpu", "cuda" or "auto". seed: for sampling. max_model_len: the context length (default
    the model's max_position_embeddings). threads: torch CPU threads while generating (restored
    after; one thread decodes a small model fastest, and is far faster on a busy machine); None
    leaves torch's setting alone. whole_numbers: in greedy constrained decoding, choose each line
    number as a whole, by its total probability (`whole_numbers.best_number`), not digit by digit.
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        device: str = "cpu",
        seed: int = 0,
        max_model_len: int | None = None,
        dtype: str | None = None,
        threads: int | None = 1,
        whole_numbers: bool = True,
    ) -> None:
        folder = Path(folder)
        if not (folder / "config.json").is_file():
            raise BackendError(f"not a checkpoint folder (no config.json): {folder}")
        with TRANSFORMERS_LOCK:
            torch = self._load(folder, device, dtype)
        self._torch = torch
        device = self.device
        self.vocab_size = int(self.model.config.vocab_size)
        limit = int(getattr(self.model.config, "max_position_embeddings", 2048))
        self.max_model_len = min(max_model_len or limit, limit)
        self._generator = torch.Generator(device="cpu").manual_seed(seed)
        self._table = token_bytes_table(self.tokenizer, self.vocab_size)
        self._invalid = torch.tensor([b is None for b in self._table], device=device)
        self._number_after = {i for i, b in enumerate(self._table) if b == NUMBER_AFTER}
        self._digit_ids = {chr(b[0]): i for i, b in enumerate(self._table) if b is not None and len(b) == 1 and b.isdigit()}
        self._continue_ids = [i for i, b in enumerate(self._table) if b and b[:1].isdigit()]
        self.whole_numbers = whole_numbers
        self.threads = threads if device == "cpu" else None
        self._cache: Any = None
        self._cached_ids: list[int] = []
        params = inspect.signature(self.model.forward).parameters
        self._cache_kwarg = "cache" if "cache" in params else "past_key_values"  # transformers >= 5.2x renamed it

    def _load(self, folder: Path, device: str, dtype: str | None) -> Any:
        """Import torch and transformers, load the tokenizer and model (sets device); returns torch."""
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache
        except ImportError as exc:  # pragma: no cover - torch is a core dependency
            raise BackendError(f"the transformers backend needs torch and transformers: {exc}") from exc
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        torch_dtype = getattr(torch, dtype) if dtype else (torch.bfloat16 if device.startswith("cuda") else torch.float32)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
            self.model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch_dtype).to(device).eval()
        except Exception as exc:  # noqa: BLE001 - corrupt weights raise SafetensorError, shape mismatches RuntimeError, ...
            raise BackendError(f"cannot load the checkpoint {folder}: {type(exc).__name__}: {exc}") from exc
        self.device = device
        self._cache_class = DynamicCache  # resolved here, under the lock, not on the first step
        return torch

    # ---------------------------------------------------------------- public

    def generate(
        self,
        prompt_ids: list[int],
        *,
        max_tokens: int,
        temperature: float,
        stop_ids: Sequence[int],
        constraint: Constraint | None = None,
    ) -> Generation:
        self._check_prompt(prompt_ids)
        max_tokens = max(0, min(max_tokens, self.max_model_len - len(prompt_ids)))
        stops = set(int(s) for s in stop_ids)
        saved_threads = self._torch.get_num_threads()
        if self.threads:
            self._torch.set_num_threads(self.threads)
        try:
            return self._generate(prompt_ids, max_tokens, temperature, stops, constraint)
        finally:
            if self.threads:
                self._torch.set_num_threads(saved_threads)

    def _generate(self, prompt_ids: list[int], max_tokens: int, temperature: float, stops: set[int], constraint: Constraint | None) -> Generation:
        with self._torch.inference_mode():
            logits, prefilled = self._prefill(prompt_ids)
            ids: list[int] = []
            logprobs: list[float] = []
            data = b""
            finish, stop_token = "length", None
            whole = temperature <= 0 and constraint is not None and self.whole_numbers
            number_next = whole and prompt_ids[-1] in self._number_after
            while len(ids) < max_tokens:
                if number_next:
                    number_next = False
                    choice = self._best_number(logits, constraint, data, max_tokens - len(ids))
                    if choice is not None:
                        digit_ids = [self._digit_ids[c] for c in choice.digits]
                        ids.extend(digit_ids)
                        logprobs.extend(choice.logprobs)
                        data += choice.digits.encode()
                        if len(ids) < max_tokens:
                            logits = self._forward(digit_ids)
                        continue
                token = self._choose(logits, temperature, stops, constraint, data)
                if token is None:
                    finish = "error"
                    break
                logprobs.append(float(self._torch.log_softmax(logits.float(), dim=-1)[token]))
                if token in stops:
                    finish, stop_token = "stop", token
                    break
                ids.append(token)
                data += self._table[token] or b""
                if len(ids) < max_tokens:
                    logits = self._forward([token])
                number_next = whole and token in self._number_after
        text = self.tokenizer.decode(ids, skip_special_tokens=False) if ids else ""
        return Generation(
            token_ids=ids,
            text=text,
            logprobs=logprobs if stop_token is None else logprobs[:-1],
            finish_reason=finish,
            prompt_tokens=len(prompt_ids),
            prefilled=prefilled,
            stop_token=stop_token,
        )

    def reset_cache(self) -> None:
        """Forget the KV cache (the next request prefills its whole prompt)."""
        self._cache, self._cached_ids = None, []

    def close(self) -> None:
        self.reset_cache()

    # --------------------------------------------------------------- helpers

    def _check_prompt(self, prompt_ids: list[int]) -> None:
        if not prompt_ids:
            raise BackendError("empty prompt")
        bad = [t for t in prompt_ids if not isinstance(t, int) or not 0 <= t < self.vocab_size]
        if bad:
            raise BackendError(f"prompt has ids outside the vocabulary of {self.vocab_size}: {bad[:5]}")
        if len(prompt_ids) >= self.max_model_len:
            raise BackendError(f"prompt of {len(prompt_ids)} tokens does not fit the context of {self.max_model_len}")

    def _prefill(self, prompt_ids: list[int]) -> tuple[Any, int]:
        """Bring the cache to `prompt_ids` (reusing the common prefix); returns next-token logits and prefilled count."""
        keep = min(common_prefix(self._cached_ids, prompt_ids), len(prompt_ids) - 1)
        if self._cache is None or keep == 0:
            self._cache, self._cached_ids = self._cache_class(config=self.model.config), []
            keep = 0
        elif keep < len(self._cached_ids):
            self._cache.crop(keep - len(self._cached_ids))  # negative: tokens to drop (works across versions)
            self._cached_ids = self._cached_ids[:keep]
        new = prompt_ids[keep:]
        return self._forward(new), len(new)

    def _forward(self, ids: list[int]) -> Any:
        torch = self._torch
        tensor = torch.tensor([ids], dtype=torch.long, device=self.device)
        out = self.model(input_ids=tensor, **{self._cache_kwarg: self._cache}, use_cache=True, logits_to_keep=1)
        returned = getattr(out, "cache", None)
        if returned is None:
            returned = getattr(out, "past_key_values", None)
        if returned is not None:
            self._cache = returned
        self._cached_ids.extend(ids)
        return out.logits[0, -1].float()

    def _best_number(self, logits: Any, constraint: Constraint, data: bytes, budget: int) -> NumberChoice | None:
        """The most probable whole number after `data` (see `whole_numbers.best_number`); the cache is left at `data`."""
        split = split_utf8(data)
        if split is None or split[1] or budget < 2 or not self._digit_ids:
            return None
        text = split[0]
        base = len(self._cached_ids)

        def logprobs_of(row: Any) -> list[float]:
            return self._torch.log_softmax(row.masked_fill(self._invalid, -math.inf), dim=-1).tolist()

        def expand(prefix: str) -> list[float]:
            self._rewind(base)
            return logprobs_of(self._forward([self._digit_ids[c] for c in prefix]))

        choice = best_number(
            logprobs_of(logits),
            expand,
            digit_ids=self._digit_ids,
            continue_ids=self._continue_ids,
            can_extend=lambda prefix: constraint.allows(text + prefix),
            can_end=lambda prefix: any(constraint.allows(text + prefix + end) for end in NUMBER_ENDERS),
            max_digits=budget - 1,
        )
        self._rewind(base)
        return choice

    def _rewind(self, length: int) -> None:
        """Drop cached positions beyond `length`."""
        extra = len(self._cached_ids) - length
        if extra > 0:
            self._cache.crop(-extra)
            self._cached_ids = self._cached_ids[:length]

    def _choose(self, logits: Any, temperature: float, stops: set[int], constraint: Constraint | None, data: bytes) -> int | None:
        torch = self._torch
        logits = logits.masked_fill(self._invalid, -math.inf)
        if temperature <= 0:
            return self._first_valid(torch.argsort(logits, descending=True), logits, stops, constraint, data)
        probs = torch.softmax(logits / temperature, dim=-1).cpu()
        for _ in range(_REJECTIONS_BEFORE_SCAN):
            if float(probs.sum()) <= 0:
                return None
            token = int(torch.multinomial(probs, 1, generator=self._generator))
            if self._valid(token, stops, constraint, data):
                return token
            probs[token] = 0.0
        allowed = [t for t in range(self.vocab_size) if probs[t] > 0 and self._valid(t, stops, constraint, data)]
        if not allowed:
            return None
        sub = probs[allowed]
        return allowed[int(torch.multinomial(sub / sub.sum(), 1, generator=self._generator))]

    def _first_valid(self, order: Any, logits: Any, stops: set[int], constraint: Constraint | None, data: bytes) -> int | None:
        for token in order.tolist():
            if logits[token] == -math.inf:
                return None
            if self._valid(token, stops, constraint, data):
                return token
        return None

    def _valid(self, token: int, stops: set[int], constraint: Constraint | None, data: bytes) -> bool:
        if constraint is None:
            return True
        if token in stops:
            split = split_utf8(data)
            return split is not None and not split[1] and constraint.complete(split[0])
        piece = self._table[token]
        if not piece:
            return False
        split = split_utf8(data + piece)
        if split is None:
            return False
        text, tail = split
        # an unfinished character must be able to continue: stand in U+FFFD for it
        return constraint.allows(text + "\ufffd" if tail else text)
