"""`neural-debugger eval`: CruxEval (`eval cruxeval`), next-state fidelity (`eval fidelity`) and held-out
next-state exact match per action on trajectory shards (`eval next-state`).

Heavy imports (torch, transformers) happen only inside the commands.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import typer

from model.decoding import Decoding
from train.eval.cli_options import (
    CallCandidatesOpt, CandidatesOpt, CheckWeightOpt, CoarseCandidatesOpt, CoarseStepsOpt, ConstrainedOpt, DecodingOpt, EvidenceWeightOpt, FlowConstraintOpt,
    ModelOpt, ProgressOpt, ReprCheckOpt, SampleSeedOpt, SeedPerDrawOpt, SoloOpt, StalePenaltyOpt, StepTokensOpt, ThreadsOpt, VllmUrlOpt,
)
from model.backends.ensemble import load_companions, named_companions
from model.paths import DEFAULT_CHECKPOINT
from model.decode.rerank import CALL_CANDIDATES, COARSE_CANDIDATES, EVIDENCE_WEIGHT, STALE_PENALTY
from tracegen.dedupe import BUNDLED_CRUXEVAL, default_cruxeval_path
from train.eval.partial_run import PartialRun, ResumeError, Taken
from train.eval.results_io import write_results

app = typer.Typer(add_completion=False, help="Evaluate a model: CruxEval, next-state fidelity, next-state exact match per action.", no_args_is_help=True)

DEFAULT_PROBLEMS = BUNDLED_CRUXEVAL  # tracegen/cruxeval/cruxeval.jsonl, shipped with the package; $CRUXEVAL_PATH overrides
BACKENDS = ("transformers", "vllm", "oracle")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _write_json(out: Path, data: Any) -> None:
    """An optional `--out` file of a command that prints its result: the same as JSON (folders made as needed)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Ranking:
    """How many answers each session draws per stop and how it ranks them (`model.decode.rerank`); None: the session's default."""

    candidates: int = 1  # every action but inv_step_call and the coarse ones
    call_candidates: int | None = None  # inv_step_call
    coarse_candidates: int | None = None  # step_return, continue, breakpoint
    check_weight: float | None = None  # the backward check of inv_step_call after a return
    evidence_weight: float | None = None  # per argument use an inv_step_call answer contradicts (model.decode.arg_evidence)
    stale_penalty: float | None = None  # off a coarse action's answer that loops back changing nothing (model.decode.rerank.is_stale)

    def session_options(self) -> dict[str, Any]:
        """The options set here, as `NeuralDebugger` keywords (the others keep the session's defaults)."""
        chosen = {"call_candidates": self.call_candidates, "coarse_candidates": self.coarse_candidates,
                  "check_weight": self.check_weight, "evidence_weight": self.evidence_weight, "stale_penalty": self.stale_penalty}  # fmt: skip
        return {name: value for name, value in chosen.items() if value is not None}

    def summary(self) -> dict[str, Any]:
        """The ranking as a results summary records it (defaults filled in)."""
        return {"candidates": self.candidates, "call_candidates": self.call_candidates or CALL_CANDIDATES,
                "coarse_candidates": self.coarse_candidates or COARSE_CANDIDATES, "check_weight": self.check_weight,
                "evidence_weight": EVIDENCE_WEIGHT if self.evidence_weight is None else self.evidence_weight,
                "stale_penalty": STALE_PENALTY if self.stale_penalty is None else self.stale_penalty}  # fmt: skip

    def summary_under(self, decoding: Decoding) -> dict[str, Any]:
        """`summary` as `decoding` applies it (the plain decoding draws one answer per stop, alone), with the decoding named."""
        if Decoding(decoding) is Decoding.PLAIN:
            return {"decoding": Decoding.PLAIN.value, "candidates": 1, "call_candidates": 1, "coarse_candidates": 1}
        return {"decoding": Decoding.FULL.value, **self.summary()}


@dataclass(frozen=True)
class Sampling:
    """Where the sampled answers come from (`model.backends.hf.HFBackend`'s seed and seed_per_draw)."""

    seed: int = 0  # the sampling seed; with per_draw, other seeds give independent draws of the same decoding
    per_draw: bool = True  # each sampled answer from its own seed: a run is the same with any --workers, whatever ran before

    def summary(self) -> dict[str, Any]:
        return {"sample_seed": self.seed, "seed_per_draw": self.per_draw}


