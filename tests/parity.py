"""Parity between the fast recorder and real debugpy: the program corpus, the seeded action
scripts, the golden files of recorded debugpy sessions, and the comparison.

A golden file (``tests/golden/<program>.json``) holds a header (debugpy and Python versions, the
command that regenerates it), the program's source, and one recorded debugpy session per action
script: the actions, the session breakpoints, and every `State` debugpy showed. Goldens are
self-contained, so a change in the synthetic generator does not invalidate them; a change in an
example program does (the test reports it as stale).
"""
from __future__ import annotations

import json
import platform
import random
import zlib
from dataclasses import dataclass
from pathlib import Path

from protocol.debugger import Action, ActionKind, State

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "golden"
EXAMPLES_DIR = ROOT / "examples"
REGENERATE = "nice -n 10 .venv/bin/python -m tests.regen_golden  (or: make golden)"
SYNTH_COUNT = 190
SCRIPTS_PER_PROGRAM = 3
SYNTH_SEED = 20260603

# Small hand-written programs for the debugpy oddities (the same ones tests/test_debugpy_recorder.py spells out).
HAND_WRITTEN: dict[str, str] = {
    "hand_calls": (
        "def check(v):\n    if v < 0:\n        raise ValueError(\"neg\")\n    return v * 2\n\n"
        "def run(items):\n    out = []\n    for it in items:\n        try:\n            out.append(check(it))\n"
        "        except ValueError:\n            out.append(0)\n    return out\n\nres = run([1, -1])\nfinal = check(-5)\n"
    ),
    "hand_generator": "def gen():\n    yield 1\n    yield 2\n\nfor v in gen():\n    w = v\n",
    "hand_listcomp": "xs = [i * 2 for i in range(2)]\nys = {k: v for k, v in zip('ab', xs)}\n",
    "hand_globals": (
        "import math\ndef f():\n    return 1\nclass C:\n    def __repr__(self):\n        return \"C()\"\n"
        "c = C()\nn = [1, 2]\ng = len\nprint(n)\n"
    ),
    "hand_stdout": "print('a')\nprint('b', end='')\nx = 1\nprint('c')\n",
    "hand_repeat_return": "def f(x):\n    return None\n\nfor i in range(3):\n    f(i)\n    f(i)\n",
    "hand_nested_raise": (
        "def a(x):\n    return b(x) + 1\n\ndef b(x):\n    if x > 1:\n        raise KeyError(x)\n    return x\n\n"
        "try:\n    a(5)\nexcept KeyError as e:\n    k = e.args[0]\nprint(a(1))\n"
    ),
    'hand_long_values': "big = list(range(100))\nnested = [list(range(30)) for _ in range(3)]\ntable = {i: str(i) * 3 for i in range(70)}\ntext = 'ab' * 500\nbig.append(text[:5])\n",
    'hand_bad_repr': "class Bad:\n    def __init__(self, n):\n        self.n = n\n\n    def __repr__(self):\n        raise RuntimeError('no repr')\n\n\nclass Half:\n    def __init__(self):\n        self.parts = []\n        self.parts.append(1)\n\n    def __repr__(self):\n        return f'Half({self.total})'\n\n\nb = Bad(1)\nh = Half()\nh.total = 3\nitems = [b, h]\n",
    'hand_class_body': "class Config:\n    size = 3\n    names = ['a', 'b']\n\n    def double(self):\n        return self.size * 2\n\n\ncfg = Config()\nd = cfg.double()\n",
    'hand_lambda_sort': "pairs = [(3, 'c'), (1, 'a'), (2, 'b')]\nordered = sorted(pairs, key=lambda p: p[0])\nnames = list(map(lambda p: p[1].upper(), ordered))\n",
    'hand_deep_recursion': 'def depth(n):\n    if n == 0:\n        return 0\n    sub = depth(n - 1)\n    return sub + 1\n\n\nd = depth(4)\n',
    'hand_underscore_names': '_ = 1\n_x = [_]\n__y = 2\nfor _ in range(2):\n    _x.append(_)\n',
    'hand_async': 'import asyncio\n\nasync def work(n):\n    await asyncio.sleep(0)\n    return n * 2\n\nasync def main():\n    a = await work(1)\n    b = await work(a)\n    return a + b\n\nres = asyncio.run(main())\nprint(res)\n',
    'hand_sys_exit': "import sys\n\ndef bail(code):\n    print('bye')\n    sys.exit(code)\n\nx = 1\nbail(3)\ny = 2\n",
    'hand_library_calls': "import json\n\ndef f():\n    a = json.dumps([1])\n    b = json.loads('2')\n    return a\n\nx = json.dumps([1])\ny = json.loads('3')\nz = f()\n",
    'hand_dataclass': 'from dataclasses import dataclass, field\n\n@dataclass\nclass P:\n    x: int\n    tags: list = field(default_factory=list)\n\n    def move(self, d):\n        self.x += d\n        return self\n\np = P(1)\np.move(2).move(3)\nq = p.x\n',
    'hand_with_finally': "class Ctx:\n    def __enter__(self):\n        self.on = True\n        return self\n    def __exit__(self, *a):\n        self.on = False\n        return False\n\nwith Ctx() as c:\n    v = c.on\nw = c.on\n\ndef f(x):\n    try:\n        if x:\n            return 'a'\n        raise ValueError(x)\n    except ValueError:\n        return 'b'\n    finally:\n        print('fin')\n\nr1 = f(1)\nr2 = f(0)\n",
    'hand_match_decorator': "def kind(v):\n    match v:\n        case [a, b]:\n            return a + b\n        case {'k': k}:\n            return k\n        case _:\n            return None\n\nx = kind([1, 2])\ny = kind({'k': 5})\nz = kind(3)\n\nimport functools\n\ndef twice(fn):\n    @functools.wraps(fn)\n    def inner(*a):\n        return fn(*a) * 2\n    return inner\n\n@twice\ndef inc(x):\n    return x + 1\n\nv = inc(3)\n",
    'hand_gen_send': 'def acc():\n    total = 0\n    while True:\n        x = yield total\n        if x is None:\n            break\n        total += x\n\ng = acc()\nnext(g)\ng.send(2)\nv = g.send(3)\n',
    'hand_input_eof': "import threading\nimport weakref\nimport io\n\nclass K:\n    pass\n\nk = K()\nr = weakref.ref(k)\nlock = threading.Lock()\nev = threading.Event()\nev.set()\nok = ev.is_set()\nbuf = io.StringIO()\nbuf.write('x')\nname = input() if False else 'n'\nprint('ask')\nanswer = input('who? ')\n",
    'hand_os_exit': "import os\n\ndef stop(code):\n    try:\n        print('leaving')\n        os._exit(code)\n    finally:\n        never = 1\n\nx = 1\nstop(4)\ny = 2\n",
    'hand_library_callbacks': "import re\n\ndef up(m):\n    t = m.group(0)\n    return t.upper()\n\ns = re.sub('a', up, 'bab')\nn = len(s)\n\nimport collections\n\ndef gen():\n    yield 1\n    yield 2\n\nc = collections.Counter(gen())\n",
}


