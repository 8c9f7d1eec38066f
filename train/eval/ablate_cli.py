"""`neural-debugger ablate LEVER [LEVER...]`: the ablation protocol (`train/eval/ablation.py`) in one command."""
from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(add_completion=False, help="Does a lever help? Train each lever from scratch on fixed data for the same budget; evaluate; tabulate.")


@app.command()
def ablate(
    levers: list[str] = typer.Argument(None, help="lever names (see --list), trained and evaluated in this order"),
    budget: float = typer.Option(20.0, help="minutes of training wall time per lever"),
    threads: int = typer.Option(1, min=1, help="torch CPU threads for training and evaluation (the same for every lever)"),
    data_root: Path = typer.Option(Path("data/ablation"), help="where the fixed data and the lever checkpoints are cached"),
    tokenizer: Path = typer.Option(Path("checkpoints/default"), help="the FIXED tokenizer folder every lever's data is packed with (read only)"),
    synth_count: int = typer.Option(8000, min=1, help="training trajectories (tracegen synth --count)"),
    synth_per_program: int = typer.Option(4, min=1, help="trajectories per program (tracegen synth --per-program)"),
    synth_seed: int = typer.Option(31, help="seed of the training trajectories"),
    workers: int = typer.Option(1, min=1, help="processes for synthesizing and packing the data (once)"),
    seq_len: int = typer.Option(1024, min=16, help="context length of the packed data"),
    heldout_fraction: float = typer.Option(0.05, help="fraction of programs held out by the packer"),
    heldout_sequences: int = typer.Option(128, min=0, help="held-out sequences for the fp32 held-out loss"),
    next_state_count: int = typer.Option(200, min=1, help="trajectories of the next-state set (tracegen synth --count)"),
    next_state_seed: int = typer.Option(12345, help="seed of the next-state set (tracegen synth --seed)"),
    next_state_limit: int = typer.Option(200, min=1, help="states evaluated (eval next-state --limit, --seed 0)"),
    cruxeval_limit: int = typer.Option(100, min=1, help="first N CruxEval problems for CruxEval-O"),
    shape_override: Path | None = typer.Option(None, help="a model-shape JSON used by EVERY lever (smoke tests only)"),
    results: Path = typer.Option(Path("results/ablations"), help="one LEVER.json per lever"),
    notes: Path | None = typer.Option(Path("docs/model-notes.md"), help="markdown file whose ablation table is regenerated"),
    prepare_only: bool = typer.Option(False, "--prepare-only", help="only build (or check) the fixed data"),
    table_only: bool = typer.Option(False, "--table-only", help="only regenerate the table from RESULTS into NOTES"),
    list_levers: bool = typer.Option(False, "--list", help="list the levers and exit"),
    progress: bool = typer.Option(True, help="show progress bars"),
) -> None:
    """Train each LEVER from scratch on the same data for --budget minutes with --threads threads; evaluate each on the
    same held-out next-state set (per action) and CruxEval-O subset; write RESULTS/LEVER.json and the table in NOTES."""
    from pydantic import ValidationError
    from rich.console import Console

    from train.eval import ablation as ab

    from rich.markup import escape

    console = Console(stderr=True, soft_wrap=True)

    def say(message: str) -> None:
        console.print(f"[bold cyan]ablate[/] {escape(message)}", highlight=False)

    if list_levers:
        for name, lever in ab.LEVERS.items():
            typer.echo(f"{name:18} {lever.about}   {lever.options or ''}{'  packed with ' + str(lever.pack) if lever.pack else ''}")
        return
    if table_only:
        if notes is None:
            raise _fail("--table-only needs --notes")
        ab.update_notes(notes, ab.render_table(ab.read_records(results)))
        typer.echo(f"wrote the table of {len(ab.read_records(results))} levers into {notes}")
        return
    if not levers and not prepare_only:
        raise _fail(f"name at least one lever: {', '.join(ab.LEVERS)}")
    if shape_override is not None and not shape_override.is_file():
        raise _fail(f"no shape file {shape_override}")
    try:
        settings = ab.Settings(
            budget_min=budget, threads=threads, data_root=data_root, tokenizer=tokenizer, synth_count=synth_count,
            synth_per_program=synth_per_program, synth_seed=synth_seed, synth_workers=workers, seq_len=seq_len,
            heldout_fraction=heldout_fraction, heldout_sequences=heldout_sequences, next_state_count=next_state_count,
            next_state_synth_seed=next_state_seed, next_state_limit=next_state_limit, cruxeval_limit=cruxeval_limit,
            shape_override=shape_override, progress=progress,
        )  # fmt: skip
    except ValidationError as exc:
        raise _fail(f"invalid options: {exc}") from None
    try:
        for name in levers or []:
            ab.lever_options(name)
        if prepare_only:
            ds = ab.prepare_data(settings, say)
            typer.echo(f"data {ds.fingerprint}: {ds.packed} ({ds.info['train_tokens']:,} training tokens), next-state set {ds.next_state}")
            return
        records = ab.ablate(list(levers), settings, results, notes, say)
    except (ab.AblationError, ValueError, FileNotFoundError) as exc:
        raise _fail(str(exc)) from None
    for r in records:
        loss = "n/a" if r["heldout_loss"] is None else f"{r['heldout_loss']:.4f}"
        cx = r["cruxeval_output"]
        typer.echo(f"{r['lever']}: {r['params']:,} params, {r['tokens_seen']:,} tokens at {r['tokens_per_s']:,.0f}/s, held-out loss {loss}, "
                   f"next-state {100 * r['next_state']['overall']['state']:.1f}%, CruxEval-O {cx['passed']}/{cx['n']}")  # fmt: skip
    typer.echo(f"wrote {', '.join(str(results / (r['lever'] + '.json')) for r in records)}" + (f" and the table in {notes}" if notes else ""))


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)
