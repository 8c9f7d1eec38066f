"""Neural step latency on CPU against debugpy's step + stackTrace/scopes/variables, in one run.

    .venv/bin/python bench/bench_step.py [--checkpoint DIR] [--program FILE] [--steps N]

The neural side: `NeuralDebugger` with the transformers backend (default checkpoint:
checkpoints/default if it exists, else a tiny random one built on the fly, whose timings are
then only indicative), stepIn repeatedly; a neural stop already carries the stack and locals, so
its step time includes the inspection. Two neural runs: free-running (the checkpoint predicts
each state; an untrained one wanders to the token limit) and true-length (the real history from
the oracle, and per step as many decoded tokens as the true state has: the latency of a model
that predicts right). The debugpy side: tracegen's `DebugpySession` (real
debugpy over DAP), whose step waits for the stop and then asks stackTrace, scopes and variables.
Prints p50/p90 in ms for both, the ratio, and the prompt tokens prefilled per neural step (flat
when the KV cache of the shared prefix is reused) against the prompt length (which grows).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.debugger import Action, ActionKind  # noqa: E402

INTO = Action(kind=ActionKind.STEP_INTO)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def neural_run(checkpoint: Path, program: Path, steps: int, max_state_tokens: int) -> dict:
    from model.session import NeuralDebugger

    session = NeuralDebugger.from_checkpoint(checkpoint, program.read_text(), str(program), max_state_tokens=max_state_tokens)
    session.start()
    times, prefills, prompts = [], [], []
    for _ in range(steps):
        if session.state.finished:
            break
        prompt_len = len(session._prompt_ids(INTO))
        before = len(session.prefill_log)
        start = time.perf_counter()
        session.step(INTO)
        times.append((time.perf_counter() - start) * 1000)
        prefills.append(sum(p or 0 for p in session.prefill_log[before:]))
        prompts.append(prompt_len)
    session.close()
    return {"times": times, "prefill": prefills, "prompt": prompts}


def teacher_forced_run(checkpoint: Path, program: Path, steps: int, source: str | None = None, backend: object = None,
                       start_line: int | None = None) -> dict:
    """Per step: prefill the new tokens and decode as many tokens as the TRUE next state has.

    The history is the real one (from the oracle), so this is the latency a model that predicts
    every state right would have, whatever the checkpoint's quality (the constraint is off).
    `source`: the program's text (default: read from `program`); `backend`: an already loaded
    model to share between runs (its cache is reset first), else the checkpoint is loaded here.
    `start_line`: start at the first stop on that line (a breakpoint) instead of the entry.
    """
    from model.prompt import language as lang
    from model.oracle import OracleDebugger
    from model.session import NeuralDebugger

    source = program.read_text() if source is None else source
    if backend is None:
        session = NeuralDebugger.from_checkpoint(checkpoint, source, str(program))
    else:
        backend.close()  # type: ignore[attr-defined]
        session = NeuralDebugger(backend, backend.tokenizer, source, str(program))  # type: ignore[arg-type, attr-defined]
    oracle = OracleDebugger(source, str(program))
    previous = oracle.start()
    session.start()
    if start_line is not None:  # run (the oracle) to that line first; the session starts there
        oracle.set_breakpoints([start_line])
        previous = oracle.step(Action(kind=ActionKind.CONTINUE))
        oracle.set_breakpoints([])
        session.start_from(previous)
    times, prefills, prompts, lengths = [], [], [], []
    for _ in range(steps):
        if previous.finished:
            break
        true = oracle.step(INTO)
        target = session._encode(lang.render_state(true, previous))
        start = time.perf_counter()  # the prompt's making (window, listing) is part of the step
        prompt = session._prompt_ids(INTO)
        gen = session.backend.generate(prompt, max_tokens=len(target) - 1, temperature=0.0, stop_ids=[session.stop_id])
        lang.parse_state(session.tokenizer.decode(target, skip_special_tokens=False), previous, source)
        times.append((time.perf_counter() - start) * 1000)
        prefills.append(gen.prefilled)
        prompts.append(len(prompt))
        lengths.append(len(target))
        session.append(INTO, true)
        previous = true
    if backend is None:
        session.close()
    return {"times": times, "prefill": prefills, "prompt": prompts, "state_tokens": lengths}


LONG_FILE_MODULE = "cmd"  # a pure-Python standard-library module of 401 lines, prepended to the short program


def long_version(short: str, module: str = LONG_FILE_MODULE) -> str:
    """`short` after the source of a standard-library module: the same stops, in a file ~400 lines longer.

    The module's ``if __name__ == "__main__":`` block, if any, is switched off (same line numbers).
    """
    import sysconfig

    text = (Path(sysconfig.get_paths()["stdlib"]) / f"{module}.py").read_text(encoding="utf-8")
    for quote in ("'", '"'):
        text = text.replace(f"if __name__ == {quote}__main__{quote}:", f"if __name__ == {quote}__not_main__{quote}:")
    return text.rstrip("\n") + "\n\n" + short


def file_length_run(checkpoint: Path, program: Path, steps: int, rounds: int = 3) -> dict:
    """True-length step latency on `program` and on `long_version(program)`, interleaved in one process.

    Both sessions share one loaded model; each round runs the short then the long program, so a
    busy machine slows both alike. Two long runs: from the entry (through the module's own
    top-level code: its class and function definitions) and from the first line of the appended
    short program (the same stops as the short run, in a file ~400 lines longer). Returns each
    run's step times, prompt sizes and prefilled tokens, and the line counts.
    """
    from model.backends.hf import HFBackend
    from model.session import entry_state

    backend = HFBackend(checkpoint)
    short_source = program.read_text()
    long_source = long_version(short_source)
    offset = len(long_source.splitlines()) - len(short_source.splitlines())
    first = entry_state(short_source).frames[0].line + offset
    runs: dict[str, dict] = {name: {"times": [], "prompt": [], "prefill": []} for name in ("short", "long_same_stops", "long_from_entry")}
    plan = (("short", short_source, None), ("long_same_stops", long_source, first), ("long_from_entry", long_source, None))
    for _ in range(rounds):
        for name, source, start_line in plan:
            result = teacher_forced_run(checkpoint, program, steps, source=source, backend=backend, start_line=start_line)
            for key in runs[name]:
                runs[name][key] += result[key]
    backend.close()
    return {**runs, "short_lines": len(short_source.splitlines()), "long_lines": len(long_source.splitlines())}


def debugpy_run(program: Path, steps: int) -> dict:
    try:
        from tracegen.debugpy_recorder import DebugpySession
    except ImportError as exc:
        return {"times": [], "error": str(exc)}
    times = []
    with DebugpySession() as session:
        state = session.start(program)
        for _ in range(steps):
            if state.finished:
                break
            start = time.perf_counter()
            state = session.step(INTO)
            times.append((time.perf_counter() - start) * 1000)
    return {"times": times}


def tiny_checkpoint(folder: Path) -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import build_tiny_checkpoint

    return build_tiny_checkpoint(folder)


def main() -> None:
    from model.paths import DEFAULT_CHECKPOINT

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, default=None)
    parser.add_argument("--program", type=Path, default=ROOT / "examples" / "functions.py")
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--max-state-tokens", type=int, default=96)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-step-") as tmp:
        checkpoint = args.checkpoint or (DEFAULT_CHECKPOINT if (DEFAULT_CHECKPOINT / "config.json").is_file() else None)
        label = str(checkpoint)
        if checkpoint is None:
            checkpoint = tiny_checkpoint(Path(tmp) / "tiny")
            label = "tiny RANDOM checkpoint (checkpoints/default not trained yet): timings indicative only"
        neural = neural_run(checkpoint, args.program, args.steps, args.max_state_tokens)
        forced = teacher_forced_run(checkpoint, args.program, args.steps)
        real = debugpy_run(args.program, args.steps)
    print(f"program: {args.program}  checkpoint: {label}")
    rows = [
        ("neural, free-running", neural["times"]),
        ("neural, true-length states", forced["times"]),
        ("debugpy step+inspection", real["times"]),
    ]
    for name, times in rows:
        if times:
            print(f"{name:28s} steps={len(times):3d}  p50={percentile(times, .5):8.1f} ms  p90={percentile(times, .9):8.1f} ms  mean={statistics.fmean(times):8.1f} ms")
        else:
            print(f"{name:28s} unavailable {real.get('error', '')}")
    for name, run in (("free-running", neural), ("true-length", forced)):
        if run["times"] and real["times"]:
            ratio = percentile(run["times"], .5) / percentile(real["times"], .5)
            print(f"ratio neural ({name}) / debugpy, p50: {ratio:.2f}  ({'neural faster' if ratio < 1 else 'debugpy faster'})")
    print("free-running  prompt tokens per step:   ", neural["prompt"])
    print("free-running  prefilled tokens per step:", neural["prefill"])
    print("true-length   prompt tokens per step:   ", forced["prompt"])
    print("true-length   prefilled tokens per step:", forced["prefill"])
    print("true-length   state tokens per step:    ", forced["state_tokens"])


if __name__ == "__main__":
    main()