@dataclass(frozen=True)
class Program:
    """A program of the parity corpus: a stable name and its source."""

    name: str
    source: str


@dataclass(frozen=True)
class Script:
    """One debugger session to record: the session breakpoints and the actions, in order.

    A breakpoint is a line of the program, or ``(file, line)`` in another file of a project (the
    path relative to the program's folder; ``"file:line"`` in JSON)."""

    breakpoints: tuple[int | tuple[str, int], ...]
    actions: tuple[Action, ...]

    def to_json(self) -> dict:
        return {"breakpoints": [b if isinstance(b, int) else f"{b[0]}:{b[1]}" for b in self.breakpoints],
                "actions": [str(a) for a in self.actions]}

    @classmethod
    def from_json(cls, data: dict) -> "Script":
        bps: list[int | tuple[str, int]] = []
        for b in data["breakpoints"]:
            if isinstance(b, int):
                bps.append(b)
            else:
                file, _, line = str(b).rpartition(":")
                bps.append((file, int(line)))
        return cls(tuple(bps), tuple(Action.parse(a) for a in data["actions"]))


def example_programs() -> list[Program]:
    return [Program(f"example_{p.stem}", p.read_text()) for p in sorted(EXAMPLES_DIR.glob("*.py"))]


def synthetic_programs(count: int = SYNTH_COUNT, seed: int = SYNTH_SEED) -> list[Program]:
    """`count` distinct synthetic programs from tracegen.synth that the fast recorder runs to a normal end."""
    from tracegen.fast import record_program
    from tracegen.synth import generate_program
    from protocol.debugger import Ending

    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[Program] = []
    while len(out) < count:
        source = generate_program(rng).source
        if source in seen:
            continue
        seen.add(source)
        trace = record_program(source)
        if trace.end.ending is Ending.NEVER:
            continue
        out.append(Program(f"synth_{len(out):03d}", source))
    return out


def golden_synthetic_programs() -> list[Program]:
    """The synthetic programs already frozen in goldens (their source is stored in the golden)."""
    out = []
    for path in sorted(GOLDEN_DIR.glob("synth_*.json")):
        data = json.loads(path.read_text())
        out.append(Program(data["name"], data["source"]))
    return out


