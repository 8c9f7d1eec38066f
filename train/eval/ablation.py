"""The ablation protocol: does a lever help? Same data, same wall budget, same threads, from scratch,
the same evaluations; one JSON per lever and one markdown table.

1. Data, built once and cached under ``data/ablation/`` (reproducible by seed): ``tracegen synth``
   trajectories, minus every program of the next-state evaluation set, packed with a FIXED tokenizer
   (by default the shipped checkpoint's, read only) so every lever sees the same tokens; held out by
   the packer's program split (`train.data.is_heldout`).
2. Each lever trains from scratch for ``--budget`` minutes of wall time with ``--threads`` threads
   (`train.loop.train`, no evaluations inside the budget): tokens seen and tokens/s are recorded.
3. Each is evaluated the same way: held-out loss in fp32 on the first held-out sequences, held-out
   next-state exact match per action (``eval next-state`` on a ``tracegen synth`` set of its own seed),
   and CruxEval-O on the first ``--cruxeval-limit`` problems (``eval cruxeval --mode output``).
4. ``results/ablations/<lever>.json`` is written and the table of every lever's JSON is regenerated
   into ``docs/model-notes.md`` between ``<!-- ablations:start -->`` and ``<!-- ablations:end -->``.

A lever is a named recipe: `TrainConfig` options over the baseline, optionally a model shape, optionally
packing options (`PACK_OPTIONS`: the same trajectories packed another way, into a folder of their own whose
name says how, e.g. ``...-vchars``). Adding one is one line in `LEVERS`.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from train.presets import ModelShape

DEEP_THIN = ModelShape(layers=8, width=192, heads=3, intermediate=512)  # ~= tiny's parameters (4 x 256, MLP 768)


@dataclass(frozen=True)
class Lever:
    """A recipe to compare: what it changes (`about`), `TrainConfig` options over the baseline, a shape."""

    about: str
    options: dict[str, Any] = field(default_factory=dict)
    shape: ModelShape | None = None  # None: the baseline's preset
    pack: dict[str, Any] = field(default_factory=dict)  # how the fixed trajectories are packed (PACK_OPTIONS); {}: as the baseline


# packing options a lever may set: `train.data.pack` keyword -> (its command-line flag, the packed folder's name suffix)
PACK_OPTIONS: dict[str, tuple[str, str]] = {"value_chars": ("--value-chars", "-vchars")}


BASELINE_OPTIONS: dict[str, Any] = {"preset": "tiny", "optimizer": "adamw", "schedule": "cosine", "precision": "fp32",
                                    "micro_batch": 4, "grad_accum": 1, "seed": 0}  # fmt: skip

LEVERS: dict[str, Lever] = {
    "baseline": Lever("today's recipe: tiny (4 x 256), AdamW lr 2e-3, warmup + cosine, fp32"),
    "bf16-matmul": Lever("oneDNN bf16 matmuls (fp32 weights and activations)", {"precision": "bf16-matmul"}),
    "bf16": Lever("bf16 autocast", {"precision": "bf16"}),
    "muon": Lever("Muon (lr 0.02) on hidden matrices, AdamW on embeddings and norms", {"optimizer": "muon"}),
    "wsd": Lever("warmup-stable-decay (linear decay over the last 20% of the budget)", {"schedule": "wsd"}),
    "deep-thin": Lever("8 layers x 192 (3 heads, MLP 512) instead of 4 x 256 at about equal parameters", {"preset": None}, DEEP_THIN),
    "muon-bf16-matmul": Lever("Muon and bf16 matmuls together", {"optimizer": "muon", "precision": "bf16-matmul"}),
    "value-chars": Lever("string contents in state values one token per character (model.prompt.value_chars), same trajectories; "
                         "held-out loss is per token of a longer tokenization: compare next-state and CruxEval",
                         pack={"value_chars": True}),
}

RESULTS_DIR = Path("results/ablations")
NOTES_FILE = Path("docs/model-notes.md")
START, END = "<!-- ablations:start -->", "<!-- ablations:end -->"


class AblationError(ValueError):
    """The protocol cannot run as asked; the message says why."""


class Settings(BaseModel):
    """Everything that must be equal between levers (recorded with each result)."""

    budget_min: float = Field(default=20.0, gt=0)
    threads: int = Field(default=1, ge=1)
    data_root: Path = Path("data/ablation")
    tokenizer: Path = Path("checkpoints/default")
    synth_count: int = Field(default=8000, ge=1)
    synth_per_program: int = Field(default=4, ge=1)
    synth_seed: int = 31
    synth_workers: int = Field(default=1, ge=1)
    seq_len: int = Field(default=1024, gt=8)
    heldout_fraction: float = Field(default=0.05, ge=0, lt=1)
    heldout_sequences: int = Field(default=128, ge=0)
    next_state_count: int = Field(default=200, ge=1)
    next_state_per_program: int = Field(default=4, ge=1)
    next_state_synth_seed: int = 12345
    next_state_limit: int = Field(default=200, ge=1)
    next_state_seed: int = 0
    cruxeval_limit: int = Field(default=100, ge=1)
    shape_override: Path | None = None  # a ModelShape JSON for every lever (smoke tests only)
    progress: bool = True


@dataclass
class Dataset:
    """The fixed data of the protocol."""

    packed: Path
    next_state: Path
    fingerprint: str  # sha256 (12 hex) of the packed manifest without paths: equal means the same tokens
    info: dict[str, Any]


# ---- commands -----------------------------------------------------------------------------------

Say = Callable[[str], None]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "neural_debugger_cli", *args]


def _shown(argv: list[str]) -> str:
    """The command as a user types it."""
    if argv[:3] == [sys.executable, "-m", "neural_debugger_cli"]:
        argv = ["neural-debugger", *argv[3:]]
    return shlex.join(str(a) for a in argv)


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True)  # stderr (progress bars, errors) goes to the terminal
    if done.returncode != 0:
        raise AblationError(f"{what} failed (exit {done.returncode}): {_shown(argv)}\n{done.stdout[-2000:]}")


def _run_eval(argv: list[str], what: str) -> None:
    """`neural-debugger eval ...` (argv as `_cli` builds it) run in this process: the command's own code path,
    without paying for another torch import per evaluation."""
    import typer.main

    from train.eval.cli import app

    try:
        code = typer.main.get_command(app).main(args=argv[4:], prog_name="neural-debugger eval", standalone_mode=False)
    except Exception as exc:  # noqa: BLE001 - a usage error of the command: say which
        raise AblationError(f"{what} failed ({exc}): {_shown(argv)}") from None
    if code not in (None, 0):
        raise AblationError(f"{what} failed (exit {code}): {_shown(argv)}")


# ---- data -----------------------------------------------------------------------------------------


def _synth(out: Path, count: int, per_program: int, seed: int, workers: int, progress: bool, say: Say) -> list[str]:
    """`tracegen synth` into `out` unless it is already complete there; the command, as typed."""
    argv = _cli("tracegen", "synth", "--count", str(count), "--per-program", str(per_program), "--seed", str(seed),
                "--out", str(out), "--workers", str(workers), "--progress" if progress else "--no-progress")  # fmt: skip
    manifest = out / "manifest.json"
    done = manifest.is_file() and (m := json.loads(manifest.read_text())).get("complete") and m.get("count") == count
    if not done:
        say(f"synthesizing {count} trajectories (seed {seed}) into {out}")
        _run(argv, "tracegen synth")
    return [_shown(argv)]


def _filtered(source: Path, out: Path, exclude: set[str], say: Say) -> dict[str, int]:
    """Copy the trajectories of `source` whose program hash is not in `exclude` to `out` (cached by a stamp)."""
    from train.data import program_hash, shard_paths

    stamp = out / "filter.json"
    key = hashlib.sha256("\n".join(sorted(exclude)).encode()).hexdigest()
    if stamp.is_file() and json.loads(stamp.read_text()).get("exclude_sha256") == key:
        return json.loads(stamp.read_text())
    say(f"removing the evaluation programs from {source}")
    out.mkdir(parents=True, exist_ok=True)
    kept = dropped = 0
    for path in shard_paths(source):
        with path.open(encoding="utf-8") as src, (out / path.name).open("w", encoding="utf-8") as dst:
            for line in src:
                if not line.strip():
                    continue
                if program_hash(json.loads(line)["program"]) in exclude:
                    dropped += 1
                else:
                    kept += 1
                    dst.write(line)
    info = {"exclude_sha256": key, "kept": kept, "dropped": dropped, "excluded_programs": len(exclude)}
    stamp.write_text(json.dumps(info, indent=2) + "\n")
    return info


def _programs(folder: Path) -> set[str]:
    from train.data import program_hash, shard_paths

    out = set()
    for path in shard_paths(folder):
        with path.open(encoding="utf-8") as fh:
            out |= {program_hash(json.loads(line)["program"]) for line in fh if line.strip()}
    return out


def prepare_data(s: Settings, say: Say, pack: dict[str, Any] | None = None) -> Dataset:
    """Build (or reuse) the protocol's fixed data: training shards, packed sequences, next-state set.

    `pack`: a lever's packing options (`PACK_OPTIONS`); the same trajectories are packed into a folder of
    their own, named with each option's suffix.
    """
    from train import data
    from train.manifest import Manifest

    pack = {k: v for k, v in (pack or {}).items() if v}
    unknown = set(pack) - set(PACK_OPTIONS)
    if unknown:
        raise AblationError(f"unknown packing options {sorted(unknown)}; known: {', '.join(PACK_OPTIONS)}")

    if not (s.tokenizer / "tokenizer.json").is_file() and not (s.tokenizer / "tokenizer_config.json").is_file():
        raise AblationError(f"no tokenizer in {s.tokenizer}: give --tokenizer a Hugging Face tokenizer folder (e.g. checkpoints/default)")
    root = s.data_root
    synth_dir = root / f"synth-c{s.synth_count}-p{s.synth_per_program}-s{s.synth_seed}"
    ns_dir = root / f"next-state-c{s.next_state_count}-p{s.next_state_per_program}-s{s.next_state_synth_seed}"
    commands = _synth(synth_dir, s.synth_count, s.synth_per_program, s.synth_seed, s.synth_workers, s.progress, say)
    commands += _synth(ns_dir, s.next_state_count, s.next_state_per_program, s.next_state_synth_seed, s.synth_workers, s.progress, say)
    train_dir = root / f"{synth_dir.name}-minus-{ns_dir.name}"
    filtered = _filtered(synth_dir, train_dir, _programs(ns_dir), say)
    tok_sha = data.tokenizer_sha256(s.tokenizer)
    suffix = "".join(PACK_OPTIONS[k][1] for k in sorted(pack))
    packed = root / f"packed-{train_dir.name}-L{s.seq_len}-h{s.heldout_fraction}-tok{tok_sha[:10]}{suffix}"
    pack_argv = ["python", "-m", "train.data", str(train_dir), str(packed), "--tokenizer", str(s.tokenizer),
                 "--seq-len", str(s.seq_len), "--heldout-fraction", str(s.heldout_fraction),
                 *(PACK_OPTIONS[k][0] for k in sorted(pack))]  # fmt: skip
    commands.append(shlex.join(pack_argv))
    options = {k: bool(pack.get(k)) for k in PACK_OPTIONS}  # every option, off unless the lever sets it
    if not (data.is_packed(packed) and (m := Manifest.load(packed)).tokenizer_sha256 == tok_sha
            and all(getattr(m, k) == on for k, on in options.items())):  # fmt: skip
        say(f"packing {train_dir} with the tokenizer of {s.tokenizer} into {packed}")
        data.pack(train_dir, packed, tokenizer_dir=s.tokenizer, seq_len=s.seq_len, heldout_fraction=s.heldout_fraction,
                  workers=s.synth_workers, progress=s.progress, **options)  # fmt: skip
    manifest = json.loads((packed / "pack.json").read_text())
    manifest.pop("source", None)
    fingerprint = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()[:12]
    splits = manifest.get("splits", {})
    info = {"train_shards": str(train_dir), "packed": str(packed), "next_state_set": str(ns_dir), "tokenizer": str(s.tokenizer),
            "tokenizer_sha256": tok_sha, "filter": filtered, "commands": commands,
            "train_tokens": splits.get("train", {}).get("tokens"), "heldout_sequences": splits.get("heldout", {}).get("sequences"),
            "train_programs": splits.get("train", {}).get("programs"), "heldout_programs": splits.get("heldout", {}).get("programs")}  # fmt: skip
    return Dataset(packed=packed, next_state=ns_dir, fingerprint=fingerprint, info=info)


# ---- one lever --------------------------------------------------------------------------------------


def lever_data(name: str, s: Settings, base: Dataset, say: Say) -> Dataset:
    """The data lever `name` trains on: the baseline's, or the same trajectories packed its way (recording the
    baseline's fingerprint, so the table knows the rows share their trajectories)."""
    lever = lever_options(name)
    if not any(lever.pack.values()):
        return base
    ds = prepare_data(s, say, lever.pack)
    say(f"[{name}] data {ds.fingerprint}: {ds.info['train_tokens'] or 0:,} training tokens, packed with {lever.pack}")
    ds.info |= {"base_fingerprint": base.fingerprint, "pack": dict(lever.pack)}
    return ds


