"""`neural-debugger train`: train a model from scratch or fine-tune one; options map onto `TrainConfig`."""
from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(add_completion=False, help="Train or fine-tune a neural debugger model.")


@app.command()
def train(
    data: Path | None = typer.Option(None, help="packed data folder (python -m train.data) or a folder of trajectory shards; required unless --resume"),
    out: Path = typer.Option(..., help="output: a Hugging Face model folder (trainer state in OUT/trainer_state)"),
    preset: str | None = typer.Option(None, help="model size: tiny | small | base | large (default tiny)"),
    config: Path | None = typer.Option(None, "--config", help="JSON file of model shape fields instead of a preset"),
    init_from: Path | None = typer.Option(None, help="fine-tune this Hugging Face causal LM folder"),
    steps: int | None = typer.Option(None, help="optimizer steps (default 1000 without --time-budget)"),
    time_budget: float | None = typer.Option(None, help="train for this many minutes of wall time (total over resumes)"),
    stop_after: int | None = typer.Option(None, help="stop (and save) after this many steps in this invocation; the schedule is unchanged"),
    resume: bool = typer.Option(False, help="continue the run saved in OUT (its optimization settings are kept)"),
    overwrite: bool = typer.Option(False, help="start over even if OUT holds a run"),
    batch: int = typer.Option(4, help="sequences per micro-batch (per process)"),
    grad_accum: int = typer.Option(1, help="micro-batches per optimizer step"),
    lr: float | None = typer.Option(None, help="peak learning rate (default by preset; 1e-4 when fine-tuning)"),
    warmup: int | None = typer.Option(None, help="warmup steps (default 5% of the run, at most 200)"),
    optimizer: str = typer.Option("adamw", help="adamw | muon (Muon on the hidden matrices, AdamW at --lr on embeddings, head, norms)"),
    muon_lr: float | None = typer.Option(None, help="Muon's peak learning rate (default 0.02), scheduled like --lr"),
    schedule: str = typer.Option("cosine", help="cosine (warmup + cosine) | wsd (warmup-stable-decay: constant, then linear decay)"),
    decay_fraction: float = typer.Option(0.2, help="wsd: decay over this last fraction of the steps, or of the time budget"),
    weight_decay: float = typer.Option(0.1),
    grad_clip: float = typer.Option(1.0),
    eval_every: int = typer.Option(250, help="steps between held-out evaluations"),
    eval_sequences: int = typer.Option(32, help="held-out sequences for the held-out loss"),
    eval_states: int = typer.Option(16, help="held-out next states decoded for exact match"),
    save_every: int = typer.Option(500, help="steps between checkpoints"),
    log_every: int = typer.Option(10, help="steps between metrics lines"),
    seed: int = typer.Option(0),
    device: str = typer.Option("auto", help="auto | cpu | cuda"),
    compile: bool = typer.Option(False, "--compile", help="torch.compile the model"),
    precision: str = typer.Option("auto", help="auto (bf16 autocast on CUDA, fp32 on CPU) | fp32 | bf16 (autocast) | bf16-matmul (CPU: oneDNN bf16 matmuls)"),
    threads: int | None = typer.Option(None, help="CPU threads (default: all cores, or 1 when the load average already exceeds them)"),
    peak_tflops: float | None = typer.Option(None, help="device peak TFLOP/s for MFU (default: known GPUs)"),
    save_dtype: str = typer.Option("float32", help="float32 | bfloat16 weights in the saved folder"),
    seq_len: int = typer.Option(1024, help="context length when packing trajectories"),
    mask: str = typer.Option("states", help="loss on 'states' only or 'all' tokens, when packing"),
    heldout_fraction: float = typer.Option(0.05, help="fraction of programs held out, when packing"),
    distill_from: Path | None = typer.Option(None, help="distill from this frozen teacher model (its tokenizer must be the student's) on --distill-data"),
    distill_data: Path | None = typer.Option(None, help="packed data folder whose sequences carry the distillation term (e.g. the teacher's kind of programs)"),
    distill_weight: float = typer.Option(1.0, help="weight of the distillation term (KL(teacher || student) per target token)"),
    distill_temperature: float = typer.Option(1.0, help="softmax temperature of the distillation term (scaled back by T^2)"),
    distill_batch: int = typer.Option(2, help="distill-data sequences per optimizer step (per process)"),
    progress: bool = typer.Option(True, help="show a progress bar"),
) -> None:
    """Train (or fine-tune) a LlamaForCausalLM on neural-debugger trajectories; OUT is a Hugging Face folder."""
    from pydantic import ValidationError

    from train.loop import TrainConfig, train as run

    try:
        cfg = TrainConfig(
            data=data, out=out, preset=preset, config_file=config, init_from=init_from, steps=steps, time_budget_min=time_budget,
            stop_after=stop_after, resume=resume, overwrite=overwrite, micro_batch=batch, grad_accum=grad_accum, lr=lr, warmup=warmup,
            optimizer=optimizer, muon_lr=muon_lr, schedule=schedule, decay_fraction=decay_fraction,
            weight_decay=weight_decay, grad_clip=grad_clip, eval_every=eval_every, eval_sequences=eval_sequences,
            eval_states=eval_states, save_every=save_every, log_every=log_every, seed=seed, device=device, compile=compile,
            precision=precision, threads=threads, peak_tflops=peak_tflops, save_dtype=save_dtype, seq_len=seq_len, mask=mask,
            heldout_fraction=heldout_fraction, distill_from=distill_from, distill_data=distill_data, distill_weight=distill_weight,
            distill_temperature=distill_temperature, distill_batch=distill_batch, progress=progress,
        )  # fmt: skip
    except ValidationError as exc:
        typer.echo(f"error: invalid options: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        summary = run(cfg)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    ev = summary.get("final_eval", {})
    typer.echo(
        f"saved {out}: {summary['steps']} steps, {summary['tokens_seen']:,} tokens, {summary['tokens_per_s']:,.0f} tokens/s, "
        f"held-out loss {ev.get('heldout_loss', float('nan')):.4f}, next-state exact {ev.get('next_state_exact', float('nan')):.3f}"
    )