def corpus(synth_count: int = SYNTH_COUNT, *, fresh_synth: bool = False) -> list[Program]:
    """Examples, the hand-written oddity programs, then synthetic ones.

    The synthetic programs are the ones frozen in the goldens (the generator may change under
    us); only with `fresh_synth`, or when no golden holds any, are they drawn from tracegen.synth.
    """
    hand = [Program(name, src) for name, src in HAND_WRITTEN.items()]
    synth = [] if fresh_synth else golden_synthetic_programs()[:synth_count]
    if not synth and synth_count:
        synth = synthetic_programs(synth_count)
    return example_programs() + hand + synth


# The paper's trajectory policies (Table A.1), as DAP actions plus the one-off breakpoint.
POLICIES: list[dict[str, float]] = [
    {"stepIn": 0.35, "next": 0.1, "stepOut": 0.2, "breakpoint": 0.1, "continue": 0.05},
    {"stepIn": 0.5, "next": 0.5},
    {"stepIn": 0.3, "next": 0.3, "stepOut": 0.15, "breakpoint": 0.1, "continue": 0.15},
]


def code_lines(source: str) -> list[int]:
    """1-based numbers of lines that hold code (not blank, not comments)."""
    return [i for i, line in enumerate(source.splitlines(), 1) if line.strip() and not line.strip().startswith("#")]


def scripts_for(program: Program, count: int = SCRIPTS_PER_PROGRAM, length: int = 10) -> list[Script]:
    """`count` seeded random action scripts for a program (the seed is the program's name)."""
    rng = random.Random(zlib.crc32(program.name.encode()))
    lines = code_lines(program.source) or [1]
    scripts = []
    for k in range(count):
        policy = POLICIES[k % len(POLICIES)]
        breakpoints = tuple(sorted(set(rng.sample(lines, min(len(lines), rng.randint(0, 2))))))
        actions = []
        for _ in range(length):
            kind = rng.choices(list(policy), weights=list(policy.values()))[0]
            if kind == "breakpoint":
                actions.append(Action(kind=ActionKind.BREAKPOINT, line=rng.choice(lines)))
            else:
                actions.append(Action.parse(kind))
        scripts.append(Script(breakpoints, tuple(actions)))
    return scripts


# ---------------------------------------------------------------------------------------- goldens


def golden_header() -> dict:
    import debugpy

    return {"recorder": "tracegen.debugpy_recorder.record_debugpy", "debugpy": debugpy.__version__,
            "python": platform.python_version(), "regenerate": REGENERATE}


def write_golden(program: Program, sessions: list[tuple[Script, list[State]]]) -> Path:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    data = {
        "header": golden_header(), "name": program.name, "source": program.source,
        "sessions": [dict(script.to_json(), states=[s.model_dump(mode="json", exclude_defaults=True) for s in states])
                     for script, states in sessions],
    }
    path = GOLDEN_DIR / f"{program.name}.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


@dataclass(frozen=True)
class Golden:
    """A recorded golden: the program and its debugpy sessions."""

    program: Program
    header: dict
    sessions: list[tuple[Script, list[State]]]


def load_golden(path: Path) -> Golden:
    data = json.loads(path.read_text())
    sessions = [(Script.from_json(s), [State.model_validate(x) for x in s["states"]]) for s in data["sessions"]]
    return Golden(Program(data["name"], data["source"]), data["header"], sessions)


def load_goldens() -> list[Golden]:
    return [load_golden(p) for p in sorted(GOLDEN_DIR.glob("*.json"))]


# ------------------------------------------------------------------------------------- comparison

FULL_FIELDS = ("frames", "return_value", "exception", "stdout", "exit_code", "ending")


def contract_lines(states: list[State], actions: tuple[Action, ...]) -> list[str]:
    """The `tracegen record` JSON lines of a session (what both recorders must print identically)."""
    from tracegen.record_json import session_lines

    return session_lines(states, list(actions))


def state_differences(fast: list[State], real: list[State]) -> list[str]:
    """Every field where two recordings of the same session differ, one line each ('' lists nothing)."""
    out = []
    if len(fast) != len(real):
        out.append(f"length: fast {len(fast)} states, debugpy {len(real)}")
    for i, (a, b) in enumerate(zip(fast, real)):
        a, b = a.normalized(), b.normalized()
        if a.reason != b.reason:
            out.append(f"#{i} reason: fast {a.reason.value}, debugpy {b.reason.value}")
        for name in FULL_FIELDS:
            x, y = getattr(a, name), getattr(b, name)
            if x != y:
                out.append(f"#{i} {name}: fast {_short(x)} | debugpy {_short(y)}")
    return out


