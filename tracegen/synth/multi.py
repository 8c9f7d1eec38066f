"""Multi-function programs: calls between functions, recursion, classes with a readable
``__repr__``, exceptions raised and caught (and sometimes one left uncaught at the end),
generators, closures, prints and module-level code.

A program is a handful of randomly chosen *components*. Each component contributes definitions
and module-level code that uses them, with random names and constants; the definitions come
first, then the module-level code of every component in turn.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from tracegen.synth import values
from tracegen.synth.crux import generate_function


@dataclass
class Part:
    """What one component adds: definitions (functions, classes) and module-level lines."""

    defs: list[str] = field(default_factory=list)
    main: list[str] = field(default_factory=list)
    features: set[str] = field(default_factory=set)


class Names:
    """Hands out identifiers that are unique within one program."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.taken: set[str] = set()

    def get(self, *options: str) -> str:
        free = [o for o in options if o not in self.taken]
        name = self.rng.choice(free) if free else f"{self.rng.choice(options)}_{len(self.taken)}"
        self.taken.add(name)
        return name


def _recursion(r: random.Random, names: Names) -> Part:
    kind = r.randrange(5)
    fn = names.get("fact", "factorial", "prod_down", "rec")
    if kind == 0:
        body = [f"def {fn}(n):", "    if n <= 1:", "        return 1", f"    return n * {fn}(n - 1)"]
        call = f"{fn}({r.randint(2, 6)})"
    elif kind == 1:
        fn = names.get("fib", "fibo", "seq")
        body = [f"def {fn}(n):", "    if n < 2:", "        return n", f"    return {fn}(n - 1) + {fn}(n - 2)"]
        call = f"{fn}({r.randint(2, 6)})"
    elif kind == 2:
        fn = names.get("digit_sum", "sum_digits", "dsum")
        body = [f"def {fn}(n):", "    if n < 10:", "        return n", f"    return n % 10 + {fn}(n // 10)"]
        call = f"{fn}({r.randint(10, 99999)})"
    elif kind == 3:
        fn = names.get("flatten", "flat", "unnest")
        body = [f"def {fn}(items):", "    out = []", "    for x in items:", "        if isinstance(x, list):",
                f"            out.extend({fn}(x))", "        else:", "            out.append(x)", "    return out"]
        nested = [r.randint(0, 9), [r.randint(0, 9), [r.randint(0, 9)]], r.randint(0, 9)]
        call = f"{fn}({nested!r})"
    else:
        fn = names.get("gcd", "common", "euclid")
        body = [f"def {fn}(a, b):", "    if b == 0:", "        return a", f"    return {fn}(b, a % b)"]
        call = f"{fn}({r.randint(6, 60)}, {r.randint(2, 40)})"
    var = names.get("res", "value", "answer", "out", "total")
    main = [f"{var} = {call}"]
    if r.random() < 0.5:
        main.append(f"print({var})")
    return Part([ "\n".join(body)], main, {"recursion", "calls"})


def _helpers(r: random.Random, names: Names) -> Part:
    """Two or three functions that call each other on a list."""
    norm = names.get("normalize", "clean", "prepare")
    score = names.get("score", "weigh", "measure")
    agg = names.get("summarize", "aggregate", "combine")
    k = r.randint(2, 5)
    defs = [
        f"def {norm}(x):\n    return x % {k} if x >= 0 else -x",
        f"def {score}(items):\n    total = 0\n    for it in items:\n        total += {norm}(it)\n    return total",
        f"def {agg}(groups):\n    result = {{}}\n    for name, items in groups.items():\n        result[name] = {score}(items)\n    return result",
    ]
    groups = {w: values.rand_list_int(r, 4) for w in r.sample(values.WORDS, r.randint(1, 3))}
    var = names.get("report", "summary", "scores")
    main = [f"{var} = {agg}({groups!r})"]
    if r.random() < 0.6:
        main.append(f"print({var})")
    return Part(defs, main, {"calls"})


