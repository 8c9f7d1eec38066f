"""Trajectories (JSONL shards) -> context windows -> token ids, packed into fixed-length sequences on disk.

`pack(source, out, ...)` reads every ``*.jsonl`` / ``*.jsonl.gz`` shard under `source` (one
`protocol.debugger.Trajectory` per line), renders each trajectory as windows of at most `seq_len`
tokens (`model.prompt.language.render_windows`: each window's header lists the program the way a session
would at that window's first stop, whole when it fits, else bounded by `model.prompt.listing`), tokenizes
them, and packs them into ``train`` and
``heldout`` splits (see `train.packing` and `train.manifest` for the files). The held-out split is
chosen by program: a trajectory is held out when the hash of its normalized source falls in the
held-out fraction, so no held-out program is ever trained on. Forward and inverse trajectories are
packed together as tracegen produced them (its sampler follows the paper's mix); `inverse_fraction`
resamples that mix. When no tokenizer is given, one is trained on a sample of the rendered text.

Command line: ``python -m train.data SOURCE OUT [--seq-len N] [--mask states|all] ...``.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import json
import random
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from train.manifest import EXAMPLES, MANIFEST, TOKENIZER_DIR, Manifest, MaskMode, NextStateExample, SplitStats
from train.packing import SequenceWriter, token_dtype

EXAMPLES_PER_ACTION = 64
TOKENIZER_SAMPLE = 3000  # trajectories whose text trains a tokenizer
DEFAULT_VOCAB = 4096
SPLITS = ("train", "heldout")


# ---- reading trajectories ----------------------------------------------------------------------


def shard_paths(source: Path) -> list[Path]:
    """Every trajectory shard under `source` (a folder, searched recursively, or one file), sorted."""
    source = Path(source)
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise FileNotFoundError(f"no trajectories at {source}: not a file or folder")
    paths = sorted(p for p in source.rglob("*") if p.name.endswith((".jsonl", ".jsonl.gz")) and p.is_file())
    if not paths:
        raise FileNotFoundError(f"no *.jsonl or *.jsonl.gz trajectory shards under {source}")
    return paths


def refuse_evaluation_only(paths: list[Path]) -> None:
    """ValueError when a shard's folder holds an evaluation set's trajectories (`tracegen.eval_trajectories`: its
    manifest says ``evaluation_only``): those never become training data."""
    for folder in sorted({path.resolve().parent for path in paths}):
        try:
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(manifest, dict) and manifest.get("evaluation_only"):
            raise ValueError(f"{folder} holds an evaluation set's trajectories (manifest.json: evaluation_only); they are never training data")


def _open_text(path: Path):  # noqa: ANN202
    return gzip.open(path, "rt", encoding="utf-8") if path.name.endswith(".gz") else path.open(encoding="utf-8")


def read_trajectories(paths: list[Path]) -> Iterator[Any]:
    """Trajectories of the shards, in order; malformed lines are skipped with a warning, never fatal."""
    from protocol.debugger import Trajectory

    for path in paths:
        with _open_text(path) as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    yield Trajectory.model_validate_json(line)
                except ValueError as exc:
                    typer.echo(f"warning: {path}:{number}: not a trajectory, skipped ({str(exc).splitlines()[0]})", err=True)


def normalized_program(source: str) -> str:
    """The program with trailing spaces and blank lines removed: what identifies a program for the split."""
    return "\n".join(line.rstrip() for line in source.splitlines() if line.strip())


def program_hash(source: str) -> str:
    return hashlib.sha256(normalized_program(source).encode()).hexdigest()


def is_heldout(source: str, fraction: float) -> bool:
    """Whether a program belongs to the held-out split (deterministic in the source text alone)."""
    return int(program_hash(source)[:16], 16) / 2**64 < fraction


# ---- tokenizing windows ------------------------------------------------------------------------


class SegmentEncoder:
    """Token ids of segment texts, cached per trajectory (a header repeats in every window); with value chars
    (`model.prompt.value_chars`) when the tokenizer carries the flag."""

    def __init__(self, tokenizer: Any) -> None:
        from model.prompt.value_chars import value_chars_enabled

        self.tokenizer = tokenizer
        self.value_chars = value_chars_enabled(tokenizer)
        self._cache: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int]:
        from model.prompt.value_chars import encode_text

        cached = self._cache.get(text)
        if cached is None:
            cached = encode_text(self.tokenizer, text, self.value_chars)
            self._cache[text] = cached
        return cached

    def count(self, text: str) -> int:
        return len(self.ids(text))

    def reset(self) -> None:
        self._cache.clear()


@dataclass
class Document:
    """One window as token ids and loss mask (1 = target)."""

    ids: list[int]
    mask: list[int]


def trajectory_documents(traj: Any, encoder: SegmentEncoder, seq_len: int, mask_mode: MaskMode) -> tuple[list[Document], list[list[Any]]]:
    """The trajectory's windows as documents, and the windows' segments (for held-out examples)."""
    from model.prompt import language

    encoder.reset()
    windows = language.render_windows(traj, seq_len, encoder.count)
    docs = []
    for segments in windows:
        ids: list[int] = []
        mask: list[int] = []
        for seg in segments:
            piece = encoder.ids(seg.text)
            ids.extend(piece)
            mask.extend([1 if (seg.predicted or mask_mode == "all") else 0] * len(piece))
        docs.append(Document(ids, mask))
    return docs, windows


def window_examples(traj: Any, windows: list[list[Any]], rng: random.Random) -> list[NextStateExample]:
    """One next-state question per window: a random predicted state, its prompt, the state before it."""
    out = []
    step_index = 0  # index into traj.steps of the first predicted state of the window
    for segments in windows:
        predicted = [i for i, s in enumerate(segments) if s.predicted]
        if not predicted:
            continue
        pick = rng.randrange(len(predicted))
        out.append(_state_example(traj, segments, predicted[pick], step_index + pick))
        step_index += len(predicted)
    return out


def every_window_example(traj: Any, windows: list[list[Any]]) -> Iterator[tuple[int, NextStateExample]]:
    """Every predicted state of every window as a next-state question, with its index into ``traj.steps``."""
    step_index = 0
    for segments in windows:
        predicted = [i for i, s in enumerate(segments) if s.predicted]
        for pick, seg_index in enumerate(predicted):
            yield step_index + pick, _state_example(traj, segments, seg_index, step_index + pick)
        step_index += len(predicted)


def _state_example(traj: Any, segments: list[Any], seg_index: int, step_index: int) -> NextStateExample:
    """The question for the state of ``segments[seg_index]`` (= ``traj.steps[step_index]``): the text before it as the prompt."""
    from model.prompt import language
    from model.static.reach import returned_call

    step = traj.steps[step_index]
    previous = traj.steps[step_index - 1].state if step_index else traj.initial
    before = (traj.steps[step_index - 2].state if step_index > 1 else traj.initial) if step_index else None
    returned = returned_call(before, traj.steps[step_index - 1].action.kind, previous) if before is not None else None
    return NextStateExample(
        prompt=language.render_text(segments[:seg_index]),
        target=language.canonical_state(step.state, traj.program).model_dump_json(),
        previous=previous.model_dump_json(),
        returned=returned if traj.direction == "forward" else None,
        program=traj.program,
        action=step.action.kind.value,
        direction=traj.direction,
    )


def _interleave(by_action: dict[str, list[NextStateExample]]) -> list[NextStateExample]:
    """Examples round-robin over actions, so any prefix covers every action."""
    lists = [by_action[k] for k in sorted(by_action)]
    out = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


# ---- tokenizer ----------------------------------------------------------------------------------


def train_tokenizer_on(paths: list[Path], folder: Path, vocab_size: int, sample: int = TOKENIZER_SAMPLE) -> None:
    """Train the language's byte-level BPE on the text of the first `sample` trajectories; save as a HF folder."""
    from model.prompt import language
    from model.prompt import tokenizer as tok

    def texts() -> Iterator[str]:
        for i, traj in enumerate(read_trajectories(paths)):
            if i >= sample:
                return
            try:
                yield language.render_text(language.render_trajectory(traj))
            except language.UnrenderableError:  # packing skips and counts it too
                continue

    trained = tok.train_tokenizer(texts(), vocab_size=vocab_size)
    tok.save_tokenizer(trained, folder)


