"""The training loop: AdamW or Muon + AdamW, warmup + cosine or warmup-stable-decay, gradient accumulation and clipping, held-out evaluation,
checkpoint and resume, a live progress bar, JSONL metrics; CPU, one GPU, or several under torchrun.

`train(TrainConfig(...))` is the whole run; `train/cli.py` only maps options onto `TrainConfig`.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from train import checkpoint, distributed, metrics
from train.manifest import Manifest, MaskMode
from train.optim import OptimizerKind, build_optimizer
from train.schedule import ScheduleKind, SequenceOrder, lr_factor, warmup_steps, wsd_decay_due

DEFAULT_LR = {"tiny": 2e-3, "small": 1e-3, "base": 6e-4, "large": 4e-4}
FINETUNE_LR = 1e-4


class TrainConfig(BaseModel):
    """Every knob of a run (the CLI's options)."""

    data: Path | None = None  # a packed data folder, or a folder of trajectory JSONL shards (packed into OUT/data)
    out: Path
    preset: str | None = None
    config_file: Path | None = None
    init_from: Path | None = None
    steps: int | None = Field(default=None, gt=0)
    time_budget_min: float | None = Field(default=None, gt=0)
    stop_after: int | None = Field(default=None, gt=0)  # stop (and save) after this many steps in this invocation
    resume: bool = False
    overwrite: bool = False
    micro_batch: int = Field(default=4, gt=0)
    grad_accum: int = Field(default=1, gt=0)
    lr: float | None = Field(default=None, gt=0)
    optimizer: OptimizerKind = "adamw"  # muon: Muon on the hidden matrices, AdamW (at `lr`) on the rest
    muon_lr: float | None = Field(default=None, gt=0)  # Muon's peak lr (default train.optim.DEFAULT_MUON_LR)
    schedule: ScheduleKind = "cosine"  # wsd: warmup, constant, then linear decay over the last decay_fraction
    decay_fraction: float = Field(default=0.2, gt=0, le=1)  # of the steps, or of the time budget when there is one
    min_lr_ratio: float = Field(default=0.1, ge=0, le=1)
    warmup: int | None = None
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    eval_every: int = Field(default=250, gt=0)
    eval_sequences: int = Field(default=32, ge=0)
    eval_states: int = Field(default=16, ge=0)
    save_every: int = Field(default=500, gt=0)
    log_every: int = Field(default=10, gt=0)
    seed: int = 0
    device: Literal["auto", "cpu", "cuda"] = "auto"
    compile: bool = False
    # auto: bf16 autocast on CUDA, fp32 on the CPU; bf16: autocast on either device; bf16-matmul: fp32
    # weights and activations, oneDNN matmuls in bf16 on the CPU (AMX / AVX512-BF16: 1.6x fp32's tokens/s
    # on this machine, bench/bench_train_throughput.py); fp32: no reduced precision anywhere
    precision: Literal["auto", "fp32", "bf16", "bf16-matmul"] = "auto"
    threads: int | None = None
    peak_tflops: float | None = None
    save_dtype: Literal["float32", "bfloat16"] = "float32"
    progress: bool = True
    # used only when --data holds trajectories and must be packed first
    seq_len: int = Field(default=1024, gt=8)
    mask: MaskMode = "states"
    heldout_fraction: float = Field(default=0.05, ge=0, lt=1)
    # distillation (train/distill.py): a frozen teacher's next-token distributions on a second packed data set
    distill_from: Path | None = None
    distill_data: Path | None = None
    distill_weight: float = Field(default=1.0, gt=0)
    distill_temperature: float = Field(default=1.0, gt=0)
    distill_batch: int = Field(default=2, gt=0)


class RunState(BaseModel):
    """The counters a resumed run continues from."""

    step: int = 0
    total_steps: int = 0
    cursor: int = 0  # sequences consumed (SequenceOrder.cursor)
    distill_cursor: int = 0  # distill-data sequences consumed
    tokens_seen: int = 0
    elapsed_s: float = 0.0  # training wall time over all runs so far
    best_heldout_loss: float | None = None
    warmup: int | None = None  # fixed once the run is past it
    decay_start: int | None = None  # wsd: the step its decay began (fixed once reached)


class _Stop:
    """Set by SIGTERM / SIGINT so the loop saves a checkpoint and exits cleanly."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        def handler(signum: int, frame: Any) -> None:  # noqa: ARG001
            self.requested = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                self._previous[sig] = signal.signal(sig, handler)
            except ValueError:  # not the main thread
                pass

    def restore(self) -> None:
        """The handlers from before `install` (a process that goes on after training, e.g. to evaluate, stays stoppable)."""
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()


def _threads(requested: int | None) -> int:
    """Torch CPU threads: as requested, else every core, or 1 when the machine is already busier than its
    cores (threads that wait on each other at every barrier lose more than they gain there: measured
    ~1.6x slower with 2 threads than with 1 on a 2-core machine at load 12)."""
    import torch

    cores = len(os.sched_getaffinity(0))
    n = requested or (1 if os.getloadavg()[0] > cores else cores)
    torch.set_num_threads(max(1, n))
    return n


@contextlib.contextmanager
def matmul_precision(precision: str, cuda: bool) -> Iterator[None]:
    """bf16-matmul on the CPU: oneDNN computes fp32 matmuls in bf16 while the block runs (the setting is
    process-wide, so it is restored afterwards); a no-op for every other precision and on CUDA."""
    import torch

    if precision != "bf16-matmul" or cuda:
        yield
        return
    matmul = getattr(torch.backends.mkldnn, "matmul", None)
    if matmul is None or not hasattr(matmul, "fp32_precision"):
        raise ValueError("--precision bf16-matmul needs torch.backends.mkldnn.matmul.fp32_precision (PyTorch >= 2.9)")
    before = matmul.fp32_precision
    matmul.fp32_precision = "bf16"
    try:
        yield
    finally:
        matmul.fp32_precision = before


def _seed_all(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _rng_state() -> dict[str, Any]:
    import torch

    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _optimizer(model: Any, cfg: TrainConfig, lr: float, cuda: bool) -> Any:
    """AdamW (no weight decay on norms and biases; fused on CUDA), or Muon + AdamW (`train.optim`)."""
    return build_optimizer(model, cfg.optimizer, lr=lr, muon_lr=cfg.muon_lr, weight_decay=cfg.weight_decay,
                           betas=(cfg.beta1, cfg.beta2), fused=cuda)  # fmt: skip


def _prepare(cfg: TrainConfig, info: distributed.DistInfo) -> tuple[Any, Path, RunState, dict[str, Any] | None]:
    """Build or reload the model, make sure the data is packed for its tokenizer; (built, data dir, state, saved)."""
    from train import data, modeling
    from train.presets import load_shape

    saved = None
    if cfg.resume:
        saved = checkpoint.load_trainer_state(cfg.out)
        built = modeling.from_checkpoint(cfg.out)
        data_dir = Path(saved["data_dir"])
        Manifest.load(data_dir)
        return built, data_dir, RunState.model_validate(saved["run"]), saved
    if cfg.init_from is not None:
        built = modeling.for_finetuning(cfg.init_from)
        data_dir = data.ensure_packed(cfg.data, cfg.out, built.tokenizer, cfg.seq_len, cfg.mask, cfg.heldout_fraction, cfg.seed, info.main)
    else:
        data_dir = data.ensure_packed(cfg.data, cfg.out, None, cfg.seq_len, cfg.mask, cfg.heldout_fraction, cfg.seed, info.main)
        tokenizer = modeling.load_hf_tokenizer(data_dir / "tokenizer")
        shape = load_shape(cfg.preset, cfg.config_file)
        built = modeling.from_scratch(shape, tokenizer, Manifest.load(data_dir).seq_len)
    return built, data_dir, RunState(), saved


def _check_out(cfg: TrainConfig) -> None:
    if cfg.resume:
        if not checkpoint.has_trainer_state(cfg.out):
            raise ValueError(f"--resume: {cfg.out} holds no trainer state to resume from")
        return
    if checkpoint.has_trainer_state(cfg.out) and not cfg.overwrite:
        raise ValueError(f"{cfg.out} already holds a training run; pass --resume to continue it or --overwrite to start over")
    if cfg.preset and cfg.config_file:
        raise ValueError("give --preset or --config, not both")
    if cfg.init_from and (cfg.preset or cfg.config_file):
        raise ValueError("--init-from fine-tunes an existing model: --preset / --config do not apply")
    if (cfg.distill_from is None) != (cfg.distill_data is None):
        raise ValueError("distillation needs both --distill-from (the teacher) and --distill-data (a packed data folder)")


def _plan_steps(cfg: TrainConfig, run: RunState) -> int:
    """The schedule length before any timing is known."""
    if cfg.steps is not None:
        return cfg.steps
    if cfg.time_budget_min is not None:
        return max(run.total_steps, run.step + 10_000)  # re-estimated from timing after the first steps
    return max(run.total_steps, 1000) if run.total_steps else 1000


class Trainer:
    """One run: holds the model, optimizer, data and counters; `run()` trains until the steps or the budget end."""

    def __init__(self, cfg: TrainConfig) -> None:
        import torch

        self.cfg = cfg
        self.info = distributed.setup(cfg.device)
        self.threads = _threads(cfg.threads)
        _seed_all(cfg.seed + self.info.rank)
        cfg.out.mkdir(parents=True, exist_ok=True)
        _check_out(cfg)
        if cfg.overwrite and not cfg.resume and self.info.main:
            metrics_path = cfg.out / metrics.METRICS_FILE
            metrics_path.unlink(missing_ok=True)
        self.built, self.data_dir, self.run_state, saved = _prepare(cfg, self.info)
        self.manifest = Manifest.load(self.data_dir)
        from train.packing import PackedSplit

        splits = self.manifest.splits
        self.train_split = PackedSplit.open(self.data_dir, "train", splits["train"].sequences, self.manifest.seq_len, self.manifest.dtype)
        held = splits.get("heldout")
        self.heldout = PackedSplit.open(self.data_dir, "heldout", held.sequences if held else 0, self.manifest.seq_len, self.manifest.dtype)
        if len(self.train_split) == 0:
            raise ValueError(f"{self.data_dir} has no training sequences")
        self.model = self.built.model.to(self.info.device)
        self.model.train()
        from train.modeling import count_params

        self.params = count_params(self.model)
        preset_name = cfg.preset or ("finetune" if cfg.init_from else "tiny")
        self.peak_lr = cfg.lr or saved_lr(saved) or (FINETUNE_LR if cfg.init_from else DEFAULT_LR.get(preset_name, 1e-3))
        self.optimizer = _optimizer(self.model, cfg, self.peak_lr, self.info.cuda)
        self.order = SequenceOrder(len(self.train_split), cfg.seed, cursor=self.run_state.cursor)
        if saved is not None:
            self.optimizer.load_state_dict(saved["optimizer"])
            _set_rng_state(saved["rng"])
        self.run_state.total_steps = _plan_steps(cfg, self.run_state)
        if self.run_state.warmup is None:
            self.run_state.warmup = warmup_steps(self.run_state.total_steps, cfg.warmup)
        self.forward_model = torch.compile(self.model) if cfg.compile else self.model
        if self.info.world > 1:
            from torch.nn.parallel import DistributedDataParallel as DDP

            self.forward_model = DDP(self.forward_model, device_ids=[self.info.local_rank] if self.info.cuda else None)
        self.log = metrics.MetricsLog(cfg.out, self.info.main)
        device_name = torch.cuda.get_device_name(self.info.local_rank) if self.info.cuda else None
        self.peak = metrics.peak_flops(device_name, cfg.peak_tflops)
        config = self.model.config
        self.flops_per_token = metrics.flops_per_token(self.params, config.num_hidden_layers, config.hidden_size, self.manifest.seq_len)
        self.tokens_per_step = cfg.micro_batch * cfg.grad_accum * self.info.world * self.manifest.seq_len
        self.distiller = self._distiller()
        self.stop = _Stop()
        self.first_step = self.run_state.step
        self.first_step_s = 0.0

    def _distiller(self) -> Any:
        cfg = self.cfg
        if cfg.distill_from is None or cfg.distill_data is None:
            return None
        from train.distill import Distiller

        return Distiller.open(cfg.distill_from, cfg.distill_data, self.built.tokenizer, self.manifest, weight=cfg.distill_weight,
                              temperature=cfg.distill_temperature, batch=cfg.distill_batch, seed=cfg.seed,
                              cursor=self.run_state.distill_cursor, device=self.info.device)  # fmt: skip

    # ---- one optimizer step -------------------------------------------------------------------
    def _autocast(self) -> Any:
        import contextlib

        import torch

        precision = self.cfg.precision
        if precision == "bf16" or (precision == "auto" and self.info.cuda):
            return torch.autocast("cuda" if self.info.cuda else "cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _micro_batches(self) -> list[tuple[Any, Any]]:
        """This rank's micro-batches for one step, as (input_ids, labels) tensors on the device."""
        import torch

        cfg, info = self.cfg, self.info
        out = []
        for _ in range(cfg.grad_accum):
            ids, labels = self.train_split.labelled(self.order.take_rank(cfg.micro_batch, info.rank, info.world))
            out.append((torch.from_numpy(ids).to(info.device, non_blocking=True), torch.from_numpy(labels).to(info.device, non_blocking=True)))
        return out

    def _distill_backward(self) -> float | None:
        """The distillation term's backward (before the main micro-batches, so DDP syncs its gradient with theirs); its value."""
        import contextlib

        if self.distiller is None:
            return None
        ids, labels = self.distiller.next_batch(self.info.rank, self.info.world, self.info.device)
        sync = contextlib.nullcontext() if self.info.world == 1 else self.forward_model.no_sync()
        with sync:
            term = self.distiller.loss(self.forward_model, ids, labels, self._autocast)
            term.backward()
        return distributed.all_reduce_mean(float(term.detach()), self.info)

    def _train_step(self) -> tuple[float, float | None]:
        """Forward, backward and update over `grad_accum` micro-batches on every rank (plus the distillation term, if any).

        The gradient is that of the mean loss over all target tokens of the step, on all ranks
        together (as one process with `grad_accum * world` micro-batches would compute it): each rank
        divides its summed loss by the step's total target count and multiplies by the world size,
        which DDP's gradient averaging divides out. Returns this rank's share times the world size,
        whose mean over ranks is the step's mean target-token loss, and the distillation term (mean over ranks).
        """
        import contextlib

        import torch

        distill = self._distill_backward()
        batches = self._micro_batches()
        # targets are labels[:, 1:] != -100 (the model shifts internally)
        local_items = sum(int((labels[:, 1:] != -100).sum()) for _, labels in batches)
        n_items = distributed.all_reduce_sum(local_items, self.info)
        n_items_t = torch.tensor(max(1, n_items), device=self.info.device)
        total = 0.0
        for i, (ids, labels) in enumerate(batches):
            last = i == len(batches) - 1
            sync = contextlib.nullcontext() if (last or self.info.world == 1) else self.forward_model.no_sync()
            with sync, self._autocast():
                loss = self.forward_model(input_ids=ids, labels=labels, num_items_in_batch=n_items_t).loss * self.info.world
            loss.backward()
            total += float(loss.detach())
        if self.cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return total, distill

    # ---- evaluation, saving --------------------------------------------------------------------
    def evaluate(self) -> dict[str, Any]:
        """Held-out loss (mean over target tokens) and next-state exact match, on the main rank."""
        from train import evaluation

        out: dict[str, Any] = {}
        self.model.eval()
        try:
            if len(self.heldout) and self.cfg.eval_sequences:
                out["heldout_loss"] = evaluation.heldout_loss(self.model, self.heldout, self.cfg.eval_sequences, self.cfg.micro_batch, self.info.device, self._autocast)
            if self.cfg.eval_states:
                out.update(evaluation.next_state_accuracy(self.model, self.built, self.data_dir, self.cfg.eval_states, self.info.device, self._autocast))
        finally:
            self.model.train()
        return out

    def save(self) -> None:
        if not self.info.main:
            return
        import torch

        model = self.model
        if self.cfg.save_dtype == "bfloat16":
            import copy

            model = copy.deepcopy(self.model).to(dtype=torch.bfloat16)
        b = self.built
        checkpoint.save_hf_folder(model, b.tokenizer, self.cfg.out, b.eos_id, b.pad_id, b.bos_id)
        checkpoint.save_trainer_state(
            self.cfg.out,
            {
                "run": self.run_state.model_dump(),
                "optimizer": self.optimizer.state_dict(),
                "rng": _rng_state(),
                "data_dir": str(self.data_dir.resolve()),
                "peak_lr": self.peak_lr,
                "config": self.cfg.model_dump(mode="json"),
            },
        )

    # ---- the loop --------------------------------------------------------------------------------
    def _update_plan(self, run_elapsed: float, steps_this_run: int) -> None:
        """With a time budget: stretch or shrink the cosine schedule to the steps the budget still allows."""
        cfg, rs = self.cfg, self.run_state
        if cfg.time_budget_min is None or steps_this_run < 2:
            return
        remaining = cfg.time_budget_min * 60 - rs.elapsed_s
        per_step = (run_elapsed - self.first_step_s) / (steps_this_run - 1)  # the first step pays for warm-up / compile
        estimate = rs.step + max(0, int(remaining / per_step))
        if cfg.steps is not None:
            estimate = min(estimate, cfg.steps)
        rs.total_steps = max(rs.step + 1, estimate)
        if rs.warmup is not None and rs.step < rs.warmup:
            rs.warmup = max(rs.step, warmup_steps(rs.total_steps, cfg.warmup))

    def _set_lr(self) -> float:
        """Set every parameter group's lr to its peak times the schedule's factor at this step; the AdamW lr."""
        cfg, rs = self.cfg, self.run_state
        if cfg.schedule == "wsd" and rs.decay_start is None:
            budget_s = cfg.time_budget_min * 60 if cfg.time_budget_min is not None else None
            remaining_s = budget_s - rs.elapsed_s if budget_s is not None else None
            if wsd_decay_due(rs.step, rs.total_steps, cfg.decay_fraction, remaining_s=remaining_s, budget_s=budget_s):
                rs.decay_start = max(rs.step, rs.warmup or 0)
        factor = lr_factor(cfg.schedule, rs.step, rs.total_steps, rs.warmup or 0, cfg.min_lr_ratio, rs.decay_start)
        for group in self.optimizer.param_groups:
            group["lr"] = group.get("peak_lr", self.peak_lr) * factor
        return self.peak_lr * factor

    def _done(self) -> bool:
        cfg, rs = self.cfg, self.run_state
        over = rs.step >= rs.total_steps or (cfg.steps is not None and rs.step >= cfg.steps)
        if cfg.time_budget_min is not None and rs.elapsed_s >= cfg.time_budget_min * 60:
            over = True
        if cfg.stop_after is not None and rs.step - self.first_step >= cfg.stop_after:
            over = True
        return distributed.any_rank(over or self.stop.requested, self.info)

    def run(self) -> dict[str, Any]:
        """Train to the end of the schedule or the budget; save; return the final summary."""
        cfg, rs = self.cfg, self.run_state
        self.stop.install()
        self.log.write("start", params=self.params, threads=self.threads, device=self.info.device, world=self.info.world,
                       seq_len=self.manifest.seq_len, tokens_per_step=self.tokens_per_step, peak_lr=self.peak_lr,
                       resumed_at=rs.step, data=str(self.data_dir), config=cfg.model_dump(mode="json"))
        bar = self._progress()
        started, steps_this_run, prior_elapsed = time.perf_counter(), 0, rs.elapsed_s
        window_t, window_tokens = time.perf_counter(), 0
        last_eval: dict[str, Any] = {}
        while not self._done():
            lr = self._set_lr()
            local_loss, distill = self._train_step()
            loss = distributed.all_reduce_mean(local_loss, self.info)
            rs.step += 1
            steps_this_run += 1
            rs.cursor = self.order.cursor
            if self.distiller is not None:
                rs.distill_cursor = self.distiller.order.cursor
            rs.tokens_seen += self.tokens_per_step
            window_tokens += self.tokens_per_step
            run_elapsed = time.perf_counter() - started
            if steps_this_run == 1:
                self.first_step_s = run_elapsed
            rs.elapsed_s = prior_elapsed + run_elapsed
            if steps_this_run <= 20 or rs.step % cfg.log_every == 0:
                self._update_plan(run_elapsed, steps_this_run)
            if rs.step % cfg.log_every == 0 or rs.step == 1:
                now = time.perf_counter()
                tps = window_tokens / max(1e-9, now - window_t)
                window_t, window_tokens = now, 0
                mfu = self.flops_per_token * tps / self.peak if self.peak else None
                extra = {} if distill is None else {"distill_kl": distill / self.cfg.distill_weight}
                self.log.write("train", step=rs.step, total_steps=rs.total_steps, loss=loss, lr=lr, tokens_per_s=tps, mfu=mfu,
                               tokens_seen=rs.tokens_seen, epochs=self.order.epochs, elapsed_s=rs.elapsed_s, **extra)
                self._bar_update(bar, loss, lr, tps, mfu, extra.get("distill_kl"))
            elif bar is not None:
                bar.total = rs.total_steps
                bar.update(rs.step - bar.n)
            if rs.step % cfg.eval_every == 0 and self.info.main:
                last_eval = self._eval_and_log()
            if rs.step % cfg.save_every == 0:
                self.save()
        if bar is not None:
            bar.close()
        if self.info.main:
            last_eval = self._eval_and_log() if (rs.step % cfg.eval_every or not last_eval) else last_eval
        self.save()
        summary = self._summary(last_eval)
        if self.info.main:
            checkpoint.write_summary(cfg.out, summary)
            self.log.write("end", **summary)
        distributed.teardown(self.info)
        self.stop.restore()
        return summary

    def _eval_and_log(self) -> dict[str, Any]:
        result = self.evaluate()
        loss = result.get("heldout_loss")
        if loss is not None and (self.run_state.best_heldout_loss is None or loss < self.run_state.best_heldout_loss):
            self.run_state.best_heldout_loss = loss
        self.log.write("eval", step=self.run_state.step, **result)
        if self.cfg.progress and self.info.main:
            from tqdm import tqdm

            shown = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in result.items() if not isinstance(v, dict)}
            tqdm.write(f"step {self.run_state.step}: {shown}")
        return result

    def _progress(self) -> Any:
        if not (self.cfg.progress and self.info.main):
            return None
        from tqdm import tqdm

        return tqdm(total=self.run_state.total_steps, initial=self.run_state.step, unit="step", dynamic_ncols=True)

    def _bar_update(self, bar: Any, loss: float, lr: float, tps: float, mfu: float | None, distill_kl: float | None) -> None:
        if bar is None:
            return
        if bar.total != self.run_state.total_steps:
            bar.total = self.run_state.total_steps
        bar.update(self.run_state.step - bar.n)
        post = {"loss": f"{loss:.3f}", "lr": f"{lr:.2e}", "tok/s": f"{tps:,.0f}"}
        if distill_kl is not None:
            post["kl"] = f"{distill_kl:.3f}"
        if mfu is not None:
            post["mfu"] = f"{100 * mfu:.1f}%"
        bar.set_postfix(post, refresh=True)

    def _summary(self, last_eval: dict[str, Any]) -> dict[str, Any]:
        rs, m = self.run_state, self.manifest
        tps = rs.tokens_seen / rs.elapsed_s if rs.elapsed_s else 0.0
        return {
            "params": self.params,
            "steps": rs.step,
            "tokens_seen": rs.tokens_seen,
            "elapsed_s": round(rs.elapsed_s, 1),
            "tokens_per_s": round(tps, 1),
            "epochs": round(self.order.epochs, 3),
            "seq_len": m.seq_len,
            "data": {"dir": str(self.data_dir), "mask": m.mask, "splits": {k: v.model_dump() for k, v in m.splits.items()}},
            "peak_lr": self.peak_lr,
            "best_heldout_loss": rs.best_heldout_loss,
            "final_eval": last_eval,
            "init_from": str(self.cfg.init_from) if self.cfg.init_from else None,
            "init_from_summary": _prior_summary(self.cfg.init_from),
            "distill": self._distill_summary(),
        }

    def _distill_summary(self) -> dict[str, Any] | None:
        cfg, d = self.cfg, self.distiller
        if d is None:
            return None
        return {"teacher": str(cfg.distill_from), "data": str(cfg.distill_data), "weight": cfg.distill_weight,
                "temperature": cfg.distill_temperature, "batch": cfg.distill_batch, "sequences_seen": d.order.cursor,
                "epochs": round(d.order.epochs, 3)}  # fmt: skip