def lever_options(name: str) -> Lever:
    if name not in LEVERS:
        raise AblationError(f"unknown lever {name!r}; choose from {', '.join(LEVERS)}")
    lever = LEVERS[name]
    from train.loop import TrainConfig

    unknown = set(lever.options) - set(TrainConfig.model_fields)
    if unknown:
        raise AblationError(f"lever {name!r} sets unknown training options {sorted(unknown)}")
    return lever


_FLAGS = {"micro_batch": "--batch", "config_file": "--config", "time_budget_min": "--time-budget"}


def train_command(cfg: Any) -> str:
    """`neural-debugger train ...` equivalent to a TrainConfig (options that differ from the defaults)."""
    from train.loop import TrainConfig

    defaults = TrainConfig(out=cfg.out)
    argv = ["neural-debugger", "train"]
    for name, value in cfg.model_dump().items():
        if value == getattr(defaults, name) and name not in ("data", "out"):
            continue
        if value is None:
            continue
        flag = _FLAGS.get(name, "--" + name.replace("_", "-"))
        if isinstance(value, bool):
            argv.append(flag if value else "--no-" + flag[2:])
        else:
            argv += [flag, str(value)]
    return shlex.join(argv)


def _train_config(name: str, lever: Lever, s: Settings, ds: Dataset, run_dir: Path) -> Any:
    from train.loop import TrainConfig

    options = BASELINE_OPTIONS | lever.options
    shape = ModelShape.model_validate_json(s.shape_override.read_text()) if s.shape_override else lever.shape
    config_file = None
    if shape is not None:
        config_file = run_dir.parent / f"{name}.shape.json"
        config_file.parent.mkdir(parents=True, exist_ok=True)
        config_file.write_text(shape.model_dump_json(indent=2) + "\n")
        options = options | {"preset": None}
    return TrainConfig(data=ds.packed, out=run_dir, overwrite=True, time_budget_min=s.budget_min, threads=s.threads,
                       config_file=config_file, eval_every=10**9, save_every=10**9, eval_states=0, eval_sequences=0,
                       progress=s.progress, **options)  # fmt: skip