def tokenizer_sha256(folder: Path) -> str:
    from train.modeling import load_hf_tokenizer, tokenizer_hash

    return tokenizer_hash(load_hf_tokenizer(folder))


# ---- packing ------------------------------------------------------------------------------------


def _keep_probabilities(paths: list[Path], inverse_fraction: float | None) -> dict[str, float]:
    """Keep-probabilities per direction so that inverse trajectories make `inverse_fraction` of the data."""
    if inverse_fraction is None:
        return {"forward": 1.0, "inverse": 1.0}
    counts = {"forward": 0, "inverse": 0}
    for path in paths:
        with _open_text(path) as fh:
            for line in fh:
                if line.strip():
                    try:
                        counts["inverse" if json.loads(line).get("direction") == "inverse" else "forward"] += 1
                    except (json.JSONDecodeError, AttributeError):
                        pass
    fwd, inv = counts["forward"], counts["inverse"]
    if fwd == 0 or inv == 0 or inverse_fraction in (0.0, 1.0):
        return {"forward": 0.0 if inverse_fraction == 1.0 else 1.0, "inverse": 0.0 if inverse_fraction == 0.0 else 1.0}
    target_inv = inverse_fraction / (1 - inverse_fraction) * fwd  # inverse count that gives the fraction with all forward kept
    if target_inv <= inv:
        return {"forward": 1.0, "inverse": target_inv / inv}
    return {"forward": inv * (1 - inverse_fraction) / inverse_fraction / fwd, "inverse": 1.0}


