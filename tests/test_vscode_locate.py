"""The VS Code extension's adapter search (editors/vscode/locate.js), run under Node on real folders.

Each case builds real files (executables, a workspace `.venv`, a PATH folder) and real interpreters
(the project's, which has the package, and the base Python, which has not), asks `locateAdapter`,
and checks which command it chose and what it says it tried. The chosen `python -m
neural_debugger_cli dap` is then started and must answer a DAP `initialize`.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
LOCATE = REPO / "editors" / "vscode" / "locate.js"
NODE = shutil.which("node")
BASE_PYTHON = Path(getattr(sys, "_base_executable", "") or "")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

RUN = """
const { locateAdapter } = require(process.argv[1]);
let text = '';
process.stdin.on('data', (d) => { text += d; });
process.stdin.on('end', async () => {
  const result = await locateAdapter(JSON.parse(text));
  process.stdout.write(JSON.stringify(result));
});
"""


def locate(**inputs: Any) -> dict[str, Any]:
    done = subprocess.run([NODE, "-e", RUN, str(LOCATE)], input=json.dumps(inputs), capture_output=True,
                          text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def reasons(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(t["what"], t["why"]) for t in result["tried"]]


def test_setting_wins_and_a_wrong_setting_is_reported_not_replaced(tmp_path: Path) -> None:
    tool = executable(tmp_path / "bin" / "my-adapter")
    folder = tmp_path / "ws"
    executable(folder / ".venv" / "bin" / "neural-debugger")
    used = locate(command=str(tool), folders=[str(folder)], envPath="")
    assert used["adapter"]["command"] == str(tool) and used["adapter"]["args"] == ["dap"]
    missing = locate(command=str(tmp_path / "nope"), folders=[str(folder)], envPath="")
    assert missing["adapter"] is None
    assert reasons(missing) == [(f"setting neuralDebugger.command = {tmp_path / 'nope'}", "no executable file there")]
    by_name = locate(command="my-adapter", folders=[str(folder)], envPath=str(tool.parent))
    assert by_name["adapter"]["command"] == str(tool)


def test_interpreter_with_the_package_runs_the_module_and_answers_dap(tmp_path: Path) -> None:
    result = locate(interpreters=[{"source": "setting python.defaultInterpreterPath", "argv": [sys.executable]}],
                    folders=[str(tmp_path)], envPath="")
    adapter = result["adapter"]
    assert adapter["args"] == ["-m", "neural_debugger_cli", "dap"], result
    assert reasons(result)[-1] == (f"setting python.defaultInterpreterPath: {sys.executable}", "used")
    body = json.dumps({"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "neural"}}).encode()
    proc = subprocess.Popen([adapter["command"], *adapter["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()
        header = proc.stdout.readline()
        assert header.startswith(b"Content-Length:"), header
        length = int(header.split(b":")[1])
        proc.stdout.readline()
        reply = json.loads(proc.stdout.read(length))
        assert reply["command"] == "initialize" and reply["success"], reply
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.skipif(not BASE_PYTHON.is_file(), reason="no base interpreter outside the virtualenv")
def test_interpreter_without_the_package_falls_through_to_the_workspace_venv(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    venv_adapter = executable(folder / ".venv" / "bin" / "neural-debugger")
    result = locate(interpreters=[{"source": "interpreter selected in the Python extension", "argv": [str(BASE_PYTHON)]}],
                    folders=[str(folder)], envPath="")
    assert result["adapter"]["command"] == str(venv_adapter)
    what, why = reasons(result)[1]
    assert what.endswith(str(BASE_PYTHON)) and why.startswith("does not have the neural-debugger package"), why


def test_path_last_and_nothing_found_says_what_was_tried(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    on_path = executable(tmp_path / "bin" / "neural-debugger")
    found = locate(folders=[str(folder)], envPath=str(on_path.parent))
    assert found["adapter"]["command"] == str(on_path)
    nothing = locate(interpreters=[{"source": "setting python.defaultInterpreterPath", "argv": ["python-nowhere"]}],
                     interpreterNotes=[{"what": "Python extension (ms-python.python)", "why": "not installed"}],
                     folders=[str(folder)], envPath=str(tmp_path / "empty"))
    assert nothing["adapter"] is None
    assert reasons(nothing) == [
        ("setting neuralDebugger.command", "not set"),
        ("Python extension (ms-python.python)", "not installed"),
        ("setting python.defaultInterpreterPath: python-nowhere", "is not on PATH"),
        (str(folder / ".venv" / "bin" / "neural-debugger"), "does not exist"),
        ("neural-debugger on PATH", "not found"),
    ]


@pytest.mark.skipif(os.name == "nt", reason="POSIX paths")
def test_workspace_folder_is_substituted_in_interpreter_paths(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    wrapper = folder / "env" / "bin" / "python"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    result = locate(interpreters=[{"source": "setting python.defaultInterpreterPath", "argv": ["${workspaceFolder}/env/bin/python"]}],
                    folders=[str(folder)], envPath="")
    assert result["adapter"]["command"] == str(folder / "env" / "bin" / "python")
    assert result["adapter"]["args"][-3:] == ["-m", "neural_debugger_cli", "dap"]
