"""The `neural` launch configuration: validation, program checks, and opening a `DebugSession`.

`LaunchConfig` is the launch (or attach) request's arguments as DESIGN.md fixes them: ``program``
(required), ``stopOnEntry``, ``model``, ``backend`` (transformers | vllm | oracle), ``vllmUrl``,
``vllmTimeout``, ``temperature``, ``compareWith`` ("debugpy"), ``args``, ``cwd``. `load_program` reads and compiles
the program (without running it) and `open_session` builds the session for the chosen backend.
Every failure is a `LaunchError` whose message is meant for the user's Debug Console.
"""
from __future__ import annotations

import ast
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from adapter.client_paths import path_from_client
from adapter.data_breakpoints import DEFAULT_MAX_STEPS
from model import paths
from model.budget import STEP_SECONDS, STEP_TOKENS, StepBudget
from model.session_api import DebugSession, SessionError
from protocol.dap import NeuralLaunchArguments
from protocol.source_text import read_source

REPO_ROOT = Path(__file__).resolve().parent.parent
VLLM_PROBE_TIMEOUT_S = 5.0  # launch waits this long for GET /v1/models unless vllmTimeout is given
VLLM_STEP_TIMEOUT_S = 60.0  # each step's request may take this long unless vllmTimeout is given


class LaunchError(Exception):
    """A launch that cannot go ahead; the message says what to fix."""


class LaunchConfig(NeuralLaunchArguments):
    """The validated `neural` launch configuration (camelCase on the wire, snake_case here)."""

    backend: Literal["transformers", "vllm", "oracle"] = "transformers"
    # seconds to wait for the vLLM server, at launch and on every step (None: the two defaults above)
    vllm_timeout: float | None = Field(default=None, gt=0, le=600)
    # show the program's (predicted) exit as one more stop, reason "exit", so Step Back works from it
    stop_at_exit: bool = False
    # answers drawn per stop, the model's most likely kept (model.decode.rerank): for a call's first stop predicted
    # backwards (its arguments, inv_step_call), for the stop after Step Out / Continue / a breakpoint (coarse;
    # both default to model.decode.rerank's) and for every other stop (default 1: greedy)
    candidates: int = Field(default=1, ge=1, le=32)
    call_candidates: int | None = Field(default=None, ge=1, le=32)
    coarse_candidates: int | None = Field(default=None, ge=1, le=32)
    # with data breakpoints, Continue predicts one stop at a time: at most this many without a change (adapter.data_breakpoints)
    data_breakpoint_steps: int = Field(default=DEFAULT_MAX_STEPS, ge=1, le=100_000)
    # the budget of one step (model.budget): wall seconds and decoded tokens; when it runs out the best well-formed
    # answer so far is shown, with its confidence, and the Debug Console says what was cut
    step_seconds: float = Field(default=STEP_SECONDS, gt=0, le=600)
    step_tokens: int = Field(default=STEP_TOKENS, ge=16, le=100_000)
    # how Continue / Step Out / a run to a breakpoint is predicted: "fine" (successive step-into stops until one
    # arrives, the model's strongest prediction), "model" (one jump, several candidates ranked) or "auto" (fine steps
    # while a breakpoint can be reached on the way, one jump where none can: model.static.reach.no_target_ahead)
    coarse_steps: Literal["fine", "model", "auto"] = "auto"


def parse_config(arguments: object) -> LaunchConfig:
    """Validate launch/attach arguments; LaunchError listing every bad field."""
    if not isinstance(arguments, dict):
        raise LaunchError("launch arguments must be a JSON object with at least \"program\"")
    try:
        return LaunchConfig.model_validate(arguments)
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:6]:
            where = ".".join(str(p) for p in err["loc"]) or "configuration"
            problems.append(f"{where}: {err['msg']}")
        raise LaunchError("invalid neural launch configuration: " + "; ".join(problems)) from None


@dataclass(frozen=True)
class Program:
    """A program ready to debug: its absolute path and its source text (compiled once, never run)."""

    path: Path
    source: str


def resolve_program(config: LaunchConfig) -> Path:
    """The program's absolute path (relative paths are taken from ``cwd`` when given; a ``file:`` URI is read as its path)."""
    if config.program.startswith("file:"):
        return Path(path_from_client(config.program))
    path = Path(config.program).expanduser()
    if not path.is_absolute() and config.cwd:
        path = Path(config.cwd).expanduser() / path
    return path.resolve()


def load_program(config: LaunchConfig) -> Program:
    """Read (as Python decodes source) and compile the program; LaunchError for a missing, unreadable, undecodable or invalid file."""
    if config.cwd and not Path(config.cwd).expanduser().is_dir():
        raise LaunchError(f"cwd {config.cwd!r} is not a directory")
    path = resolve_program(config)
    if not path.exists():
        raise LaunchError(f"program not found: {path}")
    if not path.is_file():
        raise LaunchError(f"program is not a file: {path}")
    try:
        source = read_source(path)
    except PermissionError:
        raise LaunchError(f"cannot read program {path}: permission denied") from None
    except UnicodeDecodeError as exc:
        raise LaunchError(f"cannot read program {path}: not {_encoding_name(exc.encoding)} text ({exc.reason} at byte {exc.start})") from None
    except SyntaxError as exc:  # an unknown or contradictory coding declaration
        raise LaunchError(f"cannot read program {path}: {exc.msg}") from None
    except OSError as exc:
        raise LaunchError(f"cannot read program {path}: {exc.strerror or exc}") from None
    check_syntax(source, str(path))
    return Program(path=path, source=source)