@dataclass
class ShardResult:
    """What one shard contributes: documents per split, counts, program hashes, held-out examples."""

    docs: dict[str, list[Document]]
    stats: dict[str, SplitStats]
    programs: dict[str, set[str]]
    examples: list[NextStateExample]
    warnings: list[str]


@functools.lru_cache(maxsize=2)
def _cached_tokenizer(folder: str) -> Any:
    from train.modeling import load_hf_tokenizer

    return load_hf_tokenizer(Path(folder))


def pack_shard(path: Path, index: int, tok_folder: str, seq_len: int, mask: MaskMode, heldout_fraction: float,
               keep: dict[str, float], seed: int) -> ShardResult:
    """Render, split and tokenize one shard (runs in a worker process; seeded by (seed, index) alone)."""
    from model.prompt.language import UnrenderableError

    encoder = SegmentEncoder(_cached_tokenizer(tok_folder))
    rng = random.Random(f"{seed}:{index}")
    result = ShardResult({s: [] for s in SPLITS}, {s: SplitStats() for s in SPLITS}, {s: set() for s in SPLITS}, [], [])
    for traj in read_trajectories([path]):
        if rng.random() >= keep[traj.direction]:
            continue
        split = "heldout" if is_heldout(traj.program, heldout_fraction) else "train"
        st = result.stats[split]
        try:
            docs, windows = trajectory_documents(traj, encoder, seq_len, mask)
        except UnrenderableError as exc:  # a state the language cannot write (e.g. a return value named 'A[(int, str)].f')
            st.trajectories_unrenderable += 1
            result.warnings.append(f"{path.name}: a trajectory the language cannot render, skipped ({exc})")
            continue
        st.trajectories += 1
        setattr(st, traj.direction, getattr(st, traj.direction) + 1)
        result.programs[split].add(program_hash(traj.program))
        result.docs[split].extend(docs)
        st.windows += len(docs)
        packed_states = sum(seg.predicted for window in windows for seg in window)
        st.states += packed_states
        st.states_dropped += len(traj.steps) - packed_states
        if split == "heldout":
            result.examples.extend(window_examples(traj, windows, rng))
    return result


def _shard_results(paths: list[Path], workers: int, **kwargs: Any) -> Iterator[ShardResult]:
    """`pack_shard` over every shard, in shard order, in `workers` processes (in this one when 1)."""
    if workers <= 1 or len(paths) == 1:
        for index, path in enumerate(paths):
            yield pack_shard(path, index, **kwargs)
        return
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(pack_shard, path, index, **kwargs) for index, path in enumerate(paths)]
        for future in futures:
            yield future.result()