def heldout_loss_fp32(model_dir: Path, packed: Path, sequences: int) -> float | None:
    """Mean target-token cross-entropy of the saved model (fp32, whatever it trained in) on the first held-out sequences."""
    import contextlib

    from transformers import AutoModelForCausalLM

    from train.evaluation import heldout_loss
    from train.manifest import Manifest
    from train.packing import PackedSplit

    m = Manifest.load(packed)
    held = m.splits.get("heldout")
    split = PackedSplit.open(packed, "heldout", held.sequences if held else 0, m.seq_len, m.dtype)
    if not len(split) or not sequences:
        return None
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype="float32")
    model.eval()
    return heldout_loss(model, split, sequences, 4, "cpu", contextlib.nullcontext)


def _next_state(run_dir: Path, ds: Dataset, s: Settings) -> tuple[dict[str, Any], str]:
    out = run_dir / "eval" / "next-state"
    argv = _cli("eval", "next-state", "--trajectories", str(ds.next_state), "--model", str(run_dir), "--limit", str(s.next_state_limit),
                "--seed", str(s.next_state_seed), "--threads", str(s.threads), "--out", str(out), *([] if s.progress else ["--no-progress"]))  # fmt: skip
    _run_eval(argv, "eval next-state")
    summary = json.loads((out / "summary.json").read_text())
    result = {"overall": summary["overall"], "by_action": {a: r for a, r in summary["by_action"].items()},
              "unparsed": summary.get("unparsed"), "seconds": summary.get("seconds")}  # fmt: skip
    return result, _shown(argv)