def _class(r: random.Random, names: Names) -> Part:
    kind = r.randrange(4)
    if kind == 0:
        cls = names.get("Stack", "Pile")
        defs = [
            f"class {cls}:\n    def __init__(self):\n        self.items = []\n\n"
            f"    def push(self, x):\n        self.items.append(x)\n\n"
            f"    def pop(self):\n        if not self.items:\n            raise IndexError('pop from empty {cls.lower()}')\n        return self.items.pop()\n\n"
            f"    def __repr__(self):\n        return f'{cls}({{self.items}})'"
        ]
        s = names.get("st", "stack", "pile")
        main = [f"{s} = {cls}()", f"for v in {values.rand_list_int(r, 4)!r}:", f"    {s}.push(v)"]
        pops = r.randint(1, 5)
        main += ["try:", f"    for _ in range({pops}):", f"        top = {s}.pop()", "except IndexError as e:", "    print('error:', e)", f"print({s})"]
        return Part(defs, main, {"class", "exception"})
    if kind == 1:
        cls = names.get("Account", "Wallet", "Purse")
        defs = [
            f"class {cls}:\n    def __init__(self, owner, balance=0):\n        self.owner = owner\n        self.balance = balance\n\n"
            f"    def deposit(self, amount):\n        self.balance += amount\n        return self.balance\n\n"
            f"    def withdraw(self, amount):\n        if amount > self.balance:\n            raise ValueError('insufficient funds')\n        self.balance -= amount\n        return self.balance\n\n"
            f"    def __repr__(self):\n        return f'{cls}({{self.owner!r}}, {{self.balance}})'"
        ]
        a = names.get("acct", "acc", "wallet")
        main = [f"{a} = {cls}({r.choice(values.WORDS)!r}, {r.randint(0, 50)})", f"{a}.deposit({r.randint(1, 30)})"]
        main += ["try:", f"    {a}.withdraw({r.randint(10, 90)})", "except ValueError as err:", "    print('failed:', err)", f"print({a})"]
        return Part(defs, main, {"class", "exception"})
    if kind == 2:
        cls = names.get("Point", "Vec", "Pair")
        defs = [
            f"class {cls}:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n\n"
            f"    def add(self, other):\n        return {cls}(self.x + other.x, self.y + other.y)\n\n"
            f"    def scale(self, k):\n        return {cls}(self.x * k, self.y * k)\n\n"
            f"    def __repr__(self):\n        return f'{cls}({{self.x}}, {{self.y}})'"
        ]
        p, q = names.get("p", "a", "u"), names.get("q", "b", "v")
        main = [f"{p} = {cls}({r.randint(-5, 9)}, {r.randint(-5, 9)})", f"{q} = {cls}({r.randint(-5, 9)}, {r.randint(-5, 9)})",
                f"{names.get('s', 'total', 'w')} = {p}.add({q}).scale({r.randint(2, 4)})"]
        return Part(defs, main, {"class", "calls"})
    base, sub = names.get("Shape", "Item", "Animal"), names.get("Square", "Box", "Dog")
    defs = [
        f"class {base}:\n    def __init__(self, name):\n        self.name = name\n\n    def describe(self):\n        return self.name + ' of size ' + str(self.size())\n\n"
        f"    def size(self):\n        return 0\n\n    def __repr__(self):\n        return f'{base}({{self.name!r}})'",
        f"class {sub}({base}):\n    def __init__(self, name, side):\n        super().__init__(name)\n        self.side = side\n\n"
        f"    def size(self):\n        return self.side * self.side\n\n    def __repr__(self):\n        return f'{sub}({{self.name!r}}, {{self.side}})'",
    ]
    objs = names.get("shapes", "things", "objs")
    main = [f"{objs} = [{base}({r.choice(values.WORDS)!r}), {sub}({r.choice(values.WORDS)!r}, {r.randint(1, 6)})]",
            f"for o in {objs}:", "    print(o.describe())"]
    return Part(defs, main, {"class", "inheritance"})


def _exceptions(r: random.Random, names: Names) -> Part:
    fn = names.get("parse", "to_int", "convert")
    err = names.get("BadInput", "ParseError", "InvalidValue")
    defs = [
        f"class {err}(Exception):\n    pass",
        f"def {fn}(text):\n    if not text:\n        raise {err}('empty')\n    if not text.isdigit():\n        raise ValueError(text)\n    return int(text)",
    ]
    items = [r.choice(["", "12", "7", "x1", "42", "abc", "3"]) for _ in range(r.randint(2, 4))]
    out = names.get("parsed", "nums", "converted")
    main = [f"{out} = []", f"for t in {items!r}:", "    try:", f"        {out}.append({fn}(t))",
            f"    except {err}:", f"        {out}.append(-1)", "    except ValueError as e:", "        print('bad', e)"]
    if r.random() < 0.4:
        main += ["    finally:", f"        {names.get('attempts', 'tries', 'seen')} = len({out})"]
    return Part(defs, main, {"exception", "calls"})


def _generator(r: random.Random, names: Names) -> Part:
    kind = r.randrange(3)
    if kind == 0:
        g = names.get("countdown", "down", "descend")
        defs = [f"def {g}(n):\n    while n > 0:\n        yield n\n        n -= {r.randint(1, 3)}"]
        v = names.get("seq", "ticks", "steps")
        main = [f"{v} = list({g}({r.randint(3, 9)}))"]
    elif kind == 1:
        g = names.get("pairs", "windows", "adjacent")
        defs = [f"def {g}(items):\n    for i in range(len(items) - 1):\n        yield items[i], items[i + 1]"]
        v = names.get("diffs", "gaps", "deltas")
        main = [f"{v} = []", f"for a, b in {g}({values.rand_list_int(r, 5)!r}):", f"    {v}.append(b - a)"]
    else:
        g = names.get("evens", "gen_even", "even_numbers")
        defs = [f"def {g}(limit):\n    n = 0\n    while True:\n        if n >= limit:\n            return\n        yield n\n        n += 2"]
        it = names.get("it", "gen", "stream")
        main = [f"{it} = {g}({r.randint(2, 10)})", f"first = next({it})", f"rest = [x * x for x in {it}]"]
    return Part(defs, main, {"generator"})


