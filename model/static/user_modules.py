"""The user modules of a program, found statically: the files its imports name under its folder.

A debugging session covers the program and the modules of the user's own project (debugpy's
justMyCode): files under the program's folder, not the standard library or site-packages. The
session cannot run the program to see what it imports, so `collect_user_modules` reads the
imports of the program's syntax tree (every ``import`` and ``from ... import``, at any depth,
including relative ones inside packages) and resolves them the way Python's path finder would with
the program's folder first on ``sys.path``: ``a.b`` is ``a/__init__.py`` then ``a/b.py`` (or
``a/b/__init__.py``); ``from a import b`` also tries the submodule ``a/b.py``. Found modules are
read in turn, breadth first, up to a limit. Nothing is executed.

Paths are relative to the program's folder, with ``/``: what frames of other files carry in the
neural-debugger language and what ``tracegen record`` prints.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path

from protocol.source_text import read_source

MAX_MODULES = 64  # user modules followed from one program
MAX_MODULE_BYTES = 1_000_000
SKIP_PARTS = frozenset({"site-packages", "dist-packages", ".venv", "venv", "__pycache__", "node_modules", ".git"})


@dataclass
class UserModules:
    """The program's user modules: relative path -> source text, and each one's dotted name."""

    folder: Path
    sources: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # relative path -> dotted module name

    def relative(self, path: str | os.PathLike[str]) -> str | None:
        """A file's path relative to the folder, if it is one of the modules (absolute or relative given)."""
        p = Path(path)
        if not p.is_absolute():
            rel = p.as_posix()
            return rel if rel in self.sources else None
        try:
            rel = Path(os.path.realpath(p)).relative_to(os.path.realpath(self.folder)).as_posix()
        except ValueError:
            return None
        return rel if rel in self.sources else None

    def absolute(self, rel: str) -> Path:
        return self.folder / rel


def collect_user_modules(program: str, path: str | os.PathLike[str] | None, limit: int = MAX_MODULES) -> UserModules:
    """The user modules `program` (at `path`) imports, directly or through other user modules."""
    if path is None:
        return UserModules(Path("."))
    folder = Path(os.path.realpath(path)).parent
    found = UserModules(folder)
    main = Path(os.path.realpath(path))
    queue: list[tuple[str, str, str]] = [(program, "__main__", "")]  # (source, dotted name, package)
    seen: set[Path] = {main}
    while queue and len(found.sources) < limit:
        source, name, package = queue.pop(0)
        for target in _imported(source, package):
            for file, dotted in _resolve(folder, target):
                if file in seen or len(found.sources) >= limit:
                    continue
                seen.add(file)
                text = _read(file)
                if text is None:
                    continue
                rel = file.relative_to(folder).as_posix()
                found.sources[rel] = text
                found.names[rel] = dotted
                pkg = dotted if file.name == "__init__.py" else dotted.rpartition(".")[0]
                queue.append((text, dotted, pkg))
    return found


def _imported(source: str, package: str) -> list[str]:
    """Dotted names a source imports (absolute; relative ones resolved against `package`), submodule
    candidates of ``from a import b`` included as ``a.b``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts) or not package:
                    continue
                base_parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not base:
                continue
            out.append(base)
            out.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return out


def _resolve(folder: Path, dotted: str) -> list[tuple[Path, str]]:
    """The files importing `dotted` runs under `folder`: each package's ``__init__.py``, then the module."""
    parts = dotted.split(".")
    files: list[tuple[Path, str]] = []
    current = folder
    for i, part in enumerate(parts):
        if not part.isidentifier():
            return files
        name = ".".join(parts[: i + 1])
        package = current / part
        init = package / "__init__.py"
        module = current / f"{part}.py"
        if init.is_file():
            files.append((init, name))
            current = package
        elif module.is_file():
            files.append((module, name))
            break
        elif package.is_dir() and i < len(parts) - 1:  # a namespace package
            current = package
        else:
            break
    return [(f.resolve(), n) for f, n in files if _is_user_file(folder, f)]


def _is_user_file(folder: Path, file: Path) -> bool:
    real = Path(os.path.realpath(file))
    try:
        rel = real.relative_to(os.path.realpath(folder))
    except ValueError:
        return False
    return not any(part in SKIP_PARTS for part in rel.parts)


def _read(file: Path) -> str | None:
    try:
        if file.stat().st_size > MAX_MODULE_BYTES:
            return None
        return read_source(file, errors="replace")
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