def _cruxeval(run_dir: Path, s: Settings) -> tuple[dict[str, Any], str]:
    out = run_dir / "eval" / "cruxeval-output"
    argv = _cli("eval", "cruxeval", "--mode", "output", "--limit", str(s.cruxeval_limit), "--model", str(run_dir),
                "--threads", str(s.threads), "--out", str(out), *([] if s.progress else ["--no-progress"]))  # fmt: skip
    _run_eval(argv, "eval cruxeval")
    summary = json.loads((out / "summary.json").read_text())
    return {k: summary.get(k) for k in ("pass@1", "passed", "n", "via", "seconds")}, _shown(argv)


def training_record(name: str, cfg: Any, s: Settings, ds: Dataset, summary: dict[str, Any],
                    load: tuple[Any, Any] | None) -> dict[str, Any]:  # fmt: skip
    """A lever's record once trained: training numbers and settings, evaluations still to come (None)."""
    import torch

    lever = lever_options(name)
    return {
        "lever": name, "about": lever.about, "options": BASELINE_OPTIONS | lever.options, "pack": dict(lever.pack),
        "shape": (json.loads(Path(cfg.config_file).read_text()) if cfg.config_file else None),
        "params": summary["params"], "steps": summary["steps"], "tokens_seen": summary["tokens_seen"],
        "tokens_per_s": summary["tokens_per_s"], "train_seconds": summary["elapsed_s"], "epochs": summary["epochs"],
        "heldout_loss": None, "heldout_sequences": s.heldout_sequences, "next_state": None, "cruxeval_output": None,
        "complete": False, "settings": s.model_dump(mode="json"), "data": {"fingerprint": ds.fingerprint, **ds.info},
        "load_average": None if load is None else {"before": [round(x, 2) for x in load[0]], "after": [round(x, 2) for x in load[1]]},
        "commands": {"train": train_command(cfg), "next_state": None, "cruxeval": None},
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(), "cores": len(os.sched_getaffinity(0)),
    }  # fmt: skip


