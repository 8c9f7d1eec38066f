"""Distillation from a frozen teacher on a second packed data set (learning without forgetting).

A fine-tune on new data (real code) loses some of what the model knew (synthetic programs). With
`--distill-from TEACHER --distill-data PACKED`, every optimizer step also takes `distill_batch`
sequences of PACKED and adds `weight * T^2 * KL(teacher || student)` at temperature `T`, averaged over
their target tokens (the state tokens the loss mask marks), to the step's loss: the student keeps the
teacher's whole next-token distribution on that data while the main batches teach it the new data.
The teacher runs without gradients in eval mode; its tokenizer must be the student's.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from train.manifest import Manifest
from train.packing import PackedSplit
from train.schedule import SequenceOrder

DISTILL_SEED_OFFSET = 7919  # the distill data's visiting order is seeded apart from the main data's


def token_kl(student_logits: Any, teacher_logits: Any, labels: Any, temperature: float = 1.0) -> Any:
    """Mean over target positions of T^2 * KL(softmax(teacher/T) || softmax(student/T)), in fp32.

    Logits are [batch, seq, vocab]; labels [batch, seq] with -100 off target. Position t's logits
    predict token t+1, so target t+1 selects logits at t (as the causal LM loss shifts them).
    """
    import torch

    targets = labels[:, 1:] != -100
    if not bool(targets.any()):
        return student_logits.sum() * 0.0
    s = student_logits[:, :-1][targets].float() / temperature
    t = teacher_logits[:, :-1][targets].float() / temperature
    log_p_t = torch.log_softmax(t, dim=-1)
    log_p_s = torch.log_softmax(s, dim=-1)
    kl = (log_p_t.exp() * (log_p_t - log_p_s)).sum(dim=-1)
    return kl.mean() * temperature**2


def _vocab(tokenizer: Any) -> dict[str, int]:
    return dict(tokenizer.get_vocab())


@dataclass
class Distiller:
    """The teacher, the distill data and its visiting order; `loss(student)` is the next batch's KL term."""

    teacher: Any
    split: PackedSplit
    order: SequenceOrder
    weight: float
    temperature: float
    batch: int

    @classmethod
    def open(cls, teacher_dir: Path, data_dir: Path, student_tokenizer: Any, main_manifest: Manifest, *, weight: float,
             temperature: float, batch: int, seed: int, cursor: int, device: Any) -> "Distiller":  # fmt: skip
        """Load the teacher and open the distill data, refusing a tokenizer or context length the student does not share."""
        from train import modeling

        teacher_dir, data_dir = Path(teacher_dir), Path(data_dir)
        if not teacher_dir.is_dir():
            raise ValueError(f"--distill-from {teacher_dir}: no such folder (a model folder is expected)")
        manifest = Manifest.load(data_dir)
        if manifest.tokenizer_sha256 != main_manifest.tokenizer_sha256 or manifest.value_chars != main_manifest.value_chars:
            raise ValueError(f"--distill-data {data_dir} was packed with another tokenizer than the training data; pack it with the same --tokenizer")
        if manifest.seq_len > main_manifest.seq_len:
            raise ValueError(f"--distill-data {data_dir} has {manifest.seq_len}-token sequences, longer than the training data's {main_manifest.seq_len}")
        try:
            built = modeling.from_checkpoint(teacher_dir)
        except (OSError, ValueError) as exc:
            raise ValueError(f"--distill-from {teacher_dir}: cannot load a causal LM: {exc}") from None
        if _vocab(built.tokenizer) != _vocab(student_tokenizer):
            raise ValueError(f"--distill-from {teacher_dir}: its tokenizer is not the student's; distillation compares next-token distributions over one vocabulary")
        teacher = built.model.to(device).eval()
        teacher.requires_grad_(False)
        train = manifest.splits.get("train")
        split = PackedSplit.open(data_dir, "train", train.sequences if train else 0, manifest.seq_len, manifest.dtype)
        if len(split) == 0:
            raise ValueError(f"--distill-data {data_dir} has no training sequences")
        order = SequenceOrder(len(split), seed + DISTILL_SEED_OFFSET, cursor=cursor)
        return cls(teacher, split, order, weight, temperature, batch)

    def next_batch(self, rank: int, world: int, device: Any) -> tuple[Any, Any]:
        """This rank's distill sequences for one step, as (input_ids, labels) tensors."""
        import torch

        ids, labels = self.split.labelled(self.order.take_rank(self.batch, rank, world))
        return torch.from_numpy(ids).to(device), torch.from_numpy(labels).to(device)

    def loss(self, student: Any, ids: Any, labels: Any, autocast: Callable[[], Any]) -> Any:
        """The weighted KL term on one batch (differentiable in the student only)."""
        import torch

        with torch.no_grad(), autocast():
            teacher_logits = self.teacher(input_ids=ids).logits
        with autocast():
            student_logits = student(input_ids=ids).logits
        vocab = min(teacher_logits.shape[-1], student_logits.shape[-1])  # padded embedding rows beyond the tokenizer never score
        return self.weight * token_kl(student_logits[..., :vocab], teacher_logits[..., :vocab], labels, self.temperature)