def _closure(r: random.Random, names: Names) -> Part:
    if r.random() < 0.5:
        mk = names.get("make_counter", "counter", "tally")
        defs = [f"def {mk}(start):\n    count = start\n\n    def step(by=1):\n        nonlocal count\n        count += by\n        return count\n\n    return step"]
        c = names.get("tick", "inc", "bump")
        main = [f"{c} = {mk}({r.randint(0, 10)})"] + [f"{c}({r.randint(1, 4)})" for _ in range(r.randint(1, 3))]
        main.append(f"{names.get('now', 'current', 'level')} = {c}()")
    else:
        mk = names.get("make_adder", "adder", "plus")
        defs = [f"def {mk}(k):\n    def add(x):\n        return x + k\n    return add"]
        f = names.get("add_n", "inc_by", "shift")
        main = [f"{f} = {mk}({r.randint(1, 9)})", f"{names.get('mapped', 'shifted', 'moved')} = [{f}(x) for x in {values.rand_list_int(r, 4)!r}]"]
    return Part(defs, main, {"closure"})


def _module_loop(r: random.Random, names: Names) -> Part:
    d = names.get("counts", "freq", "tally_map")
    text = values.rand_str(r)
    main = [f"{d} = {{}}", f"for ch in {text!r}:", f"    {d}[ch] = {d}.get(ch, 0) + 1",
            f"{names.get('best', 'top', 'most')} = max({d}, key={d}.get) if {d} else None"]
    if r.random() < 0.5:
        main.append(f"print(sorted({d}.items()))")
    return Part([], main, {"module_code", "print"})


def _crux_helper(r: random.Random, names: Names) -> Part:
    """A CruxEval-style function renamed and called on two inputs."""
    fn = generate_function(r)
    name = names.get("transform", "process", "helper", "compute")
    source = fn.function.replace("def f(", f"def {name}(", 1)
    call_args = fn.call[len("result = f("):-1]
    var = names.get("first", "r1", "outcome")
    main = [f"{var} = {name}({call_args})", f"print({name}.__name__, {var})" if r.random() < 0.3 else f"print({var})"]
    return Part([source], main, {"calls"})


def _uncaught(r: random.Random, names: Names) -> Part:
    kind = r.randrange(3)
    if kind == 0:
        fn = names.get("lookup", "fetch", "get_item")
        return Part([f"def {fn}(table, key):\n    return table[key]"],
                    [f"{fn}({{'a': 1}}, {r.choice(['b', 'zz', 'key'])!r})"], {"uncaught"})
    if kind == 1:
        fn = names.get("ratio", "divide", "share")
        return Part([f"def {fn}(a, b):\n    return a / b"], [f"{fn}({r.randint(1, 9)}, 0)"], {"uncaught"})
    fn = names.get("check", "validate", "ensure")
    return Part([f"def {fn}(v):\n    if v < 0:\n        raise ValueError('negative: ' + str(v))\n    return v"],
                [f"{fn}({r.randint(0, 5)})", f"{fn}({-r.randint(1, 5)})"], {"uncaught", "exception"})


COMPONENTS: tuple[tuple[Callable[[random.Random, Names], Part], float], ...] = (
    (_recursion, 1.0),
    (_helpers, 0.8),
    (_class, 1.2),
    (_exceptions, 0.8),
    (_generator, 0.8),
    (_closure, 0.7),
    (_module_loop, 0.5),
    (_crux_helper, 1.0),
)


@dataclass(frozen=True)
class MultiProgram:
    """A generated multi-function program and the features it exercises."""

    source: str
    features: frozenset[str]


def choose_parts(rng: random.Random, names: Names, uncaught_rate: float = 0.1) -> list[Part]:
    """2-4 components of distinct kinds, sometimes followed by an uncaught exception."""
    funcs, weights = zip(*COMPONENTS)
    chosen: list[Callable[[random.Random, Names], Part]] = []
    for _ in range(rng.randint(2, 4)):
        pick = rng.choices(funcs, weights=weights)[0]
        if pick not in chosen:
            chosen.append(pick)
    parts = [c(rng, names) for c in chosen]
    if rng.random() < uncaught_rate:
        parts.append(_uncaught(rng, names))
    return parts


def generate_multi(rng: random.Random, uncaught_rate: float = 0.1) -> MultiProgram:
    """A program of 2-4 components (distinct kinds), sometimes ending with an uncaught exception."""
    names = Names(rng)
    parts = choose_parts(rng, names, uncaught_rate)
    defs = [d for p in parts for d in p.defs]
    main = [line for p in parts for line in p.main]
    features = {f for p in parts for f in p.features}
    if any("print(" in line for line in main):
        features.add("print")
    source = "\n\n".join(defs) + ("\n\n" if defs else "") + "\n".join(main) + "\n"
    return MultiProgram(source, frozenset(features))