def _prior_summary(folder: Path | None) -> dict[str, Any] | None:
    """What the checkpoint a fine-tune started from had seen (its own training_summary.json), if it says."""
    if folder is None:
        return None
    try:
        prior = json.loads((Path(folder) / "training_summary.json").read_text())
    except (OSError, ValueError):
        return None
    keep = ("steps", "tokens_seen", "elapsed_s", "tokens_per_s", "init_from")
    earlier = prior.get("init_from_summary") or {}
    before = earlier.get("tokens_seen_total", earlier.get("tokens_seen")) or 0
    total = (prior.get("tokens_seen") or 0) + before  # over every stage of fine-tuning that led to it
    return {k: prior.get(k) for k in keep} | {"data_dir": prior.get("data", {}).get("dir"), "tokens_seen_total": total}


def saved_lr(saved: dict[str, Any] | None) -> float | None:
    return None if saved is None else saved.get("peak_lr")


# Fields that shape the optimization: a resumed run keeps the saved values of these.
RESUME_KEEPS = ("micro_batch", "grad_accum", "lr", "optimizer", "muon_lr", "schedule", "decay_fraction", "min_lr_ratio", "warmup", "weight_decay", "beta1", "beta2", "grad_clip",
                "seed", "save_dtype", "preset", "config_file", "init_from", "seq_len", "mask", "heldout_fraction",
                "distill_from", "distill_data", "distill_weight", "distill_temperature", "distill_batch")


