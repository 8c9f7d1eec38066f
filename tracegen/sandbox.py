"""Run the tracing child (``child_runner.py``) as a contained process.

Limits (all on by default, see `Limits`): CPU seconds (``RLIMIT_CPU``), address space
(``RLIMIT_AS``), size of any file the child writes (``RLIMIT_FSIZE``, so printing through the raw
file descriptors cannot fill the disk), a wall-clock timeout, at most ``max_events`` trace events
and ``max_stdout`` characters of ``sys.stdout``. Against fork bombs: ``RLIMIT_NPROC`` (not enforced
for root, so also) the runner replaces ``os.fork``/``posix_spawn``/``subprocess``'s ``fork_exec``/
``os.system`` with a ``PermissionError``, and the child runs in its own session whose whole process
group is killed at the end. The child's working directory is a fresh temporary directory (removed
afterwards) unless ``cwd`` is given.
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

RUNNER = Path(__file__).with_name("child_runner.py")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one traced run."""

    cpu_seconds: int = 10
    wall_seconds: float = 20.0
    memory_bytes: int = 1 << 30
    max_file_bytes: int = 512 << 20
    max_events: int = 200_000
    max_stdout: int = 1_000_000
    max_processes: int = 256
    stderr_bytes: int = 64 << 10


@dataclass(frozen=True)
class SandboxResult:
    """How the child ended.

    ``how``: ``finished`` (the runner wrote its trace and exited 0), ``timeout`` (wall clock),
    ``cpu`` (CPU-time limit), ``memory`` (address-space limit: MemoryError or killed),
    ``file_size`` (a file limit), ``crashed`` (the runner itself failed: see ``stderr``).
    """

    how: str
    returncode: int | None
    trace_text: str
    stderr: str
    wall_seconds: float

    @property
    def killed_reason(self) -> str:
        return {
            "timeout": "wall-clock timeout",
            "cpu": "CPU-time limit",
            "memory": "memory limit",
            "file_size": "file-size limit",
            "crashed": "the tracing runner crashed",
        }.get(self.how, "")


def _preexec(limits: Limits):  # noqa: ANN202
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.max_file_bytes, limits.max_file_bytes))
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes, limits.max_processes))
        except (ValueError, OSError):
            pass
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def run_traced(program: Path, args: tuple[str, ...] = (), limits: Limits = Limits(), cwd: Path | None = None) -> SandboxResult:
    """Trace ``program`` in a limited child process; returns the raw trace text and how it ended."""
    with tempfile.TemporaryDirectory(prefix="tracegen-") as tmp:
        tmpdir = Path(tmp)
        out = tmpdir / ".trace.jsonl"
        workdir = cwd if cwd is not None else tmpdir / "work"
        workdir.mkdir(exist_ok=True)
        cmd = [
            # -s -P (not -I): -I also implies -E, which would ignore PYTHONHASHSEED=0 and make set and
            # dict-of-str orders differ from run to run (debugpy's recorder pins the seed too). The
            # environment is already a clean one (_child_env), so -E adds nothing.
            sys.executable, "-s", "-P", "-X", "frozen_modules=off", str(RUNNER),
            "--program", str(program), "--out", str(out),
            "--max-events", str(limits.max_events), "--max-stdout", str(limits.max_stdout),
            "--cwd", str(workdir), "--no-fork", "--", *args,
        ]
        stderr_path = tmpdir / ".stderr"
        start = time.monotonic()
        with open(stderr_path, "wb") as err, open(os.devnull, "wb") as null:
            # stdin is /dev/null, as debugpy's debuggee has it (os.fstat(0) there is the null device)
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=null, stderr=err, cwd=str(workdir),
                preexec_fn=_preexec(limits), start_new_session=True, env=_child_env(),
            )
            timed_out = False
            try:
                proc.wait(timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(proc.pid)
                proc.wait()
        elapsed = time.monotonic() - start
        stderr = _read_tail(stderr_path, limits.stderr_bytes)
        trace_text = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
        how = _classify(proc.returncode, timed_out, stderr, trace_text)
        return SandboxResult(how, proc.returncode, trace_text, stderr, elapsed)


def _child_env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _classify(returncode: int | None, timed_out: bool, stderr: str, trace_text: str) -> str:
    if timed_out:
        return "timeout"
    if returncode == 0 and trace_text.rstrip().rsplit("\n", 1)[-1].startswith('["E"'):
        return "finished"
    if returncode == -signal.SIGXCPU or returncode == -signal.SIGKILL and "MemoryError" not in stderr and _cpu_hint(stderr):
        return "cpu"
    if returncode == -signal.SIGXFSZ:
        return "file_size"
    if "MemoryError" in stderr or returncode == -signal.SIGSEGV:
        return "memory"
    return "crashed"


def _cpu_hint(stderr: str) -> bool:
    return False
