"""The VS Code extension's manifest agrees with the adapter: every launch attribute is one the adapter reads,
and every contributed command is registered by extension.js."""
from __future__ import annotations

import json
import re
from pathlib import Path

from adapter.launch_config import LaunchConfig

EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"


def test_launch_attributes_are_fields_of_the_launch_config() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    attributes = manifest["contributes"]["debuggers"][0]["configurationAttributes"]["launch"]["properties"]
    known = {field.alias or name for name, field in LaunchConfig.model_fields.items()}
    unknown = sorted(set(attributes) - known)
    assert not unknown, f"package.json offers launch attributes the adapter ignores: {unknown}"


def test_contributed_commands_are_registered() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    source = (EXTENSION / "extension.js").read_text()
    registered = set(re.findall(r"registerCommand\(\s*'([^']+)'", source))
    for command in manifest["contributes"].get("commands", []):
        assert command["command"] in registered, command["command"]
