"""Optimizers for the training loop: AdamW, or Muon for the hidden matrices with AdamW for the rest.

Whatever is built, the loop sees one object with `step`, `zero_grad`, `param_groups`, `state_dict` and
`load_state_dict`. Every parameter group carries its own `peak_lr`; the schedule sets
``group["lr"] = group["peak_lr"] * factor``, so AdamW's and Muon's very different learning rates follow
the same warmup / cosine / warmup-stable-decay shape.

Muon (`torch.optim.Muon`, Keller Jordan's Newton-Schulz orthogonalized momentum) takes the 2-D weight
matrices of the transformer blocks; embeddings, the LM head (tied to the embeddings or not), norms and
biases stay on AdamW, as Muon's authors and the torch documentation prescribe.
"""
from __future__ import annotations

from typing import Any, Literal

OptimizerKind = Literal["adamw", "muon"]
OPTIMIZERS: tuple[str, ...] = ("adamw", "muon")
# Keller Jordan's Muon reference (github.com/KellerJordan/Muon): lr 0.02 with the "original" shape
# adjustment sqrt(max(1, rows / cols)), momentum 0.95, Nesterov, 5 Newton-Schulz steps.
DEFAULT_MUON_LR = 0.02
MUON_MOMENTUM = 0.95


class OptimizerSet:
    """Several torch optimizers stepped together, seen by the loop as one (param_groups concatenated)."""

    def __init__(self, optimizers: list[Any], names: list[str]) -> None:
        if len(optimizers) != len(names):
            raise ValueError("one name per optimizer")
        self.optimizers = optimizers
        self.names = names

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return [group for opt in self.optimizers for group in opt.param_groups]

    def step(self) -> None:
        for opt in self.optimizers:
            opt.step()

    def zero_grad(self, set_to_none: bool = True) -> None:
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict[str, Any]:
        return {"kind": "set", "names": list(self.names), "optimizers": [opt.state_dict() for opt in self.optimizers]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("kind") != "set" or state.get("names") != self.names:
            raise ValueError(f"the saved optimizer state is not for {'+'.join(self.names)}: the run was saved with another --optimizer")
        for opt, saved in zip(self.optimizers, state["optimizers"]):
            opt.load_state_dict(saved)


def embedding_param_ids(model: Any) -> set[int]:
    """ids of every embedding table and of the output projection (the LM head), tied or not."""
    import torch

    ids = {id(p) for module in model.modules() if isinstance(module, torch.nn.Embedding) for p in module.parameters()}
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is not None:
        ids |= {id(p) for p in head.parameters()}
    return ids


def split_for_muon(model: Any) -> tuple[list[Any], list[Any], list[Any]]:
    """(hidden matrices for Muon, other matrices for AdamW with decay, 1-D tensors for AdamW without)."""
    params = [p for p in model.parameters() if p.requires_grad]
    embeddings = embedding_param_ids(model)
    hidden = [p for p in params if p.dim() == 2 and id(p) not in embeddings]
    other = [p for p in params if p.dim() >= 2 and (p.dim() != 2 or id(p) in embeddings)]
    flat = [p for p in params if p.dim() < 2]
    return hidden, other, flat


def build_optimizer(model: Any, kind: str, *, lr: float, muon_lr: float | None, weight_decay: float, betas: tuple[float, float],
                    fused: bool) -> Any:  # fmt: skip
    """AdamW (no weight decay on 1-D tensors; the state format of every earlier run), or Muon + AdamW.

    Muon's decoupled weight decay is scaled so that its shrink per step (lr x decay) equals AdamW's at
    every point of the schedule: weight_decay x lr / muon_lr.
    """
    import torch

    if kind == "adamw":
        params = [p for p in model.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay, "peak_lr": lr},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0, "peak_lr": lr}]  # fmt: skip
        return torch.optim.AdamW(groups, lr=lr, betas=betas, fused=fused or None)
    if kind != "muon":
        raise ValueError(f"unknown optimizer {kind!r}; choose one of {', '.join(OPTIMIZERS)}")
    hidden, other, flat = split_for_muon(model)
    if not hidden:
        raise ValueError("--optimizer muon: the model has no hidden 2-D weight matrices")
    m_lr = muon_lr or DEFAULT_MUON_LR
    muon = torch.optim.Muon([{"params": hidden, "peak_lr": m_lr}], lr=m_lr, weight_decay=weight_decay * lr / m_lr,
                            momentum=MUON_MOMENTUM, nesterov=True, adjust_lr_fn="original")  # fmt: skip
    adam_groups = [{"params": other, "weight_decay": weight_decay, "peak_lr": lr}, {"params": flat, "weight_decay": 0.0, "peak_lr": lr}]
    adamw = torch.optim.AdamW([g for g in adam_groups if g["params"]], lr=lr, betas=betas, fused=fused or None)
    return OptimizerSet([muon, adamw], ["muon", "adamw"])