def _write(results: Path, record: dict[str, Any]) -> None:
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{record['lever']}.json").write_text(json.dumps(record, indent=2) + "\n")


def run_lever(name: str, s: Settings, ds: Dataset, results: Path, say: Say) -> dict[str, Any]:
    """Train lever `name` from scratch for the budget, evaluate it; RESULTS/<name>.json is written after training
    and updated after each evaluation (an interrupted run leaves what it measured, `complete` false)."""
    import torch

    from train.loop import train

    lever = lever_options(name)
    run_dir = s.data_root / "runs" / name
    cfg = _train_config(name, lever, s, ds, run_dir)
    load_before = os.getloadavg()
    say(f"[{name}] training from scratch for {s.budget_min:g} min on {s.threads} thread(s): {lever.about}")
    summary = train(cfg)
    record = training_record(name, cfg, s, ds, summary, (load_before, os.getloadavg()))
    _write(results, record)
    say(f"[{name}] {summary['steps']} steps, {summary['tokens_seen']:,} tokens, {summary['tokens_per_s']:,.0f} tokens/s; evaluating")
    torch.set_num_threads(s.threads)
    record["heldout_loss"] = heldout_loss_fp32(run_dir, ds.packed, s.heldout_sequences)
    _write(results, record)
    record["next_state"], record["commands"]["next_state"] = _next_state(run_dir, ds, s)
    _write(results, record)
    record["cruxeval_output"], record["commands"]["cruxeval"] = _cruxeval(run_dir, s)
    record["complete"] = True
    _write(results, record)
    return record


# ---- the table ----------------------------------------------------------------------------------------


