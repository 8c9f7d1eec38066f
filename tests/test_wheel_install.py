"""An installed package works, not only the editable checkout: build the wheel, install it, debug.

The wheel is built from a copy of the sources (`pip wheel --no-deps --no-build-isolation`) and
installed with `--no-deps` into a fresh virtual environment whose only other path is this
environment's site-packages (a .pth line: torch and the rest are not installed again, and this
checkout's editable install is not seen). From a folder outside the repository, a real
`neural-debugger dap` on stdio then debugs a program with the shipped model that the wheel
carries; with that copy removed, a launch says where the model was looked for and how to point
at one; `neural-debugger demo` runs the shipped example.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from tests.dap_client import DapTestClient

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # builds a wheel and a virtual environment: make test-all
PROGRAM = "def double(n):\n    return n * 2\n\nx = 3\ny = double(x)\nprint(y)\n"


def _packages() -> list[str]:
    """The top-level packages the wheel holds (pyproject.toml's find include patterns)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [p.rstrip("*") for p in config["tool"]["setuptools"]["packages"]["find"]["include"]]


def _copy_sources(target: Path) -> None:
    """What the build reads, without build outputs, caches or data."""
    skip = shutil.ignore_patterns("__pycache__", "node_modules", "*.pyc")
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "neural_debugger_cli.py"):
        shutil.copy2(ROOT / name, target / name)
    for folder in [*_packages(), "examples", "checkpoints/default", "checkpoints/companion-stage12"]:
        shutil.copytree(ROOT / folder, target / folder, ignore=skip)


def _run(command: list[str], cwd: Path, timeout: float = 180, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CRUXEVAL_PATH")}
    done = subprocess.run(command, cwd=cwd, env=clean | env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the built wheel installed; its bin/ folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    source, wheels, venv = tmp / "src", tmp / "wheels", tmp / "venv"
    source.mkdir()
    _copy_sources(source)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(source)], tmp)
    [wheel] = wheels.glob("neural_debugger-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp)
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp).stdout.strip())
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_dependencies.pth").write_text("".join(f"{p}\n" for p in sorted(ours)))
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)], tmp)
    return venv / "bin"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A working folder outside the repository, with a small program in it."""
    assert not tmp_path.resolve().is_relative_to(ROOT)
    (tmp_path / "prog.py").write_text(PROGRAM)
    return tmp_path


def test_the_installed_package_is_the_wheel_with_its_data(installed: Path, outside: Path) -> None:
    code = ("import adapter.demo, model, model.backends.ensemble, model.paths, tracegen.dedupe as d; "
            "print(model.__file__); print(model.paths.default_checkpoint()); print(adapter.demo.default_program()); "
            "print(d.default_cruxeval_path()); print(*model.backends.ensemble.companion_folders(model.paths.default_checkpoint()).folders)")  # fmt: skip
    lines = _run([str(installed / "python"), "-c", code], outside).stdout.splitlines()
    site = installed.parent / "lib"
    for line in lines:
        assert Path(line).resolve().is_relative_to(site.resolve()) and Path(line).exists(), line
    assert lines[1].endswith("model/checkpoints/default") and lines[2].endswith("adapter/examples/demo.py")
    assert (Path(lines[1]) / "model.safetensors").stat().st_size == (ROOT / "checkpoints/default/model.safetensors").stat().st_size
    assert (Path(lines[3]).parent / "LICENSE").is_file()
    assert lines[4].endswith("model/checkpoints/companion-stage12")  # the shipped model's companion (ensemble.json) came along


def _launch(client: DapTestClient, program: Path) -> dict:
    client.ok("initialize", {"adapterID": "neural", "linesStartAt1": True, "pathFormat": "path"})
    return client.request("launch", {"program": str(program), "stopOnEntry": True}, timeout=120)


def test_dap_session_with_the_shipped_model_then_without_it(installed: Path, outside: Path) -> None:
    program = outside / "prog.py"
    command = [str(installed / "neural-debugger"), "dap"]
    with DapTestClient.stdio(command=command, cwd=outside, timeout=60) as client:
        reply = _launch(client, program)
        assert reply["success"], reply.get("message")
        client.wait_event("initialized")
        client.ok("configurationDone")
        assert client.wait_event("stopped", timeout=120)["body"]["reason"] == "entry"
        thread = client.ok("threads")["threads"][0]["id"]
        top = client.ok("stackTrace", {"threadId": thread})["stackFrames"][0]
        assert (top["line"], Path(top["source"]["path"])) == (1, program)
        client.ok("next", {"threadId": thread})
        client.wait_event("stopped", timeout=120)
        frames = client.ok("stackTrace", {"threadId": thread})["stackFrames"]
        assert frames and all(isinstance(f["line"], int) and f["line"] >= 1 for f in frames)
        client.ok("disconnect")
    assert client.errors == []
    shipped = next((installed.parent / "lib").glob("python3*/site-packages/model/checkpoints/default"))
    shipped.rename(shipped.with_name("moved-away"))
    try:
        with DapTestClient.stdio(command=command, cwd=outside, timeout=60) as client:
            reply = _launch(client, program)
            client.ok("disconnect")
    finally:
        shipped.with_name("moved-away").rename(shipped)
    message = reply.get("message", "")
    assert not reply["success"] and str(shipped) in message and '"model" attribute' in message and "--model" in message
    assert "trained" not in message


def test_demo_runs_the_shipped_example_from_anywhere(installed: Path, outside: Path) -> None:
    done = _run([str(installed / "neural-debugger"), "demo", "--actions", "next,next"], outside, COLUMNS="160")
    assert "model/checkpoints/default" in done.stdout and "demo.py: neural prediction vs debugpy" in done.stdout
    assert "/3 stops matched" in done.stdout