def pack(
    source: Path,
    out: Path,
    tokenizer_dir: Path | None = None,
    tokenizer: Any = None,
    seq_len: int = 1024,
    mask: MaskMode = "states",
    heldout_fraction: float = 0.05,
    inverse_fraction: float | None = None,
    vocab_size: int = DEFAULT_VOCAB,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    value_chars: bool | None = None,
) -> Manifest:
    """Pack the trajectories under `source` into the data folder `out` (replacing what was there).

    The tokenizer is `tokenizer` (a loaded HF tokenizer), else the folder `tokenizer_dir`, else one
    trained here on a sample of the data. It is saved to ``out/tokenizer``. Shards are tokenized in
    `workers` processes; the result does not depend on their number. `value_chars`: string contents in
    state values one token per character (`model.prompt.value_chars`); None keeps the tokenizer's own flag. The
    saved tokenizer carries the choice, so a model trained on the data is served the same way.
    """
    from tqdm import tqdm

    from model.prompt.value_chars import folder_value_chars, write_value_chars
    from train.modeling import load_hf_tokenizer, token_ids, tokenizer_hash

    paths = shard_paths(source)
    refuse_evaluation_only(paths)
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / ".gitignore").write_text("*\n")
    tok_folder = out / TOKENIZER_DIR
    if tokenizer is not None:
        tokenizer.save_pretrained(tok_folder)
    elif tokenizer_dir is not None:
        load_hf_tokenizer(tokenizer_dir).save_pretrained(tok_folder)
    else:
        train_tokenizer_on(paths, tok_folder, vocab_size)
    if value_chars is not None:
        write_value_chars(tok_folder, value_chars)
    value_chars = folder_value_chars(tok_folder)
    hf_tok = load_hf_tokenizer(tok_folder)
    eos_id, pad_id, bos_id = token_ids(hf_tok)
    vocab = len(hf_tok)
    writers = {s: SequenceWriter(out, s, seq_len, vocab, pad_id) for s in SPLITS}
    stats = {s: SplitStats() for s in SPLITS}
    programs: dict[str, set[str]] = {s: set() for s in SPLITS}
    by_action: dict[str, list[NextStateExample]] = {}
    keep = _keep_probabilities(paths, inverse_fraction)
    results = _shard_results(paths, workers, tok_folder=str(tok_folder.resolve()), seq_len=seq_len, mask=mask,
                             heldout_fraction=heldout_fraction, keep=keep, seed=seed)
    for result in tqdm(results, total=len(paths), desc="packing", unit="shard", disable=not progress):
        for split in SPLITS:
            for doc in result.docs[split]:
                writers[split].add(doc.ids, doc.mask)
            _add_stats(stats[split], result.stats[split])
            programs[split] |= result.programs[split]
        for warning in result.warnings:
            tqdm.write(f"warning: {warning}", file=sys.stderr)
        for ex in result.examples:
            bucket = by_action.setdefault(ex.action, [])
            if len(bucket) < EXAMPLES_PER_ACTION:
                bucket.append(ex)
    for split, writer in writers.items():
        writer.close()
        st = stats[split]
        st.programs = len(programs[split])
        st.sequences, st.tokens, st.target_tokens = writer.sequences, writer.tokens, writer.target_tokens
        st.windows_too_long = writer.too_long
    examples = _interleave(by_action)
    with (out / EXAMPLES).open("w") as fh:
        for ex in examples:
            fh.write(ex.model_dump_json() + "\n")
    manifest = Manifest(
        source=str(Path(source).resolve()), seq_len=seq_len, dtype=str(token_dtype(vocab)), mask=mask, vocab_size=vocab,
        tokenizer_sha256=tokenizer_hash(hf_tok), bos_id=bos_id if bos_id is not None else -1, eos_id=eos_id, pad_id=pad_id,
        heldout_fraction=heldout_fraction, seed=seed, splits=stats, examples=len(examples), value_chars=value_chars,
    )  # fmt: skip
    manifest.save(out)
    return manifest


def _add_stats(total: SplitStats, part: SplitStats) -> None:
    for name in ("trajectories", "forward", "inverse", "windows", "states", "states_dropped", "trajectories_unrenderable"):
        setattr(total, name, getattr(total, name) + getattr(part, name))


def is_packed(folder: Path) -> bool:
    return (Path(folder) / MANIFEST).is_file()


