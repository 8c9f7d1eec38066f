"""What a program reads from outside itself, found statically: the launch warning of a neural session.

A model that predicts stops from the source alone cannot know what the program reads from stdin,
files, the environment, the clock, a random generator, or what other threads do. `find_outside`
walks the program's syntax tree (never runs it) and lists each such construct with its line;
`describe` turns the list into the one Debug Console warning the adapter writes at launch.

Names are resolved through the program's imports (``import random as r``; ``from time import
time``), so ``r.randint(1, 6)`` is found as ``random.randint``. A builtin the program redefines
(``def input(): ...``) is not reported. Method calls on objects of unknown type are matched by
name only where the name is unambiguous (``read_text``, ``write_bytes``...).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

# (category, dotted name or prefix ending with "."), checked in order; the first match names the construct
RULES: tuple[tuple[str, str], ...] = (
    ("stdin", "input"), ("stdin", "sys.stdin"), ("stdin", "fileinput."),
    ("files", "open"), ("files", "io.open"), ("files", "os.open"), ("files", "os.listdir"), ("files", "os.scandir"),
    ("files", "os.walk"), ("files", "os.stat"), ("files", "os.path.exists"), ("files", "os.path.isfile"),
    ("files", "os.path.isdir"), ("files", "os.path.getsize"), ("files", "glob."), ("files", "shutil."),
    ("files", "tempfile."), ("files", "pathlib.Path.read_text"), ("files", "pathlib.Path.open"),
    ("environment", "os.environ"), ("environment", "os.environb"), ("environment", "os.getenv"),
    ("environment", "os.putenv"), ("environment", "os.getcwd"), ("environment", "sys.argv"),
    ("clock", "time.time"), ("clock", "time.time_ns"), ("clock", "time.perf_counter"), ("clock", "time.perf_counter_ns"),
    ("clock", "time.monotonic"), ("clock", "time.monotonic_ns"), ("clock", "time.process_time"),
    ("clock", "time.localtime"), ("clock", "time.gmtime"), ("clock", "time.ctime"), ("clock", "time.asctime"),
    ("clock", "time.strftime"), ("clock", "datetime.datetime.now"), ("clock", "datetime.datetime.today"),
    ("clock", "datetime.datetime.utcnow"), ("clock", "datetime.date.today"),
    ("randomness", "random."), ("randomness", "secrets."), ("randomness", "uuid.uuid1"), ("randomness", "uuid.uuid4"),
    ("randomness", "os.urandom"), ("randomness", "os.getrandom"), ("randomness", "numpy.random."),
    ("threads", "threading.Thread"), ("threads", "threading.Timer"), ("threads", "_thread.start_new_thread"),
    ("threads", "_thread.start_new"), ("threads", "concurrent.futures."), ("threads", "multiprocessing."),
    ("threads", "asyncio.to_thread"),
)
# method names that read or write files whatever the object (pathlib.Path and friends)
FILE_METHODS = frozenset({"read_text", "write_text", "read_bytes", "write_bytes"})
CATEGORY_TEXT = {
    "stdin": "reads stdin", "files": "uses files", "environment": "reads the environment or arguments",
    "clock": "reads the clock", "randomness": "draws random numbers", "threads": "runs threads or processes",
}
MAX_LISTED = 12  # constructs named in the warning; more are counted


@dataclass(frozen=True)
class Outside:
    """One construct the model cannot know the outcome of: its category, how it is written, where."""

    category: str
    construct: str
    line: int
    file: str | None = None  # None: the program; else a user module's path (as given)

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.file is None else f"{self.file}:{self.line}"


def find_outside(source: str, file: str | None = None) -> list[Outside]:
    """Every construct of `source` that reads outside the program, in source order (one per line and
    construct); [] when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    aliases = _aliases(tree)
    defined = _defined_names(tree)
    found: dict[tuple[int, str], Outside] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            dotted = _dotted(node, aliases, defined)
            if dotted is None:
                if node.attr in FILE_METHODS:
                    _add(found, Outside("files", f".{node.attr}()", node.lineno, file))
                continue
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            dotted = _dotted(node, aliases, defined)
        else:
            continue
        if dotted is None:
            continue
        category = _category(dotted)
        if category is None and isinstance(node, ast.Attribute) and node.attr in FILE_METHODS:
            category, dotted = "files", f".{node.attr}"
        if category is not None:
            _add(found, Outside(category, dotted + ("()" if _is_called(node, tree) else ""), node.lineno, file))
    return sorted(found.values(), key=lambda o: (o.line, o.construct))


def describe(found: list[Outside]) -> str | None:
    """The launch warning naming each construct and its line; None when there is nothing to say."""
    if not found:
        return None
    listed = [f"{o.construct} ({o.where}: {CATEGORY_TEXT[o.category]})" for o in found[:MAX_LISTED]]
    more = f" and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
    return ("neural debugger: warning: the model predicts this program from its source alone and cannot know "
            "what it reads from outside (stdin, files, environment, clock, randomness) or what other threads do; "
            "its predictions after these are guesses: " + "; ".join(listed) + more + "\n")


def _add(found: dict[tuple[int, str], Outside], item: Outside) -> None:
    key = (item.line, item.construct.rstrip("()"))
    if key not in found and not any(k[0] == item.line and k[1].startswith(key[1] + ".") for k in found):
        # keep the longest name on a line (random.randint, not also random)
        for k in [k for k in found if k[0] == item.line and key[1].startswith(k[1] + ".")]:
            del found[k]
        found[key] = item


def _category(dotted: str) -> str | None:
    for category, rule in RULES:
        if dotted == rule or (rule.endswith(".") and dotted.startswith(rule)) or dotted.startswith(rule + "."):
            return category
    return None


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the dotted module (or module member) it stands for, from every import."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    out[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _defined_names(tree: ast.AST) -> set[str]:
    """Names the program binds itself (functions, classes, assignments): they shadow builtins."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


BUILTINS = frozenset({"input", "open"})


def _dotted(node: ast.expr, aliases: dict[str, str], defined: set[str]) -> str | None:
    """The dotted name an attribute chain or name stands for through the imports (None: not an import)."""
    parts: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        parts.append(current.attr)
        current = current.value
    if not isinstance(current, ast.Name):
        return None
    name = current.id
    if name in aliases:
        base = aliases[name]
    elif name in BUILTINS and name not in defined and not parts:
        base = name
    else:
        return None
    return ".".join([base, *reversed(parts)])


def _is_called(node: ast.expr, tree: ast.AST) -> bool:
    parent = getattr(node, "_outside_parent", None)
    if parent is None:
        for outer in ast.walk(tree):
            for child in ast.iter_child_nodes(outer):
                child._outside_parent = outer  # type: ignore[attr-defined]
        parent = getattr(node, "_outside_parent", None)
    return isinstance(parent, ast.Call) and parent.func is node
