"""Record the parity goldens with real debugpy: ``nice -n 10 .venv/bin/python -m tests.regen_golden``.

Runs every program of the parity corpus (tests/parity.py) with its seeded action scripts under
`tracegen.debugpy_recorder`, two debugpy sessions at a time, and writes ``tests/golden/<name>.json``;
the multi-file projects of ``tests/programs/projects/`` go to ``tests/golden/projects/<name>.json``.
Resumable: a program whose golden already holds the same source and scripts is skipped unless
``--force``. The synthetic programs stay the ones frozen in the goldens unless ``--fresh-synth``. debugpy is slow (a few stops per second), so the whole corpus takes a while.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from tqdm import tqdm

from protocol.debugger import State
from tests.parity import (
    GOLDEN_DIR,
    PROJECT_GOLDEN_DIR,
    Program,
    Project,
    Script,
    corpus,
    load_golden,
    load_project_golden,
    project_scripts,
    projects,
    relative_states,
    scripts_for,
    write_golden,
    write_project_golden,
)
from tracegen.debugpy_recorder import record_debugpy


def record_program_sessions(program: Program, scripts: list[Script]) -> list[tuple[Script, list[State]]]:
    """Every script of one program, recorded under debugpy (the program runs as program.py in a temp folder)."""
    with tempfile.TemporaryDirectory(prefix="golden_") as folder:
        path = Path(folder) / "program.py"
        path.write_text(program.source)
        return [(s, record_debugpy(path, list(s.actions), list(s.breakpoints), run_timeout=20)) for s in scripts]


def record_project_sessions(project: Project, scripts: list[Script]) -> list[tuple[Script, list[State]]]:
    """Every script of one project under debugpy (its files copied to a temp folder; paths kept relative)."""
    with tempfile.TemporaryDirectory(prefix="golden_") as folder:
        main = project.write(Path(folder))
        return [(s, relative_states(record_debugpy(main, list(s.actions), list(s.breakpoints), run_timeout=20), Path(folder)))
                for s in scripts]


def project_up_to_date(project: Project, scripts: list[Script]) -> bool:
    path = PROJECT_GOLDEN_DIR / f"{project.name}.json"
    if not path.is_file():
        return False
    try:
        golden = load_project_golden(path)
    except (ValueError, KeyError):
        return False
    return golden.project == project and [s for s, _ in golden.sessions] == scripts


def up_to_date(program: Program, scripts: list[Script]) -> bool:
    path = GOLDEN_DIR / f"{program.name}.json"
    if not path.is_file():
        return False
    try:
        golden = load_golden(path)
    except (ValueError, KeyError):
        return False
    return golden.program.source == program.source and [s for s, _ in golden.sessions] == scripts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="debugpy sessions at a time")
    parser.add_argument("--force", action="store_true", help="re-record goldens that are up to date")
    parser.add_argument("--only", nargs="*", default=None, help="program names to record")
    parser.add_argument("--synth", type=int, default=None, help="number of synthetic programs (default: the corpus's)")
    parser.add_argument("--fresh-synth", action="store_true",
                        help="draw the synthetic programs from tracegen.synth anew instead of keeping the golden ones")
    args = parser.parse_args(argv)
    programs = corpus(fresh_synth=args.fresh_synth) if args.synth is None else corpus(args.synth, fresh_synth=args.fresh_synth)
    if args.only:
        programs = [p for p in programs if p.name in set(args.only)]
    todo = [(p, scripts_for(p)) for p in programs]
    todo = [(p, s) for p, s in todo if args.force or not up_to_date(p, s)]
    multi = [p for p in projects() if not args.only or p.name in set(args.only)]
    multi_todo = [(p, project_scripts(p)) for p in multi]
    multi_todo = [(p, s) for p, s in multi_todo if args.force or not project_up_to_date(p, s)]
    failures = 0
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        futures = {pool.submit(record_program_sessions, p, s): (p, write_golden) for p, s in todo}
        futures |= {pool.submit(record_project_sessions, p, s): (p, write_project_golden) for p, s in multi_todo}
        for future in tqdm(as_completed(futures), total=len(futures), desc="debugpy goldens"):
            program, write = futures[future]
            try:
                write(program, future.result())
            except Exception as exc:  # noqa: BLE001 - report and go on with the rest
                failures += 1
                print(f"{program.name}: {exc}", file=sys.stderr)
    written = len(todo) + len(multi_todo) - failures
    fresh = len(programs) + len(multi) - len(todo) - len(multi_todo)
    print(f"{written} goldens written, {failures} failed, {fresh} up to date")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