def ensure_packed(
    data: Path, train_out: Path, tokenizer: Any, seq_len: int, mask: MaskMode, heldout_fraction: float, seed: int, main: bool
) -> Path:
    """A packed data folder for this run: `data` itself when it is packed with a matching tokenizer,
    else `train_out/data`, packed from `data` (trajectories) or from the packed folder's own source.

    Under torchrun only the main rank packs; the others wait for its manifest. The data decides value chars
    (`model.prompt.value_chars`): a packed folder is repacked the way it was packed, trajectories with the given
    tokenizer's flag, and a given `tokenizer` is marked to match the data it returns (so the trained model
    carries the flag of what it was trained on).
    """
    from model.prompt.value_chars import value_chars_enabled
    from train.modeling import tokenizer_hash

    data = Path(data)
    target = Path(train_out) / "data"
    want_hash = tokenizer_hash(tokenizer) if tokenizer is not None else None
    value_chars = value_chars_enabled(tokenizer) if tokenizer is not None else None
    if is_packed(data):
        manifest = Manifest.load(data)
        if want_hash is None or manifest.tokenizer_sha256 == want_hash:
            return _matched(data, tokenizer)
        source, seq_len, mask, heldout_fraction = Path(manifest.source), manifest.seq_len, manifest.mask, manifest.heldout_fraction
        value_chars = manifest.value_chars
    else:
        source = data
        shard_paths(source)  # a clear error now if there is nothing to pack
    if is_packed(target):
        existing = Manifest.load(target)
        same = (existing.source, existing.seq_len, existing.mask) == (str(source.resolve()), seq_len, mask)
        if same and (want_hash is None or existing.tokenizer_sha256 == want_hash) and value_chars in (None, existing.value_chars):
            return _matched(target, tokenizer)
    if main:
        import os

        workers = min(16, len(os.sched_getaffinity(0)))
        pack(source, target, tokenizer=tokenizer, seq_len=seq_len, mask=mask, heldout_fraction=heldout_fraction, seed=seed, workers=workers,
             value_chars=value_chars)  # fmt: skip
    else:
        _wait_for(target / MANIFEST)
    return _matched(target, tokenizer)


def _matched(folder: Path, tokenizer: Any) -> Path:
    """`folder`, with `tokenizer` (when given) marked with the value-chars flag the folder was packed with."""
    from model.prompt.value_chars import mark_value_chars

    if tokenizer is not None:
        mark_value_chars(tokenizer, Manifest.load(folder).value_chars)
    return folder


def _wait_for(path: Path, timeout_s: float = 3600) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while not path.is_file():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout_s:.0f}s for the main rank to pack {path.parent}")
        time.sleep(2)


# ---- command line -------------------------------------------------------------------------------

app = typer.Typer(add_completion=False, help="Pack trajectory shards into token sequences for training.")


@app.command()
def main(
    source: Path = typer.Argument(..., help="folder of trajectory shards (*.jsonl, *.jsonl.gz) or one shard"),
    out: Path = typer.Argument(..., help="data folder to write (replaced)"),
    tokenizer: Path | None = typer.Option(None, help="Hugging Face tokenizer folder; default: train one on the data"),
    seq_len: int = typer.Option(1024, help="tokens per packed sequence (the model's context)"),
    mask: str = typer.Option("states", help="loss on 'states' (predicted states only) or 'all' tokens"),
    heldout_fraction: float = typer.Option(0.05, help="fraction of programs held out"),
    inverse_fraction: float | None = typer.Option(None, help="resample so inverse trajectories are this fraction"),
    vocab_size: int = typer.Option(DEFAULT_VOCAB, help="vocabulary of a newly trained tokenizer"),
    seed: int = typer.Option(0),
    workers: int = typer.Option(1, help="processes tokenizing shards in parallel"),
    value_chars: bool | None = typer.Option(None, "--value-chars/--no-value-chars",
                                            help="string contents in state values one token per character (model.prompt.value_chars); "
                                                 "default: as the tokenizer's flag says"),
) -> None:
    """Pack SOURCE into OUT and print the manifest."""
    if mask not in ("states", "all"):
        raise typer.BadParameter("--mask must be 'states' or 'all'")
    try:
        manifest = pack(source, out, tokenizer_dir=tokenizer, seq_len=seq_len, mask=mask, heldout_fraction=heldout_fraction,  # type: ignore[arg-type]
                        inverse_fraction=inverse_fraction, vocab_size=vocab_size, seed=seed, workers=workers, value_chars=value_chars)
    except (FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(manifest.model_dump_json(indent=2))


if __name__ == "__main__":
    app()
