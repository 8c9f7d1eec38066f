"""What a program to record is, and the checks and conversions made on a program's text alone.

`ProgramSpec` (a program's source, kind, origin and the user modules beside it), `static_rejection`
(a program that cannot be used without running it: unparsable, reads input, networking) and
`doctest_program` (a `doctest.DocTest` made into a standalone program). The sources in
`tracegen.sources` and `tracegen.packages` build on them.
"""
from __future__ import annotations

import ast
import builtins
import doctest
from dataclasses import dataclass, field

NETWORK_MODULES = frozenset({"socket", "urllib", "http", "requests", "ftplib", "smtplib", "poplib", "imaplib",
                             "telnetlib", "xmlrpc", "socketserver", "ssl", "asyncio", "aiohttp", "httpx", "webbrowser"})
FORBIDDEN_CALLS = frozenset({"input", "breakpoint"})


@dataclass(frozen=True)
class ProgramSpec:
    """A program to record: its source, the source kind (``crux``, ``multi``, ``file``,
    ``doctest``), where it came from, and for files the real path (so sibling imports resolve)."""

    source: str
    kind: str
    origin: str
    path: str | None = None
    tags: frozenset[str] = field(default_factory=frozenset)
    modules: tuple[tuple[str, str], ...] = ()  # user modules beside the program: (relative path, source)

    @property
    def synthetic(self) -> bool:
        return self.kind in ("crux", "multi", "project", "long", "everyday")

    @property
    def all_source(self) -> str:
        """The program and its modules' sources (what dedupe and the CruxEval guard look at)."""
        return "\n".join([self.source, *(text for _, text in self.modules)])



def static_rejection(source: str) -> str | None:
    """Why a program cannot be used without running it (unparsable, reads input, networking), or None."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        return f"does not parse: {exc}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            return f"calls {node.func.id}()"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in NETWORK_MODULES:
                    return f"imports {alias.name}"
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in NETWORK_MODULES:
            return f"imports {node.module}"
    return None



def _bound_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def doctest_program(module_name: str, test: doctest.DocTest, namespace: dict[str, object]) -> str | None:
    """A standalone program running `test`'s examples, or None if they cannot be made into one."""
    body: list[str] = []
    used: set[str] = set()
    bound: set[str] = set()
    counter = 0
    for example in test.examples:
        try:
            tree = ast.parse(example.source)
        except SyntaxError:
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                used.add(node.id)
        bound |= _bound_names(tree)
        code = example.source.rstrip("\n")
        stmts = tree.body
        if len(stmts) == 1 and isinstance(stmts[0], ast.Expr):
            call = stmts[0].value
            is_print = isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print"
            if not is_print and example.want.strip():  # an expression doctest shows a value: keep it as a local
                counter += 1
                code = f"out{counter} = {ast.unparse(stmts[0].value)}"
                bound.add(f"out{counter}")
        if example.exc_msg is not None:
            code = "try:\n" + "\n".join("    " + line for line in code.splitlines()) + "\nexcept Exception as exc:\n    print(type(exc).__name__)"
        body.append(code)
    if not body:
        return None
    imports = sorted(n for n in used - bound if n in namespace and not hasattr(builtins, n) and not n.startswith("__"))
    header = [f"import {module_name}"] if module_name.split(".")[0] in used else []
    if imports:
        header.append(f"from {module_name} import {', '.join(imports)}")
    return "\n".join(header + body) + "\n"
