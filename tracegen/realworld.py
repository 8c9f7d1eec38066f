"""Real-world evaluation programs: pure-Python standard-library modules that nobody here wrote, each
driven by a few lines of calls, as long single files and as two-file projects.

The modules are read from the running interpreter's standard library at build time (nothing of theirs is
carried in the repository). For each module two programs are written under ``OUT``:

- ``long/<module>_long.py`` (named apart from the module, which it would shadow): the module's own source (its ``if __name__ == "__main__":`` block and its
  C-accelerator imports such as ``from _heapq import *`` left out, so the pure-Python code runs), then
  the driver appended: one file of 60-600 lines in which only a few functions are called.
- ``projects/<module>/main.py`` importing ``<module>_impl.py`` (the same module source) and running the
  driver with qualified names: the module is user code in another file, as in a user's project.

``neural-debugger tracegen realworld --out DIR`` writes them; ``neural-debugger eval fidelity --programs
DIR`` measures a model on them against tracegen's recorder (which reproduces debugpy, see
docs/tracegen-parity.md). Evaluation only: these programs are never training data.
"""
from __future__ import annotations

import ast
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# module -> driver: plain statements using the module's public names unqualified (they are rewritten to
# ``<module>_impl.<name>`` for the project variant). Deterministic, no I/O, no clock, no randomness.
DRIVERS: dict[str, str] = {
    "colorsys": "h, s, v = rgb_to_hsv(0.2, 0.4, 0.4)\nr, g, b = hsv_to_rgb(h, s, v)\ny, i, q = rgb_to_yiq(0.5, 0.25, 0.75)\nhl = rgb_to_hls(0.9, 0.1, 0.3)\n",
    "fnmatch": "names = ['a.py', 'b.txt', 'c.py', 'README']\npy = filter(names, '*.py')\nok = fnmatchcase('setup.cfg', 's*.c?g')\npattern = translate('[!a-c]*.txt')\n",
    "bisect": "xs = [1, 3, 5, 7]\ninsort(xs, 4)\ni = bisect_left(xs, 5)\nj = bisect_right(xs, 5)\ninsort_left(xs, 0)\n",
    "heapq": "h = []\nfor x in [5, 1, 4, 2, 3]:\n    heappush(h, x)\nsmallest = heappop(h)\ntop = nlargest(2, [9, 3, 7, 1])\nmerged = list(merge([1, 4], [2, 3]))\n",
    "keyword": "a = iskeyword('for')\nb = iskeyword('print')\nc = issoftkeyword('match')\n",
    "stat": "mode = filemode(0o100644)\nd = S_ISDIR(0o040755)\nr = S_IMODE(0o100755)\n",
    "graphlib": "ts = TopologicalSorter({'b': {'a'}, 'c': {'b', 'a'}})\norder = list(ts.static_order())\n",
    "string": "title = capwords('hello   neural world')\nt = Template('$who likes $what')\ntext = t.substitute(who='tim', what='kung pao')\n",
    "reprlib": "r = Repr()\nr.maxlist = 3\nshort = r.repr(list(range(20)))\nlong_text = repr1 = r.repr('x' * 50)\n",
    "copy": "src = {'a': [1, 2], 'b': (3, [4])}\nshallow = copy(src)\ndeep = deepcopy(src)\nsame = deep == src\n",
    "textwrap": "lines = wrap('The quick brown fox jumps over the lazy dog', width=12)\nshort = shorten('Hello  world, this is long', width=15)\nd = dedent('    a\\n      b\\n')\n",
    "shlex": "parts = split('cp \"my file.txt\" dest/')\nq = quote(\"it's\")\nline = join(['echo', 'a b'])\n",
    "html": "e = escape('<a href=\"x\">&</a>')\nu = unescape('&lt;b&gt; &amp; &#39;')\n",
    "quopri": "enc = encodestring(b'caf\\xc3\\xa9 = ok')\ndec = decodestring(enc)\n",
    "abc": "class Shape(ABC):\n    @abstractmethod\n    def area(self):\n        return 0\n\nclass Square(Shape):\n    def __init__(self, side):\n        self.side = side\n    def area(self):\n        return self.side * self.side\n\narea = Square(3).area()\n",
    "codeop": "src = 'x = 1'\nneeds_more = compile_command('if True:') is None\n",
    "fractions": "a = Fraction(3, 4)\nb = Fraction('1/6')\nc = a + b\nd = (a * 2).limit_denominator(10)\n",
    "calendar": "leap = isleap(2024)\nn = leapdays(2000, 2025)\nwd = weekday(2026, 12, 1)\nrng = monthrange(2026, 2)\n",
}

