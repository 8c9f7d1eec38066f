"""Process layout: one process on CPU or one GPU, or several GPUs under torchrun (DDP)."""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class DistInfo:
    """This process's rank, the world size, and the torch device it trains on."""

    rank: int
    world: int
    local_rank: int
    device: str  # "cpu" or "cuda:N"

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def cuda(self) -> bool:
        return self.device.startswith("cuda")


def setup(device: str = "auto") -> DistInfo:
    """Read torchrun's environment; start the process group when WORLD_SIZE > 1."""
    import torch

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("--device cuda asked for, but torch sees no CUDA device")
        device = f"cuda:{local_rank}"
        torch.cuda.set_device(local_rank)
    if world > 1:
        import torch.distributed as dist

        dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    return DistInfo(rank=rank, world=world, local_rank=local_rank, device=device)


def teardown(info: DistInfo) -> None:
    """End the process group once every rank got here (the main rank's last evaluation and save run alone: a rank that
    tore its group down while another still held gloo work could abort at exit, seen once in CI)."""
    if info.world > 1:
        import torch.distributed as dist

        dist.barrier()
        dist.destroy_process_group()


def all_reduce_mean(value: float, info: DistInfo) -> float:
    """The mean of `value` over all ranks (the value itself on one process)."""
    if info.world == 1:
        return value
    import torch
    import torch.distributed as dist

    t = torch.tensor([value], dtype=torch.float64, device=info.device)
    dist.all_reduce(t)
    return float(t.item()) / info.world


def all_reduce_sum(value: int, info: DistInfo) -> int:
    """The sum of `value` over all ranks (the value itself on one process)."""
    if info.world == 1:
        return value
    import torch
    import torch.distributed as dist

    t = torch.tensor([value], dtype=torch.int64, device=info.device)
    dist.all_reduce(t)
    return int(t.item())


def any_rank(flag: bool, info: DistInfo) -> bool:
    """True when `flag` is true on any rank (so all ranks stop together)."""
    if info.world == 1:
        return flag
    import torch
    import torch.distributed as dist

    t = torch.tensor([1 if flag else 0], device=info.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())