class SharedBackend:
    """A backend shared by many sessions: closing one session leaves the model (and its KV cache) loaded."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.max_model_len = getattr(inner, "max_model_len", None)
        if hasattr(inner, "score"):  # teacher forcing (model.backends.base.Scorer), where the backend has it
            self.score = inner.score

    def generate(self, prompt_ids: list[int], **kwargs: Any) -> Any:
        return self.inner.generate(prompt_ids, **kwargs)

    def close(self) -> None:
        """Nothing: the owner (`ModelSessions`) closes the real backend."""


class ModelSessions:
    """Makes one session per program from a model loaded once (the backend and its tokenizer are shared)."""

    flow_constraint: bool = True  # narrow each forward stop to static control flow (model.static.flow)
    repr_check: bool = True  # never write an impossible repr (model.decode.repr_check)
    ranking: Ranking = Ranking()  # answers drawn per stop and how they are ranked (model.decode.rerank)
    coarse_steps: str = "model"  # Continue / Step Out as one jump, or by fine steps (NeuralDebugger.coarse_steps)
    step_tokens: int | None = None  # tokens one step may decode (model.budget.StepBudget, no time limit); None: unbounded

    def __init__(self, model: Path | None, backend: str, *, vllm_url: str | None, max_state_tokens: int,
                 constrained: bool, threads: int | None, sampling: Sampling = Sampling(),
                 companions: tuple[Path, ...] | None = None, decoding: Decoding = Decoding.FULL) -> None:  # fmt: skip
        self.kind = backend
        self.decoding = Decoding(decoding)  # the full decoding or the model alone (model.decoding)
        if self.decoding is Decoding.PLAIN:
            companions = ()  # the model alone: no companion is loaded
        self.max_state_tokens = max_state_tokens
        self.constrained = constrained
        self.backend: Any = None
        self.tokenizer: Any = None
        self.companions: list[Any] = []  # more models drawing and scoring inv_step_call's answers (NeuralDebugger.companions)
        self.companion_folders: list[str] = []  # where they were loaded from
        if backend == "oracle":
            return
        from model.backends.base import BackendError
        from model.paths import CheckpointNotFound, resolve_checkpoint

        try:
            folder = resolve_checkpoint(model)
            if backend == "transformers":
                from model.backends.hf import HFBackend

                self.backend = HFBackend(folder, threads=threads, seed=sampling.seed, seed_per_draw=sampling.per_draw)
                self.tokenizer = self.backend.tokenizer
                hf_options = {"threads": threads, "seed": sampling.seed, "seed_per_draw": sampling.per_draw}
                if companions is None:  # those ensemble.json names; one that cannot be used is a warning (the model answers alone)
                    loaded = named_companions(folder, self.tokenizer, **hf_options)
                else:
                    loaded = load_companions(companions, self.tokenizer, **hf_options)
                for problem in loaded.problems:
                    typer.echo(f"warning: {problem}", err=True)
                self.companions = loaded.backends
                self.companion_folders = [_shown(f) for f in loaded.folders]
            else:
                if companions:
                    raise _fail("--companion needs --backend transformers")
                from model.backends.vllm_server import VLLMServerBackend
                from model.session import _context_length, _load_tokenizer

                if not vllm_url:
                    raise _fail("--backend vllm needs --vllm-url (e.g. http://127.0.0.1:8000)")
                self.tokenizer = _load_tokenizer(folder)
                self.backend = VLLMServerBackend(vllm_url, seed=sampling.seed, max_model_len=_context_length(folder))
        except (CheckpointNotFound, BackendError) as exc:
            raise _fail(str(exc)) from None

    @property
    def oracle(self) -> bool:
        return self.kind == "oracle"

    def __call__(self, program: str, breakpoints: list[int] | None = None, path: str | None = None) -> Any:
        """A fresh, not yet started session on `program` (`path`: its file, beside its user modules)."""
        if self.oracle:
            from model.oracle import OracleDebugger

            return OracleDebugger(program, path, breakpoints=list(breakpoints or []))
        from model.budget import StepBudget
        from model.session import NeuralDebugger

        return NeuralDebugger(SharedBackend(self.backend), self.tokenizer, program, path, breakpoints=list(breakpoints or []),
                              temperature=0.0, max_state_tokens=self.max_state_tokens, constrained=self.constrained,
                              retry_temperature=None, flow_constraint=self.flow_constraint,
                              repr_check=self.repr_check, candidates=self.ranking.candidates,
                              companions=[SharedBackend(c) for c in self.companions], decoding=self.decoding,
                              coarse_steps=self.coarse_steps,  # type: ignore[arg-type]
                              budget=None if self.step_tokens is None else StepBudget(seconds=None, tokens=self.step_tokens),
                              **self.ranking.session_options())  # fmt: skip  (greedy first, retries included)

    def set_ranking(self, ranking: Ranking) -> None:
        """How many answers each session draws per stop and how it ranks them."""
        self.ranking = ranking

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
        for companion in self.companions:
            companion.close()


def _shown(folder: Path) -> str:
    """A folder as a summary records it: relative to the working directory when inside it (a checkout's checkpoints/...)."""
    path = Path(folder).resolve()
    return str(path.relative_to(Path.cwd().resolve())) if path.is_relative_to(Path.cwd().resolve()) else str(path)


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise _fail(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")


@app.command()
def cruxeval(
    mode: str = typer.Option("output", help="output (CruxEval-O) | input (CruxEval-I)"),
    via: str = typer.Option("step_return", help="output mode: step_return | breakpoint | fine (step_into line by line until f returns)"),
    fine_budget: int = typer.Option(200, min=1, help="--via fine: predicted stops after the calling line before giving up"),
    keep_candidates: bool = typer.Option(False, help="record every ranked answer of each problem's last ranked step (input: the arguments; output: the return value after step_return), scored and checked (for ranking studies: eval rerank)"),
    sample_seed: SampleSeedOpt = 0,
    seed_per_draw: SeedPerDrawOpt = True,
    model: ModelOpt = None,
    backend: str = typer.Option("transformers", help="transformers | vllm | oracle (tracegen's recorder: checks posing and scoring)"),
    vllm_url: VllmUrlOpt = None,
    problems: Path | None = typer.Option(None, help="CruxEval JSON lines (default: $CRUXEVAL_PATH, else the 800 problems shipped in tracegen/cruxeval/)"),
    limit: int | None = typer.Option(None, min=1, help="only the first N problems"),
    out: Path = typer.Option(..., help="output folder: predictions.jsonl and summary.json"),
    max_state_tokens: int = typer.Option(192, min=8, help="longest state to generate (a retry gets twice as many)"),
    constrained: ConstrainedOpt = True,
    threads: ThreadsOpt = 1,
    workers: int = typer.Option(1, min=1, help="processes, each with its own copy of the model (2 on 2 free cores)"),
    candidates: CandidatesOpt = 1,
    call_candidates: CallCandidatesOpt = None,
    coarse_candidates: CoarseCandidatesOpt = None,
    check_weight: CheckWeightOpt = None,
    evidence_weight: EvidenceWeightOpt = None,
    stale_penalty: StalePenaltyOpt = None,
    companion: list[Path] = typer.Option([], help="a companion checkpoint (repeatable): it draws inv_step_call answers too, each ranked by the mean log-probability under all models (model.backends.ensemble); default: those the checkpoint's ensemble.json names"),
    solo: SoloOpt = False,
    decoding: DecodingOpt = Decoding.FULL,
    resume: bool = typer.Option(False, help="take up the interrupted run in --out (same settings): keep its finished problems, ask the rest"),
    progress: ProgressOpt = True,
) -> None:
    """CruxEval pass@1 (greedy; inv_step_call the most likely of --call-candidates answers): pose each problem as a debugging session, score by executing the prediction."""
    from tqdm import tqdm

    from train.eval import cruxeval as cx

    if mode not in ("output", "input"):
        raise _fail(f"unknown mode {mode!r}: use output or input")
    if via not in cx.VIAS:
        raise _fail(f"unknown --via {via!r}: use one of {', '.join(cx.VIAS)}")
    _check_backend(backend)
    problems = problems or default_cruxeval_path()
    try:
        items = cx.load_problems(problems, limit)
    except cx.ProblemsError as exc:
        raise _fail(str(exc)) from None
    sampling = Sampling(sample_seed, seed_per_draw)
    companions = () if solo else (tuple(companion) or None)
    sessions = ModelSessions(model, backend, vllm_url=vllm_url, max_state_tokens=max_state_tokens, constrained=constrained, threads=threads,
                             sampling=sampling, companions=companions, decoding=decoding)  # fmt: skip
    ranking = Ranking(candidates, call_candidates, coarse_candidates, check_weight, evidence_weight, stale_penalty)
    sessions.set_ranking(ranking)
    asked = _crux_settings(mode, via, fine_budget, keep_candidates, model, backend, vllm_url, problems, max_state_tokens, constrained,
                           ranking.summary_under(decoding), sampling.summary(), companions, decoding)  # fmt: skip
    partial = PartialRun(out)
    try:
        taken = partial.take(asked, [p.id for p in items]) if resume else Taken()
    except ResumeError as exc:
        raise _fail(str(exc)) from None
    if resume:
        typer.echo(f"resuming: {len(taken.records)} of {len(items)} problems already done in {out}", err=True)
    elif partial.records_path.exists():
        typer.echo(f"note: starting over; the interrupted run's records in {out} are replaced (--resume takes them up)", err=True)
    records: list[dict[str, Any]] = list(taken.records)
    start = time.perf_counter()
    bar = tqdm(total=len(items), initial=len(records), desc=f"cruxeval {mode}", unit="problem", disable=not progress, dynamic_ncols=True)
    settings = (model, backend, vllm_url, max_state_tokens, constrained, threads, ranking, sampling, companions, decoding)
    with partial.writing(asked, taken) as writer, \
            _problem_runner(sessions, settings, CruxTask(mode, via, fine_budget, keep_candidates), workers) as run:  # what an interrupted run leaves
        for record in run(items[len(taken.records):]):
            records.append(record)
            bar.update(1)
            writer.add(record, time.perf_counter() - start)
            bar.set_postfix(pass1=f"{100.0 * sum(r['passed'] for r in records) / len(records):.1f}%")
    bar.close()
    sessions.close()
    elapsed = taken.seconds + time.perf_counter() - start
    summary = cx.summarize(
        records, mode=mode, via=via if mode == "output" else "inv_step_call", backend=backend,
        model=None if sessions.oracle else str(model or DEFAULT_CHECKPOINT), problems=str(problems),
        limit=limit, max_state_tokens=max_state_tokens, constrained=constrained, workers=workers, seconds=round(elapsed, 1),
        **ranking.summary_under(decoding), **sampling.summary(), companions=sessions.companion_folders, **({"fine_budget": fine_budget} if mode == "output" and via == "fine" else {}),
    )  # fmt: skip
    if taken.records:
        summary["resumed_after"] = len(taken.records)
    write_results(out, summary, records, "predictions.jsonl")
    partial.finish()
    typer.echo(f"pass@1 {summary['pass@1']:.2f}% ({summary['passed']}/{summary['n']}) in {elapsed:.0f} s; wrote {out}/predictions.jsonl and {out}/summary.json")


def _crux_settings(mode: str, via: str, fine_budget: int, keep_candidates: bool, model: Path | None, backend: str, vllm_url: str | None,
                   problems: Path, max_state_tokens: int, constrained: bool, ranking: dict[str, Any], sampling: dict[str, Any],
                   companions: tuple[Path, ...] | None, decoding: Decoding) -> dict[str, Any]:  # fmt: skip
    """What decides a CruxEval run's answers, as JSON (an interrupted run is taken up only under the same): the weights
    by their id, since a folder's weights change when a model ships, and the problems by their content, so a run goes
    on in another checkout."""
    from train.eval.results_io import weights_id

    folder = model or DEFAULT_CHECKPOINT
    return json.loads(json.dumps({
        "mode": mode, "via": via if mode == "output" else "inv_step_call", "fine_budget": fine_budget if via == "fine" else None,
        "keep_candidates": keep_candidates, "model": str(folder), "model_sha256": None if backend == "oracle" else weights_id(folder),
        "backend": backend, "vllm_url": vllm_url, "problems": _file_id(problems), "max_state_tokens": max_state_tokens,
        "constrained": constrained, "ranking": ranking, "sampling": sampling,
        "companions": None if companions is None else [str(c) for c in companions], "decoding": str(decoding.value),
    }, default=str))  # fmt: skip


def _file_id(path: Path) -> str:
    """`name@sha256[:12]` of a file's content (`name` alone when it cannot be read)."""
    import hashlib

    try:
        return f"{path.name}@{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"
    except OSError:
        return path.name


_WORKER: dict[str, Any] = {}  # per worker process: its ModelSessions and task settings (set once by _init_worker)


@dataclass(frozen=True)
class CruxTask:
    """What each problem is asked (`train.eval.cruxeval.evaluate_problem`'s options)."""

    mode: str
    via: str
    fine_budget: int
    keep_candidates: bool = False

    def run(self, problem: Any, sessions: ModelSessions) -> dict[str, Any]:
        from train.eval import cruxeval as cx

        return cx.evaluate_problem(problem, self.mode, self.via, sessions, oracle=sessions.oracle,  # type: ignore[arg-type]
                                   fine_budget=self.fine_budget, keep_candidates=self.keep_candidates)  # fmt: skip


def _init_worker(settings: tuple, task: CruxTask) -> None:
    model, backend, vllm_url, max_state_tokens, constrained, threads, ranking, sampling, companions, decoding = settings
    sessions = ModelSessions(model, backend, vllm_url=vllm_url, max_state_tokens=max_state_tokens, constrained=constrained, threads=threads,
                             sampling=sampling, companions=companions, decoding=decoding)  # fmt: skip
    sessions.set_ranking(ranking)
    _WORKER.update(sessions=sessions, task=task)


def _work(problem: Any) -> dict[str, Any]:
    return _WORKER["task"].run(problem, _WORKER["sessions"])


@contextmanager
def _problem_runner(sessions: ModelSessions, settings: tuple, task: CruxTask, workers: int) -> Iterator[Any]:
    """A function from problems to their records, in order: in this process, or in `workers` processes."""
    if workers <= 1:
        yield lambda items: (task.run(p, sessions) for p in items)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers, initializer=_init_worker, initargs=(settings, task)) as pool:
        yield lambda items: pool.imap(_work, items)


@app.command()
def fidelity(
    programs: Path = typer.Option(..., help="a folder of .py programs (a subfolder with a main.py is one multi-file program), one .py file, or a synth shard (.jsonl)"),
    model: ModelOpt = None,
    backend: str = typer.Option("transformers", help="transformers | vllm | oracle"),
    vllm_url: VllmUrlOpt = None,
    out: Path = typer.Option(..., help="output folder: summary.json and steps.jsonl"),
    seed: int = typer.Option(0, help="seed of the random action scripts"),
    scripts: int = typer.Option(2, min=1, help="random action scripts per program"),
    max_steps: int = typer.Option(12, min=1, help="actions per script"),
    limit: int | None = typer.Option(None, min=1, help="only the first N programs"),
    max_state_tokens: int = typer.Option(256, min=8, help="longest state to generate"),
    constrained: ConstrainedOpt = True,
    flow_constraint: FlowConstraintOpt = True,
    repr_check: ReprCheckOpt = True,
    candidates: CandidatesOpt = 1,
    call_candidates: CallCandidatesOpt = None,
    coarse_candidates: CoarseCandidatesOpt = None,
    check_weight: CheckWeightOpt = None,
    evidence_weight: EvidenceWeightOpt = None,
    stale_penalty: StalePenaltyOpt = None,
    sample_seed: SampleSeedOpt = 0,
    seed_per_draw: SeedPerDrawOpt = True,
    free_running: bool = typer.Option(False, help="the session goes on from its own predictions (as a user sees it), not from the real state"),
    coarse_steps: CoarseStepsOpt = "model",
    step_tokens: StepTokensOpt = None,
    threads: ThreadsOpt = 1,
    solo: SoloOpt = False,
    decoding: DecodingOpt = Decoding.FULL,
    progress: ProgressOpt = True,
) -> None:
    """Next-state exact match per action type and against horizon, vs tracegen's fast recorder (teacher-forced unless --free-running)."""
    from train.eval import fidelity as fd

    _check_backend(backend)
    try:
        sources = fd.load_programs(programs, limit)
    except fd.ProgramsError as exc:
        raise _fail(str(exc)) from None
    sampling = Sampling(sample_seed, seed_per_draw)
    sessions = ModelSessions(model, backend, vllm_url=vllm_url, max_state_tokens=max_state_tokens, constrained=constrained, threads=threads,
                             sampling=sampling, companions=() if solo else None, decoding=decoding)  # fmt: skip
    sessions.flow_constraint, sessions.repr_check = flow_constraint, repr_check
    from model.session import CoarseSteps

    if coarse_steps not in get_args(CoarseSteps):
        raise _fail(f"--coarse-steps must be one of {', '.join(get_args(CoarseSteps))}, not {coarse_steps!r}")
    sessions.coarse_steps, sessions.step_tokens = coarse_steps, step_tokens
    ranking = Ranking(candidates, call_candidates, coarse_candidates, check_weight, evidence_weight, stale_penalty)
    sessions.set_ranking(ranking)
    start = time.perf_counter()
    report = fd.evaluate(sources, sessions, seed=seed, scripts=scripts, max_steps=max_steps, progress=progress, free_running=free_running)
    summary = report.summary(backend=backend, model=None if sessions.oracle else str(model or DEFAULT_CHECKPOINT),
                             programs=str(programs), seed=seed, scripts=scripts, max_steps=max_steps,
                             constrained=constrained, flow_constraint=flow_constraint, repr_check=repr_check,
                             free_running=free_running, coarse_steps=coarse_steps, step_tokens=step_tokens, **ranking.summary_under(decoding), **sampling.summary(), companions=sessions.companion_folders,
                             seconds=round(time.perf_counter() - start, 1))  # fmt: skip
    sessions.close()
    write_results(out, summary, report.steps, "steps.jsonl")
    overall = summary["overall"]
    _echo_kinds(summary)
    typer.echo(f"next-state exact {100 * overall['state']:.1f}% (location {100 * overall['location']:.1f}%, locals {100 * overall['locals']:.1f}%) "
               f"over {overall['stops']} steps of {summary['programs_used']} programs; wrote {out}/summary.json")  # fmt: skip


def _echo_kinds(summary: dict[str, Any]) -> None:
    """Print the misses by line kind (train.eval.error_analysis) and the variables by value type (train.eval.value_types) as tables."""
    from train.eval.error_analysis import kind_lines
    from train.eval.value_types import value_type_lines

    if summary.get("by_line_kind"):
        typer.echo("\n".join(["misses by what the line does:", *kind_lines(summary["by_line_kind"])]))
    if summary.get("by_value_type"):
        typer.echo("\n".join(["top-frame variables by the type of their real value:", *value_type_lines(summary["by_value_type"])]))


@app.command("next-state")
def next_state(
    trajectories: Path = typer.Option(..., help="trajectory shards: a folder (searched recursively) or one .jsonl / .jsonl.gz, as `tracegen synth` writes"),
    model: ModelOpt = None,
    backend: str = typer.Option("transformers", help="transformers | vllm"),
    vllm_url: VllmUrlOpt = None,
    out: Path = typer.Option(..., help="output folder: summary.json and predictions.jsonl"),
    limit: int | None = typer.Option(None, min=1, help="only N states, a seeded sample round-robin over actions (default: every state)"),
    seed: int = typer.Option(0, help="seed of the sample"),
    seq_len: int | None = typer.Option(None, min=16, help="window length in tokens (default: the model's context, as in training)"),
    max_state_tokens: int = typer.Option(256, min=8, help="longest state to generate (a retry gets twice as many)"),
    constrained: ConstrainedOpt = True,
    flow_constraint: FlowConstraintOpt = True,
    repr_check: ReprCheckOpt = True,
    threads: ThreadsOpt = 1,
    candidates: CandidatesOpt = 1,
    call_candidates: CallCandidatesOpt = None,
    coarse_candidates: CoarseCandidatesOpt = None,
    check_weight: CheckWeightOpt = None,
    evidence_weight: EvidenceWeightOpt = None,
    stale_penalty: StalePenaltyOpt = None,
    sample_seed: SampleSeedOpt = 0,
    seed_per_draw: SeedPerDrawOpt = True,
    keep_candidates: bool = typer.Option(False, help="record every ranked answer of a stop that drew several, scored against the real stop (ranking studies)"),
    solo: SoloOpt = False,
    decoding: DecodingOpt = Decoding.FULL,
    progress: ProgressOpt = True,
) -> None:
    """Held-out next-state exact match per action, forward and inverse, on the windows training uses (greedy)."""
    from train.eval import next_state as ns

    if backend not in ("transformers", "vllm"):
        raise _fail(f"unknown backend {backend!r}: use transformers or vllm")
    if not trajectories.exists():
        raise _fail(f"no trajectories at {trajectories}: give a folder of shards or a .jsonl shard (`neural-debugger tracegen synth --out DIR`)")
    sampling = Sampling(sample_seed, seed_per_draw)
    sessions = ModelSessions(model, backend, vllm_url=vllm_url, max_state_tokens=max_state_tokens, constrained=constrained, threads=threads,
                             sampling=sampling, companions=() if solo else None, decoding=decoding)  # fmt: skip
    sessions.flow_constraint, sessions.repr_check = flow_constraint, repr_check
    ranking = Ranking(candidates, call_candidates, coarse_candidates, check_weight, evidence_weight, stale_penalty)
    sessions.set_ranking(ranking)
    start = time.perf_counter()
    window = seq_len or int(getattr(sessions.backend, "max_model_len", None) or 2048)
    try:
        selection = ns.select_questions(trajectories, sessions.tokenizer, window, limit=limit, seed=seed)
        if not selection.questions:
            raise ns.TrajectoriesError(f"the {selection.trajectories} trajectories at {trajectories} have no step whose state fits a window of {window} tokens")
        report = ns.evaluate(selection.questions, sessions, progress=progress, keep_candidates=keep_candidates)
    except ns.TrajectoriesError as exc:
        raise _fail(str(exc)) from None
    finally:
        sessions.close()
    elapsed = time.perf_counter() - start
    summary = report.summary(selection, backend=backend, model=str(model or DEFAULT_CHECKPOINT), trajectories=str(trajectories),
                             limit=limit, seed=seed, seq_len=window, max_state_tokens=max_state_tokens,
                             constrained=constrained, seconds=elapsed)  # fmt: skip
    summary.update(flow_constraint=flow_constraint, repr_check=repr_check, **ranking.summary_under(decoding), **sampling.summary(),
                   companions=sessions.companion_folders)  # fmt: skip
    write_results(out, summary, report.records, "predictions.jsonl")
    overall = summary["overall"]
    _echo_kinds(summary)
    per_action = ", ".join(f"{a} {100 * r['state']:.0f}% ({r['stops']})" for a, r in summary["by_action"].items())
    typer.echo(f"next-state exact {100 * overall['state']:.1f}% (location {100 * overall['location']:.1f}%, locals {100 * overall['locals']:.1f}%) "
               f"over {overall['stops']} states in {elapsed:.0f} s: {per_action}; wrote {out}/summary.json")  # fmt: skip


@app.command()
def dev(
    out: Path = typer.Option(Path("results/dev"), help="output folder: one folder per figure and decoding, and DEV.md"),
    model: ModelOpt = None,
    count: int = typer.Option(1200, min=4, help="synthetic dev trajectories, 4 per program (300 programs: 50 were too few to see a 4-5 point fall)"),
    seed: int = typer.Option(999, help="seed of the synthetic dev programs (never the test seed 12345)"),
    limit: int = typer.Option(600, min=1, help="next-state questions (fewer are too noisy to choose a model on)"),
    fidelity_programs: int = typer.Option(12, min=1, help="synthetic programs asked as fidelity scripts"),
    real: Path | None = typer.Option(None, help="a dev slice of real code: a folder of programs (a subfolder with main.py is one project), free-running"),
    real_limit: int | None = typer.Option(None, min=1, help="only the first N real programs"),
    decoding: list[Decoding] = typer.Option([Decoding.FULL, Decoding.PLAIN], help="decodings to run (repeat the option)"),
    data: Path = typer.Option(Path("data"), help="where the synthetic dev programs are written (reused when there)"),
    eval_options: str = typer.Option("", help="options added to every eval run, e.g. '--evidence-weight 8' or '--coarse-candidates 2'"),
    dry_run: bool = typer.Option(False, help="print the commands instead of running them"),
) -> None:
    """The dev split (train/eval/dev_split.py): synthetic dev programs and a dev slice of real code, with both decodings; choices are made here."""
    import shlex
    import subprocess

    from train.eval.dev_split import DevPlan, dev_markdown

    if real is not None and not real.exists():
        raise _fail(f"no real code at {real}: give a folder of programs")
    try:
        plan = DevPlan(out=out, data=data, model=model, count=count, seed=seed, next_state_limit=limit, fidelity_programs=fidelity_programs,
                       real=real, real_limit=real_limit, decodings=tuple(dict.fromkeys(decoding)), extra=tuple(shlex.split(eval_options)))  # fmt: skip
    except ValueError as exc:
        raise _fail(str(exc)) from None
    commands = [c for c in [plan.synth_command()] if c is not None] + plan.eval_commands()
    if dry_run:
        typer.echo("\n".join(shlex.join(c) for c in commands))
        return
    failed = []
    for command in commands:
        typer.echo(f"$ {shlex.join(command)}", err=True)
        if subprocess.run(command, check=False).returncode != 0:
            failed.append(shlex.join(command))
    out.mkdir(parents=True, exist_ok=True)
    (out / "DEV.md").write_text(dev_markdown(out, plan), encoding="utf-8")
    typer.echo((out / "DEV.md").read_text(encoding="utf-8"))
    if failed:
        raise _fail("these runs failed: " + "; ".join(failed))


@app.command()
def calibration(
    trajectories: list[Path] = typer.Option([], help="held-out trajectory shards (`neural-debugger tracegen synth --out DIR`): a folder or one .jsonl; repeat for several fitting sets (synthetic dev programs, a dev slice of real code)"),
    model: ModelOpt = None,
    backend: str = typer.Option("transformers", help="transformers | vllm"),
    vllm_url: VllmUrlOpt = None,
    out: Path = typer.Option(..., help="output folder: summary.json, records.jsonl, reliability.png, calibration.json"),
    limit: int | None = typer.Option(None, min=1, help="only N states per trajectories set, a seeded sample round-robin over actions (default: every state)"),
    seed: int = typer.Option(0, help="seed of the sample"),
    max_state_tokens: int = typer.Option(256, min=8, help="longest state to generate (a retry gets twice as many)"),
    threads: ThreadsOpt = 1,
    write_calibration: bool = typer.Option(False, "--write-calibration", help="write the fitted calibration.json into the --model folder"),
    records: list[Path] = typer.Option([], help="refit from earlier runs' records.jsonl of this model instead of generating (fast; --trajectories are then not answered); repeat to pool several sets"),
    progress: ProgressOpt = True,
) -> None:
    """Reliability of the model's confidence (location, each variable) on held-out teacher-forced states; ECE raw and calibrated, per set."""
    from model.paths import CheckpointNotFound, resolve_checkpoint
    from train.eval import calibration as cal
    from train.eval import next_state as ns

    if backend not in ("transformers", "vllm"):
        raise _fail(f"unknown backend {backend!r}: use transformers or vllm")
    if not trajectories and not records:
        raise _fail("give --trajectories (shards to answer) or --records (an earlier run's records.jsonl)")
    missing = [str(t) for t in trajectories if not t.exists()]
    if missing and not records:
        raise _fail(f"no trajectories at {', '.join(missing)}: give a folder of shards or a .jsonl shard (`neural-debugger tracegen synth --out DIR`)")
    try:
        folder = resolve_checkpoint(model)
    except CheckpointNotFound as exc:
        raise _fail(str(exc)) from None
    start = time.perf_counter()
    scored: list[Any] = []
    for path in records:
        try:
            scored += cal.read_records(path)
        except (OSError, ValueError) as exc:
            raise _fail(f"cannot read the records {path}: {exc}") from None
    if not records:
        sessions = ModelSessions(folder, backend, vllm_url=vllm_url, max_state_tokens=max_state_tokens, constrained=True, threads=threads,
                                 companions=())  # calibrates this model alone
        window = int(getattr(sessions.backend, "max_model_len", None) or 2048)
        try:
            for path in trajectories:
                selection = ns.select_questions(path, sessions.tokenizer, window, limit=limit, seed=seed)
                if not selection.questions:
                    raise ns.TrajectoriesError(f"the {selection.trajectories} trajectories at {path} have no step whose state fits a window of {window} tokens")
                scored += cal.collect(selection.questions, sessions, progress=progress, source=path.name)
        except ns.TrajectoriesError as exc:
            raise _fail(str(exc)) from None
        finally:
            sessions.close()
    if not any(s.half == 0 for s in scored) or not any(s.half == 1 for s in scored):
        raise _fail("the held-out programs all fall in one half: give more trajectories (or a larger --limit)")
    fitted, fits = cal.fit(scored)
    elapsed = time.perf_counter() - start
    sets = ", ".join(str(p) for p in (records or trajectories))
    summary = cal.summarize(scored, fitted, fits, backend=backend, model=str(folder), trajectories=sets, limit=limit,
                            seed=seed, max_state_tokens=max_state_tokens, seconds=round(elapsed, 1))  # fmt: skip
    fitted.report = {"trajectories": sets, "limit": limit, "seed": seed, "questions": len(scored),
                     **{name: {k: summary["fields"][name][k] for k in ("method", "ece_raw", "ece_calibrated", "n_fit", "n_eval")}
                        for name in summary["fields"]}, "kind_maps": summary["kind_maps"], "by_kind": summary["by_kind"]}  # fmt: skip
    write_results(out, summary, [s.to_json() for s in scored], "records.jsonl")
    fitted.save(out)
    cal.plot(summary, out / "reliability.png")
    wrote = ""
    if write_calibration:
        wrote = f"; wrote {fitted.save(folder)}"
    parts = ", ".join(f"{name} ECE {f['ece_raw']:.3f} -> {f['ece_calibrated']:.3f} ({f['method']}, n={f['n_eval']})"
                      for name, f in summary["fields"].items())  # fmt: skip
    for source, fields in [*summary["by_source"].items(), *((f"kind {k}", v) for k, v in summary["by_kind"].items())]:
        typer.echo(f"{source}: " + ", ".join(f"{name} ECE {f['ece_raw']:.3f} -> {f['ece_calibrated']:.3f} (n={f['n']})" for name, f in fields.items()
                                             if f["n"]))  # fmt: skip
    typer.echo(f"{parts} over {len(scored)} states in {elapsed:.0f} s; wrote {out}/summary.json, {out}/calibration.json and {out}/reliability.png{wrote}")


@app.command("calibration-check")
def calibration_check(
    records: list[Path] = typer.Option(..., help="records.jsonl of `eval calibration` runs (the sets to measure on; repeatable)"),
    calibration: list[Path] = typer.Option(..., help="a calibration.json, or a checkpoint folder holding one (repeatable: before and after)"),
    half: int | None = typer.Option(None, min=0, max=1, help="only the questions of this program half (1: the half a fit on those records left out)"),
    out: Path | None = typer.Option(None, help="also write the table as JSON here"),
) -> None:
    """ECE of the location and variable confidences of each set of records under each calibration (no model runs)."""
    from model.decode.confidence import Calibration
    from train.eval import calibration as cal

    maps: dict[str, Calibration] = {}
    for path in calibration:
        file = path / "calibration.json" if path.is_dir() else path
        try:
            maps[str(path)] = Calibration.model_validate_json(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _fail(f"cannot read the calibration {file}: {exc}") from None
    table: dict[str, dict[str, Any]] = {}
    for path in records:
        try:
            scored = cal.read_records(path)
        except (OSError, ValueError) as exc:
            raise _fail(f"cannot read the records {path}: {exc}") from None
        table[str(path)] = {name: cal.check(scored, mapping, half) for name, mapping in maps.items()}
    typer.echo("| records | calibration | locations | location ECE raw -> calibrated | variables | variable ECE raw -> calibrated |")
    typer.echo("|---|---|---|---|---|---|")
    for path, by_map in table.items():
        for name, fields in by_map.items():
            loc, var = fields["location"], fields["variable"]
            typer.echo(f"| {path} | {name} | {loc['n']} | {loc['ece_raw']} -> {loc['ece_calibrated']} | {var['n']} | {var['ece_raw']} -> {var['ece_calibrated']} |")
    if out is not None:
        _write_json(out, table)


@app.command()
def plots(
    results: Path = typer.Option(Path("results"), help="folder holding the eval outputs (cruxeval-*/, fidelity/)"),
    readme: Path | None = typer.Option(None, help="also copy the tables into this README, between <!-- results:start --> and <!-- results:end -->"),
) -> None:
    """Plots (PNG) and RESULTS.md from the JSON summaries in RESULTS."""
    from train.eval import plots as pl
    from train.eval.spread import SpreadError

    try:
        written = pl.make_all(results, readme)
    except SpreadError as exc:
        raise _fail(f"{exc} (under {results}/seeds)") from None
    for path in written:
        typer.echo(f"wrote {path}")
    if not written:
        raise _fail(f"no summaries found under {results}")


@app.command()
def stamp(
    model: Path = typer.Option(..., help="the checkpoint folder the summaries name (e.g. checkpoints/default) before new weights replace it"),
    results: Path = typer.Option(Path("results"), help="folder holding the eval outputs"),
) -> None:
    """Tie the summaries under RESULTS that name MODEL but no weights to MODEL's weights now (model_sha256): run it before
    shipping a new model into that folder, so tables and cards label the figures it leaves as an earlier model's."""
    from train.eval.results_io import stamp as stamp_summaries

    try:
        stamped = stamp_summaries(results, model)
    except FileNotFoundError as exc:
        raise _fail(str(exc)) from None
    for path in stamped:
        typer.echo(f"stamped {path}")
    typer.echo(f"{len(stamped)} summaries tied to the weights of {model}")


@app.command()
def spread(
    runs: list[Path] = typer.Argument(..., help="output folders of one figure's runs under different --sample-seed (each with summary.json)"),
    out: Path | None = typer.Option(None, help="also write the spread as JSON here"),
) -> None:
    """Each run's score, their mean, standard deviation and range: how much of a ranked figure is which samples were drawn."""
    from train.eval import spread as sp

    try:
        summaries = [json.loads((run / "summary.json").read_text(encoding="utf-8")) for run in runs]
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot read a run's summary.json: {exc}") from None
    try:
        result = sp.spread_of(", ".join(str(r) for r in runs), summaries)
    except sp.SpreadError as exc:
        raise _fail(str(exc)) from None
    for run in result.runs:
        typer.echo(f"seed {run.seed if run.seed is not None else '-'}: {run.right}/{run.total} ({run.percent:.2f}%)")
    typer.echo(f"mean {result.mean:.2f}% ({result.mean_right:.1f}/{result.runs[0].total}), sd {result.sd:.2f}, "
               f"range {result.low:.2f}-{result.high:.2f} over {len(result.runs)} runs")  # fmt: skip
    if out is not None:
        _write_json(out, result.as_dict())


@app.command()
def paired(
    a: Path = typer.Argument(..., help="a run's output folder (next-state or CruxEval, with predictions.jsonl), e.g. the shipped model's"),
    b: Path = typer.Argument(..., help="the other run's folder, on the same questions (e.g. a candidate's)"),
    out: Path | None = typer.Option(None, help="also write the comparison as JSON here"),
) -> None:
    """Two runs item by item: right in both, only in A, only in B, and the exact sign test of that split (per action too)."""
    from train.eval import paired as pr

    try:
        result = pr.compare(a, b)
    except pr.PairedError as exc:
        raise _fail(str(exc)) from None
    for line in pr.report(result):
        typer.echo(line)
    if out is not None:
        _write_json(out, result.as_dict())


@app.command("rerank-states")
def rerank_states(
    predictions: Path = typer.Argument(..., help="predictions.jsonl of `eval next-state --keep-candidates`"),
    stale_penalty: list[float] = typer.Option([0.0, STALE_PENALTY], help="stale penalties to try (repeat the option)"),
) -> None:
    """Next-state exact matches of the same kept answers under other stale penalties (no model runs; model.decode.rerank.is_stale)."""
    from train.eval import rank_study as rs

    try:
        records = rs.read_kept(predictions)
    except rs.RankStudyError as exc:
        raise _fail(str(exc)) from None
    if not all("matched" in r and "action" in r for r in records):
        raise _fail(f"{predictions} is not a next-state run (use `eval rerank` for CruxEval)")
    if not any("stale" in c for r in records for c in r.get("candidates") or []):
        typer.echo("note: the run kept no stale marks (it predates them): every penalty ranks as 0", err=True)
    for penalty in stale_penalty:
        result = rs.rerank_states(records, penalty)
        actions = ", ".join(f"{a} {n}" for a, n in result.by_action.items())
        typer.echo(f"stale penalty {penalty:g}: {result.matched}/{result.questions} ({100 * result.matched / result.questions:.1f}%), "
                   f"{result.gained} gained and {result.lost} lost vs the run; {actions}")  # fmt: skip
    typer.echo(f"a matching answer among the kept ones: {rs.states_oracle(records)}/{len(records)}")


@app.command("pool")
def pool_runs(
    predictions: list[Path] = typer.Argument(..., help="two or more predictions.jsonl of `eval cruxeval --keep-candidates` on the same problems"),
    evidence_weight: float = typer.Option(EVIDENCE_WEIGHT, help="log-probability taken off per argument use an answer contradicts"),
) -> None:
    """CruxEval pass count if one session had drawn all the runs' answers (each scored by the model that drew it; no model runs)."""
    from train.eval import rank_study as rs

    try:
        result = rs.pool([rs.read_kept(p) for p in predictions], evidence_weight)
    except rs.RankStudyError as exc:
        raise _fail(str(exc)) from None
    alone = ", ".join(f"{n}" for n in result.alone)
    typer.echo(f"pooled {result.runs} runs: {result.passed}/{result.problems} ({100 * result.passed / result.problems:.2f}%); "
               f"each alone: {alone}; a passing answer in the pool: {result.oracle}")  # fmt: skip


@app.command()
def rerank(
    predictions: Path = typer.Argument(..., help="predictions.jsonl of `eval cruxeval --keep-candidates`"),
    evidence_weight: list[float] = typer.Option([0.0, EVIDENCE_WEIGHT], help="evidence weights to try (repeat the option)"),
    out: Path | None = typer.Option(None, help="write the run as ranked with the (one) --evidence-weight here: predictions.jsonl and summary.json"),
) -> None:
    """CruxEval pass count of the same kept answers under other evidence weights (no model runs; output answers contradict no use)."""
    from train.eval import rank_study as rs

    try:
        records = rs.read_kept(predictions)
    except rs.RankStudyError as exc:
        raise _fail(str(exc)) from None
    if out is not None:
        if len(evidence_weight) != 1:
            raise _fail("--out writes one ranking: give exactly one --evidence-weight")
        try:
            settings = json.loads((predictions.parent / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _fail(f"--out needs the run's summary.json beside {predictions}: {exc}") from None
        ranked = rs.reranked_records(records, evidence_weight[0])
        write_results(out, rs.reranked_summary(ranked, settings, evidence_weight[0]), ranked, "predictions.jsonl")
    for weight in evidence_weight:
        result = rs.rerank(records, weight)
        typer.echo(f"evidence weight {weight:g}: {result.passed}/{result.problems} ({100 * result.passed / result.problems:.2f}%), "
                   f"{result.gained} gained and {result.lost} lost vs the run")  # fmt: skip
    typer.echo(f"a passing answer among the kept ones: {rs.oracle(records)}/{len(records)}")
