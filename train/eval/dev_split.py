"""The dev split: the sets every choice (a weight, a threshold, a candidate count, which model ships) is made on.

`DevPlan` lists the runs of `neural-debugger eval dev` (`make dev`): synthetic programs of a dev seed
(`tracegen synth --seed 999`, never the test seed 12345) asked as next-state questions (forward and
inverse, teacher-forced) and as fidelity scripts, and, when given, a folder of real code (a dev slice:
never the realworld or everyday sets) free-running; each run once with the full decoding and once with
the model alone (`--decoding plain`, `model.decoding`), into ``OUT/<figure>`` and ``OUT/<figure>-plain``.
The runs are the ordinary `eval` commands, so a dev figure and a test figure are counted the same way;
`dev_markdown` writes ``OUT/DEV.md`` (`train.eval.alone`'s table). The test sets (CruxEval, next-state seed
12345, realworld, everyday) are run once per shipped model, by `make results` (docs/evaluation.md).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from model.decoding import Decoding

DEV_SEED = 999  # synthetic dev programs (session 15's stale-penalty study used `tracegen synth --count 1500 --seed 999`)
TEST_SEEDS = frozenset({12345})  # the held-out test seed of `make results`: never a dev set


@dataclass(frozen=True)
class DevPlan:
    """What `eval dev` runs (see the module docstring). `extra`: options passed to every eval (e.g. --evidence-weight 8)."""

    out: Path
    data: Path
    model: Path | None = None
    count: int = 1200  # synthetic trajectories (4 per program): 300 programs; 50 (200 trajectories) missed a 4-5 point fall twice (sessions 23, 25)
    seed: int = DEV_SEED
    next_state_limit: int = 600  # 60 or 100 states (7-13 per action) missed a 10-point fall that 300 test states showed (session 21)
    fidelity_programs: int = 12
    real: Path | None = None  # a dev slice of real code: a folder of programs (`eval fidelity --programs`)
    real_limit: int | None = None
    decodings: tuple[Decoding, ...] = (Decoding.FULL, Decoding.PLAIN)
    extra: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.seed in TEST_SEEDS:
            raise ValueError(f"seed {self.seed} is a test seed (make results): choose on another one, e.g. {DEV_SEED}")

    @property
    def synth_folder(self) -> Path:
        return self.data / f"dev-synth-s{self.seed}-n{self.count}"

    def synth_command(self) -> list[str] | None:
        """The `tracegen synth` run that makes the synthetic dev programs (None: already made)."""
        if (self.synth_folder / "shard-00000.jsonl").is_file():
            return None
        return [*_cli(), "tracegen", "synth", "--count", str(self.count), "--per-program", "4", "--seed", str(self.seed),
                "--out", str(self.synth_folder), "--no-progress"]  # fmt: skip

    def eval_commands(self) -> list[list[str]]:
        """One `eval` run per figure and decoding."""
        model = ["--model", str(self.model)] if self.model is not None else []
        figures: list[tuple[str, list[str]]] = [
            ("next-state", ["next-state", "--trajectories", str(self.synth_folder), "--limit", str(self.next_state_limit), "--seed", "0"]),
            ("fidelity-synth", ["fidelity", "--programs", str(self.synth_folder / "shard-00000.jsonl"), "--limit", str(self.fidelity_programs),
                                "--seed", "0", "--scripts", "1"]),
        ]  # fmt: skip
        if self.real is not None:
            limit = ["--limit", str(self.real_limit)] if self.real_limit else []
            figures.append(("realcode", ["fidelity", "--programs", str(self.real), *limit, "--seed", "0", "--scripts", "1", "--max-steps", "12",
                                         "--free-running"]))  # fmt: skip
        commands = []
        for name, args in figures:
            for decoding in self.decodings:
                folder = self.out / (name if decoding is Decoding.FULL else f"{name}-plain")
                commands.append([*_cli(), "eval", *args, *model, "--decoding", decoding.value, "--no-progress", *self.extra, "--out", str(folder)])
        return commands


def _cli() -> list[str]:
    return [sys.executable, "-m", "neural_debugger_cli"]


def dev_markdown(out: Path, plan: DevPlan) -> str:
    """DEV.md: how the dev sets were made, and the model alone next to the full decoding on them."""
    from train.eval.alone import alone_lines
    from train.eval.plots import load_summaries

    lines = ["# Dev split", "", f"Written by `neural-debugger eval dev` (`train/eval/dev_split.py`). Synthetic: `{plan.synth_folder}` "
             f"(`tracegen synth --count {plan.count} --per-program 4 --seed {plan.seed}`), next-state on {plan.next_state_limit} "
             f"questions, fidelity on {plan.fidelity_programs} programs" + (f"; real code: `{plan.real}`, free-running." if plan.real else "."),
             "Choose weights, thresholds and candidate counts here; the test sets are run once per shipped model.", ""]  # fmt: skip
    table = alone_lines(load_summaries(out))
    return "\n".join(lines + (table[2:] if table else ["No run finished."])) + "\n"
