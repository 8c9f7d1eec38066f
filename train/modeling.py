"""Building the model and tokenizer a run trains: from a preset, from a checkpoint to resume, or from
an existing Hugging Face causal LM to fine-tune (special tokens added, embeddings resized)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from train.presets import ModelShape, llama_config


@dataclass
class Built:
    """A model with its tokenizer and the token ids training and generation rely on."""

    model: Any  # a transformers PreTrainedModel (float32 master weights)
    tokenizer: Any  # a transformers PreTrainedTokenizerFast
    eos_id: int  # the state-end token: generation stops on it
    pad_id: int
    bos_id: int | None


def special_tokens() -> list[str]:
    """Every special token of the neural-debugger language (owned by model/prompt/language.py)."""
    from model.prompt import language

    return list(language.SPECIAL_TOKENS)


def state_end_token() -> str:
    from model.prompt import language

    return language.STATE_END


def load_hf_tokenizer(folder: Path) -> Any:
    """A Hugging Face tokenizer from a folder, with a clear error when it is not one."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(folder))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot load a tokenizer from {folder}: {exc}") from None


def tokenizer_hash(tokenizer: Any) -> str:
    """sha256 of the tokenizer's full JSON (vocabulary, merges, added tokens): equal hashes tokenize alike."""
    return hashlib.sha256(tokenizer.backend_tokenizer.to_str().encode()).hexdigest()


def token_ids(tokenizer: Any) -> tuple[int, int, int | None]:
    """(eos = state end, pad, bos) of a tokenizer that carries the language's special tokens."""
    eos = tokenizer.convert_tokens_to_ids(state_end_token())
    if eos is None or eos == tokenizer.unk_token_id:
        raise ValueError(f"tokenizer lacks the state-end token {state_end_token()!r}")
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else eos
    return int(eos), int(pad), tokenizer.bos_token_id


def from_scratch(shape: ModelShape, tokenizer: Any, max_positions: int) -> Built:
    """A freshly initialized LlamaForCausalLM sized to the tokenizer."""
    from transformers import LlamaForCausalLM

    eos, pad, bos = token_ids(tokenizer)
    config = llama_config(shape, len(tokenizer), bos, eos, pad, max_positions)
    config._attn_implementation = "sdpa"
    model = LlamaForCausalLM(config)
    return Built(model, tokenizer, eos, pad, bos)


def from_checkpoint(folder: Path) -> Built:
    """A model and tokenizer saved by this trainer (to resume)."""
    from transformers import AutoModelForCausalLM

    tokenizer = load_hf_tokenizer(folder)
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32", attn_implementation="sdpa")
    eos, pad, bos = token_ids(tokenizer)
    return Built(model, tokenizer, eos, pad, bos)


def for_finetuning(folder: Path) -> Built:
    """An existing causal LM and its tokenizer, with the language's special tokens added and embeddings resized."""
    from transformers import AutoModelForCausalLM

    if not Path(folder).is_dir():
        raise ValueError(f"--init-from {folder}: no such folder (a Hugging Face model folder is expected)")
    tokenizer = load_hf_tokenizer(folder)
    tokenizer.add_tokens(special_tokens(), special_tokens=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or state_end_token()
    try:
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32", attn_implementation="sdpa")
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot load a causal LM from {folder}: {exc}") from None
    if model.get_input_embeddings().weight.shape[0] < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer), mean_resizing=True)
    eos, pad, bos = token_ids(tokenizer)
    return Built(model, tokenizer, eos, pad, bos)


def count_params(model: Any) -> int:
    """Parameters, tied weights counted once."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