def _encoding_name(codec: str) -> str:
    """How an error names a codec: UTF-8 for Python's default, else the declared name."""
    return "UTF-8" if codec.lower().replace("_", "-") in ("utf-8", "utf-8-sig", "utf8") else codec


def check_syntax(source: str, filename: str) -> None:
    """LaunchError naming the line of the first syntax error (the program is only parsed)."""
    try:
        compile(source, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        text = (exc.text or "").rstrip()
        where = f"{filename}, line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        detail = f"\n    {text}" if text else ""
        raise LaunchError(f"syntax error in {where}: {exc.msg}{detail}") from None
    except (ValueError, RecursionError) as exc:  # null bytes, absurd nesting
        raise LaunchError(f"cannot parse {filename}: {exc}") from None


def default_checkpoint() -> Path:
    """The shipped model folder: a checkout's checkpoints/default, else the installed package's copy."""
    return paths.default_checkpoint()


def resolve_model(config: LaunchConfig) -> Path:
    """The checkpoint folder to load; LaunchError when it does not exist or is not a checkpoint."""
    if not config.model and not (default_checkpoint() / "config.json").is_file():
        raise LaunchError(paths.missing_shipped_model())
    path = Path(config.model).expanduser() if config.model else default_checkpoint()
    if not path.is_absolute() and config.cwd:
        path = Path(config.cwd).expanduser() / path
    if not path.exists():
        raise LaunchError(f"model folder not found: {path}")
    if not path.is_dir():
        raise LaunchError(f"model must be a checkpoint folder, not a file: {path}")
    if not (path / "config.json").is_file():
        raise LaunchError(f"not a checkpoint folder (no config.json): {path}")
    return path


def probe_vllm(url: str, timeout: float) -> None:
    """Check that a vLLM server answers ``GET {url}/v1/models`` within ``timeout`` seconds."""
    base = url.rstrip("/")
    target = base + "/models" if base.endswith("/v1") else base + "/v1/models"
    try:
        with urllib.request.urlopen(target, timeout=timeout) as reply:  # noqa: S310 (a URL the user configured)
            json.loads(reply.read(1_000_000) or b"{}")
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LaunchError(f"the vLLM server at {url} did not answer within {timeout:g} s ({reason})") from None
    except ValueError:
        raise LaunchError(f"{target} did not answer with JSON: is {url} a vLLM server?") from None


def check_model_arguments(config: LaunchConfig) -> None:
    """A model backend predicts from the source alone: LaunchError for ``args`` it cannot use.

    The model was never shown command-line arguments, so a program reading ``sys.argv`` would get
    a silent guess; the launch is refused instead (the oracle backend passes them for real).
    """
    if config.args:
        shown = " ".join(config.args)
        raise LaunchError(f'"args" ({shown[:80]}) cannot be given to the {config.backend} backend: the model predicts '
                          "the program from its source alone and does not read command-line arguments. Remove \"args\" "
                          "(write the values into the program), or use \"backend\": \"oracle\" to run it for real")


def open_session(config: LaunchConfig, program: Program) -> DebugSession:
    """Build the session for ``config.backend``; slow (loads a model): call it from a worker thread."""
    if config.backend == "oracle":
        try:
            from model.oracle import OracleDebugger
        except ImportError as exc:
            raise LaunchError(f"the oracle backend is not available in this installation: {exc}") from None
        try:
            cwd = str(Path(config.cwd).expanduser().resolve()) if config.cwd else str(program.path.parent)
            return OracleDebugger(program.source, path=str(program.path), args=list(config.args), cwd=cwd)
        except SessionError as exc:
            raise LaunchError(f"the oracle could not record {program.path}: {exc}") from None
    check_model_arguments(config)
    if config.backend == "vllm":
        if not config.vllm_url:
            raise LaunchError('backend "vllm" needs "vllmUrl" (e.g. http://127.0.0.1:8000)')
        probe_vllm(config.vllm_url, config.vllm_timeout or VLLM_PROBE_TIMEOUT_S)
    checkpoint = resolve_model(config)
    try:
        from model.session import NeuralDebugger
    except ImportError as exc:
        raise LaunchError(f"the {config.backend} backend is not available in this installation: {exc}") from None

    try:
        return NeuralDebugger.from_checkpoint(
            str(checkpoint),
            program.source,
            path=str(program.path),
            backend=config.backend,
            vllm_url=config.vllm_url,
            timeout=config.vllm_timeout or VLLM_STEP_TIMEOUT_S,
            temperature=config.temperature,
            candidates=config.candidates,
            budget=StepBudget(seconds=config.step_seconds, tokens=config.step_tokens),
            coarse_steps=config.coarse_steps,
            **({} if config.call_candidates is None else {"call_candidates": config.call_candidates}),
            **({} if config.coarse_candidates is None else {"coarse_candidates": config.coarse_candidates}),
        )
    except SessionError as exc:
        raise LaunchError(f"cannot load the model in {checkpoint}: {exc}") from None