def read_records(results: Path) -> list[dict[str, Any]]:
    """Every lever's record under RESULTS, the baseline first, then in registry order, then by name."""
    order = {name: i for i, name in enumerate(LEVERS)}
    records = []
    for path in sorted(results.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(record, dict) and "lever" in record:
            records.append(record)
    return sorted(records, key=lambda r: (order.get(r["lever"], len(order)), r["lever"]))


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def render_table(records: list[dict[str, Any]]) -> str:
    """The markdown table of the records (with the settings they share and the commands)."""
    from protocol.debugger import ActionKind

    if not records:
        return "_No ablation results yet: run `neural-debugger ablate baseline LEVER --budget 20`._\n"
    known = [k.value for k in ActionKind]
    actions = sorted({a for r in records for a in (r.get("next_state") or {}).get("by_action", {})}, key=lambda a: (known.index(a) if a in known else 99, a))
    head = ["lever", "params", "steps", "tokens", "tokens/s", "held-out loss", "next-state %", *actions, "CruxEval-O"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        ns, cx = r.get("next_state") or {}, r.get("cruxeval_output")
        loss = "–" if r.get("heldout_loss") is None else f"{r['heldout_loss']:.4f}"
        per = [_pct(ns.get("by_action", {}).get(a, {}).get("state")) for a in actions]
        lines.append("| " + " | ".join([f"`{r['lever']}`", f"{r['params']:,}", f"{r['steps']:,}", f"{r['tokens_seen']:,}",
                                        f"{r['tokens_per_s']:,.0f}", loss, _pct(ns.get("overall", {}).get("state")), *per,
                                        f"{cx['passed']}/{cx['n']}" if cx else "–"]) + " |")  # fmt: skip
    first = records[0]
    s = first["settings"]
    same = {(r["data"].get("base_fingerprint", r["data"]["fingerprint"]), r["settings"]["budget_min"], r["settings"]["threads"]) for r in records}
    stops = next((r["next_state"]["overall"].get("stops") for r in records if r.get("next_state")), None)
    notes = [
        "",
        f"Each lever trained from scratch for {s['budget_min']:g} minutes of wall time on {s['threads']} thread(s), on the same "
        f"packed data (fingerprint `{first['data']['fingerprint']}`: {first['data'].get('train_tokens') or 0:,} training tokens "
        f"of {first['data'].get('train_programs') or 0:,} programs, tokenizer of `{s['tokenizer']}`). Held-out loss: fp32, per "
        f"target token, first {s['heldout_sequences']} held-out sequences (programs never trained on). Next-state: exact "
        f"match of the whole state on {stops or s['next_state_limit']} held-out states (`--limit {s['next_state_limit']} --seed {s['next_state_seed']}`), "
        f"overall and per action. CruxEval-O: passed of the first {s['cruxeval_limit']} problems (step_return posing, greedy).",
    ]  # fmt: skip
    repacked = [f"`{r['lever']}` (packed with {', '.join(PACK_OPTIONS[k][0] for k in sorted(r['data']['pack']) if k in PACK_OPTIONS)}: "
                f"fingerprint `{r['data']['fingerprint']}`, {r['data'].get('train_tokens') or 0:,} training tokens)"
                for r in records if r["data"].get("base_fingerprint") and r["data"].get("pack")]  # fmt: skip
    if repacked:
        notes.append("The same trajectories packed another way: " + "; ".join(repacked) + ".")
    if len(same) > 1:
        notes.append("**Warning:** these rows do not share the same data, budget and threads: compare only rows that do "
                     "(see each `results/ablations/<lever>.json`).")  # fmt: skip
    if any(not r.get("complete", True) for r in records):
        notes.append("–: not measured (the run was stopped before that evaluation).")
    dates = sorted({r["date"] for r in records})
    loads = ", ".join(f"`{r['lever']}` {r['load_average']['before'][0]:.1f}-{r['load_average']['after'][0]:.1f}" for r in records if r.get("load_average"))
    notes.append(f"Measured {dates[0]} to {dates[-1]}; 1-minute load average before-after each training run: {loads or 'not recorded'}.")
    notes += ["", "Commands:", "", "```sh"]
    notes.append(f"neural-debugger ablate {' '.join(r['lever'] for r in records)} --budget {s['budget_min']:g} --threads {s['threads']}")
    notes.append("# which runs, for each lever (the baseline's shown; results/ablations/<lever>.json has each):")
    notes += list(first["data"].get("commands", []))
    notes += [c for c in (first["commands"]["train"], first["commands"]["next_state"], first["commands"]["cruxeval"]) if c] + ["```"]
    return "\n".join(lines + notes) + "\n"


def update_notes(notes: Path, table: str) -> None:
    """Put `table` between the ablation markers of NOTES (a section is appended when they are missing)."""
    text = notes.read_text(encoding="utf-8") if notes.is_file() else ""
    block = f"{START}\n{table}{END}"
    if START in text and END in text and text.index(START) < text.index(END):
        before, rest = text.split(START, 1)
        after = rest.split(END, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + "## Ablations (`neural-debugger ablate`)\n\n" + block + "\n"
    notes.write_text(text, encoding="utf-8")


def ablate(levers: list[str], s: Settings, results: Path, notes: Path | None, say: Say) -> list[dict[str, Any]]:
    """The whole protocol for `levers` (in order); returns their records and regenerates the table."""
    for name in levers:
        lever_options(name)
    ds = prepare_data(s, say)
    say(f"data {ds.fingerprint}: {ds.info['train_tokens'] or 0:,} training tokens, {ds.info['heldout_sequences'] or 0} held-out sequences "
        f"({ds.info['filter']['dropped']} trajectories of evaluation programs removed)")  # fmt: skip
    records = [run_lever(name, s, lever_data(name, s, ds, say), results, say) for name in levers]
    if notes is not None:
        update_notes(notes, render_table(read_records(results)))
    return records