def _short(value: object, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# ------------------------------------------------------------------------------ multi-file projects

PROJECTS_DIR = ROOT / "tests" / "programs" / "projects"
PROJECT_GOLDEN_DIR = GOLDEN_DIR / "projects"
PROJECT_MAIN = "main.py"
PROJECT_SCRIPT_LENGTH = 14


@dataclass(frozen=True)
class Project:
    """A multi-file parity program: ``main.py`` and the user modules beside it, as {relative path: source}."""

    name: str
    files: tuple[tuple[str, str], ...]

    @property
    def sources(self) -> dict[str, str]:
        return dict(self.files)

    @property
    def main(self) -> str:
        return self.sources[PROJECT_MAIN]

    def write(self, folder: Path) -> Path:
        """Write the project's files under `folder`; the path of its main.py."""
        for rel, text in self.files:
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        return folder / PROJECT_MAIN


def projects() -> list[Project]:
    """The hand-written projects of tests/programs/projects/ (one folder each, entry point main.py)."""
    out = []
    for folder in sorted(p for p in PROJECTS_DIR.iterdir() if (p / PROJECT_MAIN).is_file()):
        files = tuple(sorted((f.relative_to(folder).as_posix(), f.read_text()) for f in folder.rglob("*.py")
                             if "__pycache__" not in f.parts))
        out.append(Project(f"project_{folder.name}", files))
    return out


def project_scripts(project: Project, count: int = SCRIPTS_PER_PROGRAM, length: int = PROJECT_SCRIPT_LENGTH) -> list[Script]:
    """Seeded scripts for a project: as `scripts_for`, with session breakpoints in any of its files
    (the first script always has one in a module other than main.py)."""
    rng = random.Random(zlib.crc32(project.name.encode()))
    main_lines = code_lines(project.main) or [1]
    module_lines = [(rel, n) for rel, text in project.files if rel != PROJECT_MAIN for n in code_lines(text)]
    scripts = []
    for k in range(count):
        policy = POLICIES[k % len(POLICIES)]
        pool: list[int | tuple[str, int]] = [*main_lines, *module_lines]
        chosen = set(rng.sample(pool, min(len(pool), rng.randint(0, 2))))
        if k == 0 and module_lines and not any(isinstance(b, tuple) for b in chosen):
            chosen.add(rng.choice(module_lines))
        breakpoints = tuple(sorted(chosen, key=lambda b: (0, "", b) if isinstance(b, int) else (1, b[0], b[1])))
        actions = []
        for _ in range(length):
            kind = rng.choices(list(policy), weights=list(policy.values()))[0]
            if kind == "breakpoint":
                actions.append(Action(kind=ActionKind.BREAKPOINT, line=rng.choice(main_lines)))
            else:
                actions.append(Action.parse(kind))
        scripts.append(Script(breakpoints, tuple(actions)))
    return scripts


def relative_states(states: list[State], folder: Path) -> list[State]:
    """States with every other file's path written relative to the program's folder (as goldens keep them)."""
    from tracegen.record_json import relative_file

    out = []
    for state in states:
        if any(f.file for f in state.frames):
            state = state.model_copy(deep=True)
            for frame in state.frames:
                if frame.file:
                    frame.file = relative_file(frame.file, str(folder))
        out.append(state)
    return out


def write_project_golden(project: Project, sessions: list[tuple[Script, list[State]]]) -> Path:
    PROJECT_GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    data = {
        "header": golden_header(), "name": project.name, "main": PROJECT_MAIN, "files": dict(project.files),
        "sessions": [dict(script.to_json(), states=[s.model_dump(mode="json", exclude_defaults=True) for s in states])
                     for script, states in sessions],
    }
    path = PROJECT_GOLDEN_DIR / f"{project.name}.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


@dataclass(frozen=True)
class ProjectGolden:
    """A recorded project golden: the project and its debugpy sessions (file paths relative)."""

    project: Project
    header: dict
    sessions: list[tuple[Script, list[State]]]


def load_project_golden(path: Path) -> ProjectGolden:
    data = json.loads(path.read_text())
    sessions = [(Script.from_json(s), [State.model_validate(x) for x in s["states"]]) for s in data["sessions"]]
    return ProjectGolden(Project(data["name"], tuple(sorted(data["files"].items()))), data["header"], sessions)


def load_project_goldens() -> list[ProjectGolden]:
    return [load_project_golden(p) for p in sorted(PROJECT_GOLDEN_DIR.glob("*.json"))]