# top-level imports of C accelerators that replace the pure-Python code (left out of the copy)
_ACCELERATORS = ("_heapq", "_bisect", "_stat", "_json", "_string", "_functools", "_collections", "_operator")


@dataclass(frozen=True)
class RealWorldProgram:
    module: str
    lines: int  # of the single-file program
    single: str  # long/<module>_long.py
    main: str  # projects/<module>/main.py
    impl: str  # projects/<module>/<module>_impl.py

    @property
    def impl_file(self) -> str:
        """The module copy's file name beside ``main.py`` (a dotted module's dots as underscores)."""
        return f"{self.module.replace('.', '_')}_impl.py"


def stdlib_source(module: str) -> str:
    """The source of a pure-Python standard-library module of this interpreter."""
    base = Path(sysconfig.get_paths()["stdlib"]) / module.replace(".", "/")
    path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
    return path.read_text(encoding="utf-8")


def _kept(node: ast.stmt) -> bool:
    """False for ``if __name__ == '__main__':`` and for imports of C accelerators (also inside try)."""
    if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test):
        return False
    if isinstance(node, ast.ImportFrom) and (node.module or "") in _ACCELERATORS:
        return False
    if isinstance(node, ast.Try):
        inner = [n for n in node.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        if inner and len(inner) == len(node.body) and all(isinstance(n, ast.ImportFrom) and (n.module or "") in _ACCELERATORS for n in inner):
            return False
    return True


def module_copy(source: str) -> str:
    """`source` without the statements `_kept` rejects, every other line as written (line for line
    where possible: removed statements leave their lines out)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    drop: set[int] = set()
    for node in tree.body:
        if not _kept(node):
            drop.update(range(node.lineno - 1, (node.end_lineno or node.lineno)))
    kept = [line for i, line in enumerate(lines) if i not in drop]
    return "\n".join(kept).rstrip() + "\n"


def _qualified(driver: str, module_source: str, alias: str) -> str:
    """The driver with each name the module defines at top level written as ``alias.name``."""
    defined = _top_level_names(ast.parse(module_source))
    tree = ast.parse(driver)
    assigned = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assigned |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef))}

    class Qualify(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if isinstance(node.ctx, ast.Load) and node.id in defined and node.id not in assigned:
                return ast.copy_location(ast.Attribute(ast.Name(alias, ast.Load()), node.id, ast.Load()), node)
            return node

    return ast.unparse(ast.fix_missing_locations(Qualify().visit(tree))) + "\n"


def _top_level_names(tree: ast.Module) -> set[str]:
    """Names bound at module level, also inside top-level ``try`` and ``if`` blocks (a pure-Python
    fallback such as ``try: from nt import _path_normpath`` / ``except ImportError: def normpath``)."""
    names: set[str] = set()
    for node in _module_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` with the statements of its ``try`` and ``if`` blocks, recursively."""
    found: list[ast.stmt] = []
    for node in body:
        found.append(node)
        if isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                found += _module_level(block)
        elif isinstance(node, ast.If):
            found += _module_level(node.body) + _module_level(node.orelse)
    return found


def build_program(module: str, driver: str) -> RealWorldProgram:
    copy = module_copy(stdlib_source(module))
    single = copy + "\n\n# --- driver (appended) ---\n" + driver
    impl_name = f"{module.replace('.', '_')}_impl"
    main = f"import {impl_name}\n\n" + _qualified(driver, copy, impl_name)
    return RealWorldProgram(module, len(single.splitlines()), single, main, copy)


def write_corpus(out: Path, modules: list[str] | None = None, drivers: Mapping[str, str] = DRIVERS) -> list[RealWorldProgram]:
    """Write ``long/`` and ``projects/`` under `out` for `modules` (default: every module of `drivers`,
    the evaluation's `DRIVERS` unless told otherwise)."""
    programs = []
    for module in modules or sorted(drivers):
        if module not in drivers:
            raise ValueError(f"no driver for {module!r}; known: {', '.join(sorted(drivers))}")
        program = build_program(module, drivers[module])
        (out / "long").mkdir(parents=True, exist_ok=True)
        (out / "long" / f"{module.replace('.', '_')}_long.py").write_text(program.single, encoding="utf-8")
        folder = out / "projects" / module
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "main.py").write_text(program.main, encoding="utf-8")
        (folder / program.impl_file).write_text(program.impl, encoding="utf-8")
        programs.append(program)
    return programs
