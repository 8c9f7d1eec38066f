"""Normalized-source deduplication and the guard that keeps CruxEval out of generated data.

`normalize_source` parses a program and prints it back with comments and docstrings gone and
every name the program binds (functions, classes, parameters, variables, loop and comprehension
targets, exception names) renamed canonically (``v0``, ``v1``, ... in order of first
appearance). Attribute names, constants and names the program does not bind (builtins such as
``len``) are kept, so two programs normalize alike exactly when they differ only in naming,
formatting, comments or docstrings.

`CruxEvalGuard` holds the normalized functions of CruxEval (``cruxeval.jsonl``; by default the copy
shipped in this package, ``tracegen/cruxeval/cruxeval.jsonl``, or ``$CRUXEVAL_PATH``) and says whether any
function of a program is one of them. `Deduper` remembers the programs seen so far.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path

CRUXEVAL_ENV = "CRUXEVAL_PATH"
BUNDLED_CRUXEVAL = Path(__file__).resolve().parent / "cruxeval" / "cruxeval.jsonl"  # package data (MIT, LICENSE beside it)


def default_cruxeval_path() -> Path:
    """``$CRUXEVAL_PATH`` if set, else the CruxEval problems shipped with this package."""
    env = os.environ.get(CRUXEVAL_ENV)
    return Path(env) if env else BUNDLED_CRUXEVAL


class _BoundNames(ast.NodeVisitor):
    """Collects, in source order, every name a piece of code binds."""

    def __init__(self) -> None:
        self.order: dict[str, None] = {}

    def _bind(self, name: str | None) -> None:
        if name is not None and name not in self.order:
            self.order[name] = None

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._bind(node.name)
        args = node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None:
                self._bind(a.arg)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        args = node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None:
                self._bind(a.arg)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._bind(node.id)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._bind(node.name)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        self._bind((node.asname or node.name).split(".")[0])

    def visit_Global(self, node: ast.Global) -> None:
        for n in node.names:
            self._bind(n)

    visit_Nonlocal = visit_Global


class _Renamer(ast.NodeTransformer):
    """Renames bound names by a mapping and drops docstrings."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def _new(self, name: str) -> str:
        return self.mapping.get(name, name)

    def _strip_docstring(self, body: list[ast.stmt]) -> list[ast.stmt]:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body = body[1:] or [ast.Pass()]
        return body

    def visit_Module(self, node: ast.Module) -> ast.AST:
        node.body = self._strip_docstring(node.body)
        return self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.name = self._new(node.name)
        node.body = self._strip_docstring(node.body)
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._new(node.name)
        node.body = self._strip_docstring(node.body)
        return self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._new(node.id)
        return node

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        if node.arg is not None:
            node.arg = self._new(node.arg)
        return self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        if node.name is not None:
            node.name = self._new(node.name)
        return self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> ast.AST:
        node.names = [self._new(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global


def _normalize_tree(tree: ast.AST) -> str:
    collector = _BoundNames()
    collector.visit(tree)
    mapping = {name: f"v{i}" for i, name in enumerate(collector.order)}
    return ast.unparse(_Renamer(mapping).visit(tree))


def normalize_source(source: str) -> str:
    """The canonical text of a program (raises `SyntaxError` if it does not parse)."""
    return _normalize_tree(ast.parse(source))


def source_key(source: str) -> str:
    """A short hash of the normalized source; unparsable text hashes as itself."""
    try:
        text = normalize_source(source)
    except SyntaxError:
        text = source
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def function_keys(source: str) -> set[str]:
    """Hashes of each function defined anywhere in `source`, normalized on its own (name included)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            text = _normalize_tree(ast.Module(body=[_copy(node)], type_ignores=[]))
            keys.add(hashlib.sha256(text.encode()).hexdigest()[:32])
    return keys


def _copy(node: ast.AST) -> ast.AST:
    return ast.parse(ast.unparse(node)).body[0]


class CruxEvalGuard:
    """The normalized functions of CruxEval; `contains(source)` says whether a program holds one of them."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cruxeval_path()
        if not self.path.is_file():
            raise FileNotFoundError(
                f"CruxEval file not found at {self.path}; set ${CRUXEVAL_ENV} or pass its path "
                f"(the package ships a copy at {BUNDLED_CRUXEVAL})"
            )
        self.keys: set[str] = set()
        self.count = 0
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    self.keys |= function_keys(json.loads(line)["code"])
                    self.count += 1

    def contains(self, source: str) -> bool:
        """True if any function defined in `source` normalizes to a CruxEval function."""
        return not self.keys.isdisjoint(function_keys(source))


class Deduper:
    """Remembers normalized programs; `add` returns False for one seen before."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def add(self, source: str) -> bool:
        key = source_key(source)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True