def resolve_config(cfg: TrainConfig) -> TrainConfig:
    """Fill defaults: 1000 steps when neither steps nor a budget is given; on resume, the saved run's
    optimization settings (RESUME_KEEPS) and its steps / budget unless new ones are given."""
    if cfg.resume:
        if not checkpoint.has_trainer_state(cfg.out):
            raise ValueError(f"--resume: {cfg.out} holds no trainer state to resume from")
        saved = checkpoint.load_trainer_state(cfg.out)["config"]
        update = {k: saved[k] for k in RESUME_KEEPS if k in saved}
        if cfg.steps is None and cfg.time_budget_min is None:
            update |= {"steps": saved.get("steps"), "time_budget_min": saved.get("time_budget_min")}
        cfg = TrainConfig.model_validate(cfg.model_dump() | update)
    elif cfg.data is None:
        raise ValueError("--data is required (except with --resume)")
    if cfg.steps is None and cfg.time_budget_min is None:
        cfg = cfg.model_copy(update={"steps": 1000})
    return cfg


def train(cfg: TrainConfig) -> dict[str, Any]:
    """Run one training job end to end (see `TrainConfig`); returns the summary written beside the model."""
    cfg = resolve_config(cfg)
    with matmul_precision(cfg.precision, cfg.device == "cuda" or (cfg.device == "auto" and _cuda_available())):
        return Trainer(cfg).run()


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


