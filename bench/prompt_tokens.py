"""Prompt tokens per step on examples/ and on long real files (standard-library modules), and context errors.

    nice -n 10 .venv/bin/python bench/prompt_tokens.py [--steps 60] [--free-steps 30] [--code DIR]

For each program, the true stops (fast recorder, stepIn then stepOver alternating... see ACTIONS)
are fed to a `NeuralDebugger` one by one (teacher forcing: `append`), and the prompt it would send
before each step is measured (`_prompt_ids`): tokens per step (mean / max), the listing's tokens,
and the steps that fail with a context error. With --free-steps N, the shipped model then runs N
free steps on each long file (its own predictions), counting context errors.

The long files are pure-Python standard-library modules with their ``__main__`` block switched off
and a small driver appended (`LONG_FILES`). --code DIR imports the project's packages from DIR
instead (e.g. an older commit unpacked with ``git archive COMMIT model protocol tracegen | tar -x -C
DIR``), to measure the rule before a change with the same programs.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LONG_FILES = {
    "bisect": "a = [1, 3, 5, 7]\ninsort(a, 4)\nprint(a, bisect_left(a, 5))",
    "heapq": "h = []\nfor v in [5, 1, 4]:\n    heappush(h, v)\nprint(nsmallest(2, h), list(merge([1, 3], [2])))",
    "colorsys": "print(rgb_to_hls(0.2, 0.4, 0.4))\nprint(hsv_to_rgb(0.5, 0.5, 0.5))",
    "textwrap": "print(shorten('Hello  world, this is a long text', width=20))\nprint(dedent('  a\\n  b'))",
    "fnmatch": "print(translate('*.py'))\nprint(filter(['a.py', 'b.txt'], '*.py'))",
    "shlex": "print(split(\"a 'b c' d\"))\nprint(quote('it is'))",
}


def long_file(name: str) -> str:
    text = (Path(sysconfig.get_paths()["stdlib"]) / f"{name}.py").read_text(encoding="utf-8")
    for quote in ("'", '"'):
        text = text.replace(f"if __name__ == {quote}__main__{quote}:", f"if __name__ == {quote}__not_main__{quote}:")
    return text.rstrip("\n") + "\n\n" + LONG_FILES[name] + "\n"


def measure(backend, program: str, steps: int) -> dict:  # noqa: ANN001 - an HFBackend
    from model.session import NeuralDebugger
    from model.session_api import SessionError
    from protocol.debugger import Action, ActionKind
    from tracegen.fast import record_program, replay

    actions = [Action(kind=ActionKind.STEP_INTO if i % 3 else ActionKind.STEP_OVER) for i in range(steps)]
    states = replay(record_program(program), actions, [])
    backend.close()
    session = NeuralDebugger(backend, backend.tokenizer, program)
    session.start()
    prompts, errors = [], 0
    for action, state in zip(actions, states[1:]):
        try:
            prompts.append(len(session._prompt_ids(action)))
        except SessionError:
            errors += 1
        session.append(action, state)
    full_header = len(session._encode(__import__("model.prompt.language", fromlist=["x"]).render_header(program, [])))
    return {"prompts": prompts, "errors": errors, "steps": len(states) - 1, "full_header": full_header}


def free_run(backend, program: str, steps: int) -> tuple[int, int]:  # noqa: ANN001
    from model.session import NeuralDebugger
    from model.session_api import SessionError
    from protocol.debugger import Action, ActionKind

    backend.close()
    session = NeuralDebugger(backend, backend.tokenizer, program, max_state_tokens=96)
    session.start()
    done = errors = 0
    for i in range(steps):
        if session.state.finished:
            break
        try:
            session.step(Action(kind=ActionKind.STEP_INTO if i % 3 else ActionKind.STEP_OVER))
            done += 1
        except SessionError as exc:
            errors += 1
            if "context" not in str(exc):
                raise
            break
    return done, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--free-steps", type=int, default=0)
    parser.add_argument("--code", type=Path, default=ROOT, help="folder to import the project's packages from")
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "checkpoints" / "default")
    args = parser.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    from model.backends.hf import HFBackend

    backend = HFBackend(args.checkpoint)
    groups = {
        "examples": {p.name: p.read_text() for p in sorted((ROOT / "examples").glob("*.py"))},
        "long files": {f"{name}.py (+driver)": long_file(name) for name in LONG_FILES},
    }
    print(f"code: {args.code}  checkpoint: {args.checkpoint}  context {backend.max_model_len}")
    for group, programs in groups.items():
        every: list[int] = []
        errors = total = 0
        print(f"== {group}")
        for name, program in programs.items():
            result = measure(backend, program, args.steps)
            every += result["prompts"]
            errors += result["errors"]
            total += result["steps"]
            ps = result["prompts"]
            shown = f"mean {statistics.fmean(ps):6.1f}  max {max(ps):4d}" if ps else "mean    -    max    -"
            print(f"  {name:28s} lines {len(program.splitlines()):4d}  full listing {result['full_header']:6d} tokens  "
                  f"prompt tokens per step: {shown}  context errors {result['errors']}/{result['steps']}")
        if every:
            print(f"  ALL: prompt tokens per step mean {statistics.fmean(every):.1f}, max {max(every)}; context errors {errors}/{total} steps")
        else:
            print(f"  ALL: no prompt fits; context errors {errors}/{total} steps")
    if args.free_steps:
        print(f"== free-running (the model's own predictions), {args.free_steps} steps per long file")
        for name in LONG_FILES:
            done, errors = free_run(backend, long_file(name), args.free_steps)
            print(f"  {name}.py: {done} steps, context errors {errors}")


if __name__ == "__main__":
    main()
