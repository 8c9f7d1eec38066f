"""Byte-level BPE tokenizer for the neural-debugger language.

Every special token of `model.prompt.language.SPECIAL_TOKENS` is one token (added as a special token,
never split, never merged with its neighbours); digits are split one per token (line numbers and
integer values tokenize regularly); the rest is byte-level BPE trained on rendered traces and
Python source. Saved as ``tokenizer.json`` + ``tokenizer_config.json`` that
``transformers.AutoTokenizer.from_pretrained(folder)`` and ``vllm serve`` load unchanged.

Decode with ``skip_special_tokens=False``: the structure of a state is in its special tokens.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from model.prompt.language import _SPLIT_RE, BOS, EOS, PAD, SPECIAL_TOKENS, STATE_END, Segment

if TYPE_CHECKING:
    from tokenizers import Tokenizer

DEFAULT_VOCAB_SIZE = 2048  # the synthetic corpus saturates near 2.4k merges (docs/language.md)
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"
_SPECIAL_SET = frozenset(SPECIAL_TOKENS)


class Encoder(Protocol):
    """Anything that turns text into ids: a `tokenizers.Tokenizer` or a transformers tokenizer."""

    def encode(self, text: str, *args: object, **kwargs: object) -> object: ...


# Pre-tokens: ``<module>``-style names whole, identifiers with underscores whole (an optional
# leading space), runs of punctuation, whitespace; digits are split one per pre-token before this.
PRETOKEN_PATTERN = r"<[a-z]+>| ?[\p{L}_][\p{L}\p{N}_]*| ?[^\s\p{L}\p{N}_]+(?: \z)?|\s+(?!\S)|\s+"


def _blank_tokenizer() -> "Tokenizer":
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.Split(Regex(PRETOKEN_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    return tok


def _plain_pieces(texts: Iterable[str]) -> Iterator[str]:
    """The text between special tokens: BPE merges must never reach into a special token."""
    for text in texts:
        for piece in _SPLIT_RE.split(text):
            if piece and piece not in _SPECIAL_SET:
                yield piece


def train_tokenizer(texts: Iterable[str], vocab_size: int = DEFAULT_VOCAB_SIZE) -> "Tokenizer":
    """Train byte-level BPE on `texts` (rendered traces and Python source); special tokens come first (ids 0..)."""
    from tokenizers import AddedToken, pre_tokenizers, trainers

    if vocab_size < len(SPECIAL_TOKENS) + 256:
        raise ValueError(f"vocab_size {vocab_size} is too small: {len(SPECIAL_TOKENS)} special tokens + 256 bytes at least")
    tok = _blank_tokenizer()
    specials = [AddedToken(t, special=True, normalized=False, single_word=False) for t in SPECIAL_TOKENS]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_plain_pieces(texts), trainer=trainer)
    tok.add_special_tokens(specials)
    return tok


def save_tokenizer(tok: "Tokenizer", folder: str | Path) -> Path:
    """Write ``tokenizer.json`` and ``tokenizer_config.json`` (a PreTrainedTokenizerFast) into `folder`."""
    from transformers import PreTrainedTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        additional_special_tokens=[t for t in SPECIAL_TOKENS if t not in (BOS, EOS, PAD)],
        clean_up_tokenization_spaces=False,
        model_max_length=2048,
    )
    fast.save_pretrained(str(folder))
    config_path = folder / CONFIG_FILE
    config = json.loads(config_path.read_text())
    # transformers 4.x reads a list under "additional_special_tokens" (5.x reads both): keep the portable key.
    extra = config.pop("extra_special_tokens", None)
    if isinstance(extra, list):
        config["additional_special_tokens"] = extra
    config.update({"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False})
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    return folder


def load_tokenizer(folder: str | Path) -> "Tokenizer":
    """The `tokenizers.Tokenizer` saved in `folder` (``tokenizer.json``)."""
    from tokenizers import Tokenizer

    path = Path(folder) / TOKENIZER_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {TOKENIZER_FILE} in {folder}: train one with model.prompt.tokenizer.train_tokenizer")
    return Tokenizer.from_file(str(path))


def encode(tok: Encoder, text: str) -> list[int]:
    """Token ids of `text` without any added BOS/EOS, for a `tokenizers.Tokenizer` or a transformers tokenizer."""
    from tokenizers import Tokenizer

    if isinstance(tok, Tokenizer):
        return tok.encode(text, add_special_tokens=False).ids
    return list(tok.encode(text, add_special_tokens=False))  # type: ignore[call-arg]


def encode_segments(tok: Encoder, segments: Sequence[Segment]) -> tuple[list[int], list[bool]]:
    """(ids, loss mask): each segment tokenized on its own (boundaries sit next to special tokens,
    so this equals tokenizing the whole text); the mask is True on the ids of predicted segments."""
    ids: list[int] = []
    mask: list[bool] = []
    for segment in segments:
        piece = encode(tok, segment.text)
        ids += piece
        mask += [segment.predicted] * len(piece)
    return ids, mask


def special_token_ids(tok: "Tokenizer") -> dict[str, int]:
    """Id of every special token (each one token)."""
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    missing = [t for t, i in ids.items() if i is None]
    if missing:
        raise ValueError(f"tokenizer lacks special tokens {missing}")
    return ids  # type: ignore[return-value]


def stop_token_id(tok: "Tokenizer") -> int:
    """Id of `STATE_END`, the token that ends a generated state."""
    return special_token_ids(tok)[STATE_END]
