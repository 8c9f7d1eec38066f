"""Packing tokenized documents into fixed-length sequences on disk, and reading them back.

A packed split is two raw arrays of shape ``[sequences, seq_len]``: ``{split}.tokens.bin`` (uint16
when the vocabulary fits, else uint32) and ``{split}.mask.bin`` (uint8, 1 where the token is a
training target). Documents are whole context windows; each starts with BOS and is placed whole into
one sequence (first fit over a few open sequences), so no window is cut; the rest is padding (mask 0).
The shapes and dtypes are recorded in the data folder's manifest.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

OPEN_BINS = 16  # sequences kept open for first-fit placement


def token_dtype(vocab_size: int) -> np.dtype:
    """uint16 when every id fits, else uint32."""
    return np.dtype(np.uint16) if vocab_size <= 65536 else np.dtype(np.uint32)


@dataclass
class _Bin:
    """One sequence being filled: token ids and the parallel loss mask."""

    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)


class SequenceWriter:
    """Appends documents (ids, mask) to a split's two files, packing them into `seq_len` sequences."""

    def __init__(self, folder: Path, split: str, seq_len: int, vocab_size: int, pad_id: int) -> None:
        self.seq_len = seq_len
        self.pad_id = pad_id
        self.dtype = token_dtype(vocab_size)
        self._tokens = open(Path(folder) / f"{split}.tokens.bin", "wb")
        self._mask = open(Path(folder) / f"{split}.mask.bin", "wb")
        self._open: list[_Bin] = []
        self.sequences = 0
        self.tokens = 0  # real (non-padding) tokens written
        self.target_tokens = 0
        self.documents = 0
        self.too_long = 0  # documents dropped because they exceed seq_len

    def add(self, ids: list[int], mask: list[int]) -> bool:
        """Place one document; returns False (and counts it) when it is longer than a sequence."""
        if len(ids) > self.seq_len:
            self.too_long += 1
            return False
        self.documents += 1
        self.tokens += len(ids)
        self.target_tokens += int(sum(mask))
        for bin_ in self._open:
            if len(bin_.ids) + len(ids) <= self.seq_len:
                bin_.ids.extend(ids)
                bin_.mask.extend(mask)
                break
        else:
            self._open.append(_Bin(list(ids), list(mask)))
            if len(self._open) > OPEN_BINS:
                fullest = max(range(len(self._open)), key=lambda i: len(self._open[i].ids))
                self._flush(self._open.pop(fullest))
        return True

    def _flush(self, bin_: _Bin) -> None:
        pad = self.seq_len - len(bin_.ids)
        ids = np.asarray(bin_.ids + [self.pad_id] * pad, dtype=self.dtype)
        mask = np.asarray(bin_.mask + [0] * pad, dtype=np.uint8)
        self._tokens.write(ids.tobytes())
        self._mask.write(mask.tobytes())
        self.sequences += 1

    def close(self) -> None:
        for bin_ in self._open:
            self._flush(bin_)
        self._open.clear()
        self._tokens.close()
        self._mask.close()


@dataclass
class PackedSplit:
    """A packed split opened read-only: `tokens` and `mask` are memmaps of shape [sequences, seq_len]."""

    tokens: np.ndarray
    mask: np.ndarray

    @classmethod
    def open(cls, folder: Path, split: str, sequences: int, seq_len: int, dtype: str) -> "PackedSplit":
        folder = Path(folder)
        shape = (sequences, seq_len)
        if sequences == 0:
            return cls(np.zeros((0, seq_len), dtype=dtype), np.zeros((0, seq_len), dtype=np.uint8))
        tokens = np.memmap(folder / f"{split}.tokens.bin", dtype=dtype, mode="r", shape=shape)
        mask = np.memmap(folder / f"{split}.mask.bin", dtype=np.uint8, mode="r", shape=shape)
        return cls(tokens, mask)

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def batch(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Token ids (int64) and mask (bool) of the given rows, in that order."""
        order = np.asarray(rows, dtype=np.int64)
        return self.tokens[order].astype(np.int64), self.mask[order].astype(bool)

    def labelled(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and labels (the id where the mask is on, -100 elsewhere) of the given rows."""
        ids, mask = self.batch(rows)
        return ids, np.where(mask, ids, -100)
