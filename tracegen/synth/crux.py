"""CruxEval-style functions: one ``def f(...)`` of 75-300 characters plus its call line.

The generator is typed: it tracks each variable's type (str, int, bool, list of int, list of
str, dict of str to int), builds expressions from the str/list/dict methods CruxEval used
(`methods.py`), and composes statements: assignments, in-place method calls, accumulator loops
with conditions, while loops that always shrink something, early returns. New variables are
bound only at the top level of the body, loops never mutate what they iterate, and growth is
bounded, so almost every function runs without error; the run filter catches the rest.

The shape of a program is fixed project-wide: the function source, one blank line, then
``result = f(<args>)``.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from tracegen.synth import values

# variable types
S, I, B, LI, LS, D = "str", "int", "bool", "list_int", "list_str", "dict"

MIN_CHARS = 75
MAX_CHARS = 300

_NAMES: dict[str, tuple[str, ...]] = {
    S: ("text", "s", "string", "st", "line", "word", "name", "sentence", "phrase", "message", "txt", "value", "prefix", "sep", "chars", "label"),
    I: ("n", "k", "num", "count", "size", "width", "m", "amount", "index", "start", "limit", "total", "pos"),
    B: ("flag", "ok", "found", "check"),
    LI: ("nums", "numbers", "arr", "array", "lst", "values", "data", "items", "digits", "scores"),
    LS: ("words", "names", "parts", "strings", "tokens", "lines", "letters", "chunks"),
    D: ("d", "dic", "counts", "mapping", "table", "dct", "freq", "store"),
}
_RESULT_NAMES: dict[str, tuple[str, ...]] = {
    S: ("result", "res", "out", "new_text", "output", "acc", "s2", "temp", "ans", "new_s"),
    I: ("result", "res", "total", "cnt", "score", "acc", "counter", "ans", "length", "idx"),
    B: ("result", "is_ok", "flag", "matched"),
    LI: ("result", "res", "out", "output", "new_nums", "acc", "evens", "picked", "ans", "vals"),
    LS: ("result", "res", "out", "output", "new_words", "acc", "kept", "pieces", "ans", "collected"),
    D: ("result", "res", "out", "new_d", "counts", "seen", "acc", "groups", "memo", "ans"),
}
_LOOP_NAMES: dict[str, tuple[str, ...]] = {
    S: ("ch", "c", "char", "letter", "w", "word", "part", "token", "key", "el"),
    I: ("x", "num", "n", "item", "v", "i", "j", "val", "e", "value"),
}


@dataclass
class Env:
    """The generator's view of a function being built: variable types, which names are taken,
    which collections an enclosing loop iterates (read-only), and the (type, method) pairs used."""

    rng: random.Random
    types: dict[str, str] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    protected: set[str] = field(default_factory=set)
    methods: set[tuple[str, str]] = field(default_factory=set)
    used: set[str] = field(default_factory=set)
    last: list[str] = field(default_factory=list)

    def of(self, *types: str) -> list[str]:
        return [v for v, t in self.types.items() if t in types]

    def pick(self, typ: str) -> str | None:
        """A variable of `typ`, preferring parameters not used yet."""
        names = self.of(typ)
        if not names:
            return None
        unused = [v for v in names if v in self.params and v not in self.used]
        name = self.rng.choice(unused) if unused and self.rng.random() < 0.7 else self.rng.choice(names)
        self.used.add(name)
        return name

    def fresh(self, typ: str, pool: dict[str, tuple[str, ...]] = _RESULT_NAMES) -> str:
        options = [n for n in pool[typ] if n not in self.types and n != "f"]
        if options:
            return self.rng.choice(options)
        base = self.rng.choice(pool[typ])
        k = 2
        while f"{base}{k}" in self.types:
            k += 1
        return f"{base}{k}"

    def use(self, owner: str, method: str) -> None:
        self.methods.add((owner, method))

    def mutable(self, *types: str) -> list[str]:
        return [v for v in self.of(*types) if v not in self.protected]


def _lit_str(env: Env) -> str:
    return repr(values.rand_small_str(env.rng))


def _lit_char(env: Env) -> str:
    return repr(values.rand_char(env.rng))


def _lit_int(env: Env, lo: int = 0, hi: int = 6) -> str:
    return str(env.rng.randint(lo, hi))


# ---------------------------------------------------------------- expressions, by result type
# Each producer takes the env and one source variable (of the listed type) and returns code.
Producer = Callable[[Env, str], str]


def _str_from_str(env: Env, v: str) -> str:
    r = env.rng
    kind = r.randrange(17)
    if kind == 0:
        m = r.choice(["capitalize", "casefold", "lower", "upper", "swapcase", "title"])
        env.use("str", m)
        return f"{v}.{m}()"
    if kind == 1:
        m = r.choice(["center", "ljust", "rjust"])
        env.use("str", m)
        width = r.choice([_lit_int(env, 3, 15), f"len({v}) + {_lit_int(env, 1, 4)}"])
        return f"{v}.{m}({width}, {_lit_char(env)})" if r.random() < 0.7 else f"{v}.{m}({width})"
    if kind == 2:
        env.use("str", "zfill")
        return f"{v}.zfill({_lit_int(env, 2, 12)})"
    if kind == 3:
        env.use("str", "expandtabs")
        return f"{v}.expandtabs({_lit_int(env, 1, 8)})"
    if kind == 4:
        m = r.choice(["strip", "lstrip", "rstrip"])
        env.use("str", m)
        return f"{v}.{m}()" if r.random() < 0.4 else f"{v}.{m}({_lit_str(env)})"
    if kind == 5:
        m = r.choice(["removeprefix", "removesuffix"])
        env.use("str", m)
        return f"{v}.{m}({_lit_str(env)})"
    if kind == 6:
        env.use("str", "replace")
        extra = f", {_lit_int(env, 1, 3)}" if r.random() < 0.3 else ""
        return f"{v}.replace({_lit_str(env)}, {_lit_str(env) if r.random() < 0.7 else repr('')}{extra})"
    if kind == 7:
        env.use("str", "translate")
        env.use("str", "maketrans")
        if r.random() < 0.3:
            return f"{v}.translate(str.maketrans('', '', {_lit_str(env)}))"
        n = r.randint(1, 3)
        a = "".join(r.sample("abcdexyz", n))
        b = "".join(r.sample("ABCDEXYZ0123", n))
        return f"{v}.translate(str.maketrans({a!r}, {b!r}))"
    if kind == 8:
        return r.choice([f"{v}[::-1]", f"{v}[1:]", f"{v}[:-1]", f"{v}[::2]", f"{v}[{_lit_int(env, 0, 3)}:{_lit_int(env, 3, 8)}]", f"{v}[-{_lit_int(env, 1, 4)}:]"])
    if kind == 9:
        m = r.choice(["partition", "rpartition"])
        env.use("str", m)
        return f"{v}.{m}({_lit_char(env)})[{r.choice([0, 2])}]"
    if kind == 10:
        env.use("str", "format")
        return r.choice([f"'{{}}{{}}'.format({v}, {_lit_str(env)})", f"'{{0}}-{{0}}'.format({v})", f"'{{}}:{{}}'.format(len({v}), {v})"])
    if kind == 11:
        env.use("str", "format_map")
        return f"'{{a}}{{b}}'.format_map({{'a': {v}, 'b': {_lit_str(env)}}})"
    if kind == 12:
        env.use("str", "join")
        return r.choice([f"{_lit_char(env)}.join({v})", f"''.join(reversed({v}))", f"''.join(sorted({v}))"])
    if kind == 13:
        return r.choice([f"{v} + {_lit_str(env)}", f"{_lit_str(env)} + {v}", f"{v} * 2"])
    if kind == 14:
        env.use("str", "join")
        env.use("str", "split")
        return f"{_lit_char(env)}.join({v}.split())"
    if kind == 15:
        m = r.choice(["upper", "lower", "swapcase"])
        env.use("str", m)
        return f"''.join(c.{m}() if c.{r.choice(['isalpha', 'isupper', 'islower', 'isdigit'])}() else c for c in {v})"
    env.use("str", "join")
    return f"''.join(c for c in {v} if c not in {_lit_str(env)})"


def _str_from_list_str(env: Env, v: str) -> str:
    env.use("str", "join")
    return env.rng.choice([f"{_lit_char(env)}.join({v})", f"''.join({v})", f"' '.join(reversed({v}))", f"''.join(w[0] for w in {v} if w)"])


def _str_from_list_int(env: Env, v: str) -> str:
    env.use("str", "join")
    return env.rng.choice([f"''.join(str(x) for x in {v})", f"{_lit_char(env)}.join(map(str, {v}))"])


def _str_from_dict(env: Env, v: str) -> str:
    env.use("str", "join")
    if env.rng.random() < 0.5:
        env.use("dict", "keys")
        return f"{_lit_char(env)}.join({v}.keys())"
    env.use("dict", "items")
    return f"''.join(k * x for k, x in {v}.items() if x > 0)"


def _int_from_str(env: Env, v: str) -> str:
    r = env.rng
    kind = r.randrange(6)
    if kind == 0:
        m = r.choice(["count", "find", "rfind"])
        env.use("str", m)
        return f"{v}.{m}({_lit_str(env) if r.random() < 0.5 else _lit_char(env)})"
    if kind == 1:
        m = r.choice(["index", "rindex"])
        env.use("str", m)
        lit = _lit_char(env)
        return f"{v}.{m}({lit}) if {lit} in {v} else {_lit_int(env, -1, 0)}"
    if kind == 2:
        env.use("str", "encode")
        return f"len({v}.encode('utf-8'))"
    if kind == 3:
        m = r.choice(["isdigit", "isupper", "isalpha", "islower", "isspace"])
        env.use("str", m)
        return f"sum(1 for c in {v} if c.{m}())"
    if kind == 4:
        env.use("str", "split")
        return f"len({v}.split({_lit_char(env) if r.random() < 0.5 else ''}))"
    return f"len({v})"


def _int_from_list_int(env: Env, v: str) -> str:
    r = env.rng
    kind = r.randrange(5)
    if kind == 0:
        env.use("list", "count")
        return f"{v}.count({_lit_int(env)})"
    if kind == 1:
        env.use("list", "index")
        k = _lit_int(env)
        return f"{v}.index({k}) if {k} in {v} else -1"
    if kind == 2:
        return f"sum({v})"
    if kind == 3:
        return f"max({v}, default={_lit_int(env)})"
    return f"len({v})"


def _int_from_list_str(env: Env, v: str) -> str:
    if env.rng.random() < 0.5:
        env.use("list", "count")
        return f"{v}.count({_lit_str(env)})"
    return env.rng.choice([f"len({v})", f"sum(len(w) for w in {v})"])


def _int_from_dict(env: Env, v: str) -> str:
    r = env.rng
    kind = r.randrange(3)
    if kind == 0:
        env.use("dict", "get")
        return f"{v}.get({repr(r.choice(values.WORDS))}, {_lit_int(env)})"
    if kind == 1:
        env.use("dict", "values")
        return f"sum({v}.values())"
    return f"len({v})"


def _int_from_int(env: Env, v: str) -> str:
    return env.rng.choice([f"{v} + {_lit_int(env, 1, 5)}", f"{v} * {_lit_int(env, 2, 3)}", f"{v} - {_lit_int(env, 1, 5)}", f"{v} % {_lit_int(env, 2, 5)}", f"{v} // {_lit_int(env, 2, 4)}", f"abs({v})"])


def _bool_from_str(env: Env, v: str) -> str:
    r = env.rng
    kind = r.randrange(4)
    if kind == 0:
        m = r.choice(["isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower",
                      "isnumeric", "isprintable", "isspace", "istitle", "isupper"])
        env.use("str", m)
        return f"{v}.{m}()" if r.random() < 0.85 else f"not {v}.{m}()"
    if kind == 1:
        m = r.choice(["startswith", "endswith"])
        env.use("str", m)
        return f"{v}.{m}({_lit_str(env) if r.random() < 0.5 else _lit_char(env)})"
    if kind == 2:
        return r.choice([f"{_lit_char(env)} in {v}", f"{_lit_char(env)} not in {v}", f"{v} == {v}[::-1]"])
    return r.choice([f"len({v}) > {_lit_int(env, 1, 6)}", f"len({v}) % 2 == 0", f"{v} < {_lit_str(env)}"])


def _bool_from_list_int(env: Env, v: str) -> str:
    return env.rng.choice([f"{_lit_int(env)} in {v}", f"len({v}) > {_lit_int(env, 1, 5)}", f"not {v}", f"sum({v}) % 2 == 0"])


def _bool_from_list_str(env: Env, v: str) -> str:
    return env.rng.choice([f"{_lit_str(env)} in {v}", f"len({v}) > {_lit_int(env, 1, 4)}", f"not {v}"])


def _bool_from_dict(env: Env, v: str) -> str:
    return env.rng.choice([f"{repr(env.rng.choice(values.WORDS))} in {v}", f"len({v}) > {_lit_int(env, 1, 4)}", f"not {v}"])


def _bool_from_int(env: Env, v: str) -> str:
    return env.rng.choice([f"{v} > {_lit_int(env)}", f"{v} % 2 == 0", f"{v} < {_lit_int(env, 1, 9)}", f"{v} == {_lit_int(env)}", f"{v} != 0"])


def _list_str_from_str(env: Env, v: str) -> str:
    r = env.rng
    kind = r.randrange(6)
    if kind == 0:
        env.use("str", "split")
        return r.choice([f"{v}.split()", f"{v}.split({_lit_char(env)})", f"{v}.split({_lit_char(env)}, {_lit_int(env, 1, 2)})"])
    if kind == 1:
        env.use("str", "rsplit")
        return f"{v}.rsplit({_lit_char(env)}, {_lit_int(env, 1, 3)})"
    if kind == 2:
        env.use("str", "splitlines")
        return f"{v}.splitlines()"
    if kind == 3:
        m = r.choice(["partition", "rpartition"])
        env.use("str", m)
        return f"list({v}.{m}({_lit_char(env)}))"
    if kind == 4:
        return f"sorted({v})"
    return f"list({v})"


def _list_str_from_list_str(env: Env, v: str) -> str:
    r = env.rng
    kind = r.randrange(4)
    if kind == 0:
        env.use("list", "copy")
        return f"{v}.copy()"
    if kind == 1:
        m = r.choice(["upper", "lower", "capitalize", "title", "strip", "swapcase"])
        env.use("str", m)
        return f"[w.{m}() for w in {v}]"
    if kind == 2:
        m = r.choice(["isalpha", "islower", "istitle", "isdigit"])
        env.use("str", m)
        return f"[w for w in {v} if {'not ' if r.random() < 0.3 else ''}w.{m}()]"
    return r.choice([f"{v}[::-1]", f"sorted({v})", f"{v}[1:]", f"{v} + [{_lit_str(env)}]", f"sorted({v}, key=len)"])


def _list_str_from_dict(env: Env, v: str) -> str:
    r = env.rng
    if r.random() < 0.5:
        env.use("dict", "keys")
        return r.choice([f"list({v}.keys())", f"sorted({v}.keys())"])
    env.use("dict", "items")
    return f"[k for k, x in {v}.items() if x > {_lit_int(env, 0, 5)}]"


def _list_int_from_list_int(env: Env, v: str) -> str:
    r = env.rng
    if r.random() < 0.2:
        env.use("list", "copy")
        return f"{v}.copy()"
    return r.choice([f"{v}[::-1]", f"sorted({v})", f"sorted({v}, reverse=True)", f"{v}[1:]", f"{v}[::2]",
                     f"[x * {_lit_int(env, 2, 3)} for x in {v}]", f"[x for x in {v} if x % 2 == {r.randint(0, 1)}]",
                     f"[x + {_lit_int(env, 1, 4)} for x in {v}]", f"{v} + [{_lit_int(env)}]", f"[x for x in {v} if x > {_lit_int(env)}]"])


def _list_int_from_str(env: Env, v: str) -> str:
    r = env.rng
    if r.random() < 0.4:
        env.use("str", "count")
        return f"[{v}.count(c) for c in {v}]"
    if r.random() < 0.5:
        env.use("str", "split")
        return f"[len(w) for w in {v}.split()]"
    return f"[i for i, c in enumerate({v}) if c == {_lit_char(env)}]"


def _list_int_from_dict(env: Env, v: str) -> str:
    env.use("dict", "values")
    return env.rng.choice([f"list({v}.values())", f"sorted({v}.values())"])


def _list_int_from_list_str(env: Env, v: str) -> str:
    return env.rng.choice([f"[len(w) for w in {v}]", f"[i for i, w in enumerate({v}) if len(w) > {_lit_int(env, 1, 4)}]"])


def _dict_from_str(env: Env, v: str) -> str:
    r = env.rng
    if r.random() < 0.5:
        env.use("dict", "fromkeys")
        return r.choice([f"dict.fromkeys({v}, {_lit_int(env)})", f"dict.fromkeys({v}.split(), {_lit_int(env)})"]) if True else ""
    env.use("str", "count")
    return f"{{c: {v}.count(c) for c in {v}}}"


def _dict_from_list_str(env: Env, v: str) -> str:
    if env.rng.random() < 0.5:
        env.use("dict", "fromkeys")
        return f"dict.fromkeys({v}, {_lit_int(env)})"
    return f"{{w: len(w) for w in {v}}}"


def _dict_from_list_int(env: Env, v: str) -> str:
    return env.rng.choice([f"{{str(x): x for x in {v}}}", f"{{str(i): x for i, x in enumerate({v})}}"])


def _dict_from_dict(env: Env, v: str) -> str:
    r = env.rng
    if r.random() < 0.4:
        env.use("dict", "copy")
        return f"{v}.copy()"
    env.use("dict", "items")
    return r.choice([f"dict(sorted({v}.items()))", f"{{k: x * 2 for k, x in {v}.items()}}", f"{{k: x for k, x in {v}.items() if x % 2 == 0}}"])


PRODUCERS: dict[str, list[tuple[str, Producer]]] = {
    S: [(S, _str_from_str), (S, _str_from_str), (S, _str_from_str), (LS, _str_from_list_str), (LI, _str_from_list_int), (D, _str_from_dict)],
    I: [(S, _int_from_str), (S, _int_from_str), (LI, _int_from_list_int), (LS, _int_from_list_str), (D, _int_from_dict), (I, _int_from_int)],
    B: [(S, _bool_from_str), (S, _bool_from_str), (LI, _bool_from_list_int), (LS, _bool_from_list_str), (D, _bool_from_dict), (I, _bool_from_int)],
    LS: [(S, _list_str_from_str), (S, _list_str_from_str), (LS, _list_str_from_list_str), (D, _list_str_from_dict)],
    LI: [(LI, _list_int_from_list_int), (LI, _list_int_from_list_int), (S, _list_int_from_str), (D, _list_int_from_dict), (LS, _list_int_from_list_str)],
    D: [(S, _dict_from_str), (LS, _dict_from_list_str), (LI, _dict_from_list_int), (D, _dict_from_dict), (D, _dict_from_dict)],
}


def expr(env: Env, typ: str, prefer: str | None = None) -> str | None:
    """Code of an expression of type `typ` built from variables in scope (from `prefer` if it fits)."""
    options = [(src, fn) for src, fn in PRODUCERS[typ] if env.of(src)]
    if prefer is not None:
        preferred = [(src, fn) for src, fn in options if env.types.get(prefer) == src]
        if preferred and env.rng.random() < 0.8:
            src, fn = env.rng.choice(preferred)
            env.used.add(prefer)
            return fn(env, prefer)
    if not options:
        return None
    src, fn = env.rng.choice(options)
    name = env.pick(src)
    assert name is not None
    return fn(env, name)


def _elem_expr(env: Env, typ: str, prefer: str | None = None) -> str:
    """An element for a list of `typ` (int or str): an expression or a literal."""
    if env.rng.random() < 0.6:
        before = set(env.methods)
        code = expr(env, typ, prefer)
        if code is not None and " if " not in code:
            return code
        env.methods = before
    return _lit_int(env) if typ == I else _lit_str(env)


# ---------------------------------------------------------------- statements
def mutate(env: Env, target: str | None = None, prefer: str | None = None) -> list[str] | None:
    """One statement that changes an existing, non-protected variable (in place or by reassignment)."""
    r = env.rng
    candidates = env.mutable(S, I, LI, LS, D)
    if target is None:
        if not candidates:
            return None
        target = r.choice(candidates)
    typ = env.types[target]
    env.used.add(target)
    if typ in (LI, LS):
        elem = I if typ == LI else S
        kind = r.randrange(10)
        if kind <= 2:
            env.use("list", "append")
            return [f"{target}.append({_elem_expr(env, elem, prefer)})"]
        if kind == 3:
            env.use("list", "insert")
            return [f"{target}.insert({r.choice(['0', '1', f'len({target}) // 2', '-1'])}, {_elem_expr(env, elem, prefer)})"]
        if kind == 4:
            env.use("list", "extend")
            others = [v for v in env.of(typ) if v != target]
            src = r.choice(others) if others and r.random() < 0.6 else (f"[{_lit_int(env)}, {_lit_int(env)}]" if typ == LI else f"[{_lit_str(env)}]")
            return [f"{target}.extend({src})"]
        if kind == 5:
            env.use("list", "pop")
            return [f"if {target}:", f"    {target}.pop({r.choice(['', '0', '-1'])})"]
        if kind == 6:
            env.use("list", "remove")
            e = _lit_int(env) if typ == LI else _lit_str(env)
            return [f"if {e} in {target}:", f"    {target}.remove({e})"]
        if kind == 7:
            env.use("list", "reverse")
            return [f"{target}.reverse()"]
        if kind == 8:
            env.use("list", "sort")
            return [r.choice([f"{target}.sort()", f"{target}.sort(reverse=True)"] + ([f"{target}.sort(key=len)"] if typ == LS else []))]
        if r.random() < 0.5:
            env.use("list", "clear")
            return [f"if len({target}) > {_lit_int(env, 3, 6)}:", f"    {target}.clear()"]
        return [f"if {target}:", f"    {target}[0] = {_elem_expr(env, elem, prefer)}"]
    if typ == D:
        kind = r.randrange(8)
        key = repr(r.choice(values.WORDS)) if prefer is None or env.types.get(prefer) != S else prefer
        if kind <= 1:
            if r.random() < 0.5:
                env.use("dict", "get")
                return [f"{target}[{key}] = {target}.get({key}, 0) + 1"]
            return [f"{target}[{key}] = {_elem_expr(env, I, prefer)}"]
        if kind == 2:
            env.use("dict", "setdefault")
            return [f"{target}.setdefault({key}, {_elem_expr(env, I, prefer)})"]
        if kind == 3:
            env.use("dict", "update")
            others = [v for v in env.of(D) if v != target]
            src = r.choice(others) if others and r.random() < 0.5 else f"{{{key}: {_lit_int(env)}}}"
            return [f"{target}.update({src})"]
        if kind == 4:
            env.use("dict", "pop")
            return [f"{target}.pop({key}, None)"]
        if kind == 5:
            env.use("dict", "popitem")
            return [f"if {target}:", f"    {target}.popitem()"]
        if kind == 6 and r.random() < 0.4:
            env.use("dict", "clear")
            return [f"if len({target}) > {_lit_int(env, 2, 5)}:", f"    {target}.clear()"]
        return [f"{target}[{key}] = len({target})"]
    if typ == S:
        if r.random() < 0.3:
            return [r.choice([f"{target} += {_elem_expr(env, S, prefer)}", f"{target} = {_elem_expr(env, S, prefer)} + {target}"])]
        code = expr(env, S, prefer=target if prefer is None or r.random() < 0.5 else prefer)
        return [f"{target} = {code}"] if code else None
    # int
    if prefer is not None and env.types.get(prefer) == I and r.random() < 0.5:
        return [f"{target} += {prefer}"]
    return [r.choice([f"{target} += 1", f"{target} -= 1", f"{target} += {_elem_expr(env, I, prefer)}", f"{target} *= 2"])]


def _indent(lines: list[str], n: int = 1) -> list[str]:
    return ["    " * n + line for line in lines]


def _assign_new(env: Env) -> list[str] | None:
    typ = env.rng.choice([S, S, I, LI, LS, D, B])
    code = expr(env, typ)
    if code is None:
        return None
    name = env.fresh(typ)
    env.types[name] = typ
    env.last.append(name)
    return [f"{name} = {code}"]


def _accumulator_loop(env: Env) -> list[str] | None:
    """``acc = <empty>`` then ``for <el> in <collection>:`` with an (often conditional) update of acc."""
    r = env.rng
    sources = env.of(S, LI, LS, D)
    if not sources:
        return None
    src = r.choice([v for v in sources if v in env.params and v not in env.used] or sources)
    env.used.add(src)
    stype = env.types[src]
    acc_type = r.choice([S, I, LI, LS, D])
    acc = env.fresh(acc_type)
    init = {S: "''", I: "0", LI: "[]", LS: "[]", D: "{}"}[acc_type]
    loop_vars: dict[str, str] = {}
    if stype == D:
        env.use("dict", "items")
        k, v = env.fresh(S, _LOOP_NAMES), env.fresh(I, _LOOP_NAMES)
        if k == v:
            v = v + "2"
        header = f"for {k}, {v} in {src}.items():"
        loop_vars = {k: S, v: I}
        focus = r.choice([k, v])
    elif r.random() < 0.25:
        i = r.choice(["i", "j", "idx"])
        i = i if i not in env.types else env.fresh(I, _LOOP_NAMES)
        if r.random() < 0.5:
            header = f"for {i} in range(len({src})):"
            loop_vars = {i: I}
        else:
            el = env.fresh(I if stype == LI else S, _LOOP_NAMES)
            while el == i:
                el = el + "2"
            header = f"for {i}, {el} in enumerate({src}):"
            loop_vars = {i: I, el: I if stype == LI else S}
        focus = r.choice(list(loop_vars))
    else:
        el = env.fresh(I if stype == LI else S, _LOOP_NAMES)
        header = f"for {el} in {src}:"
        loop_vars = {el: I if stype == LI else S}
        focus = el
    env.types[acc] = acc_type
    env.protected.add(src)
    env.types.update(loop_vars)
    if "range(len(" in header:
        elem = f"{src}[{focus}]"
        loop_vars[elem] = env.types[elem] = I if stype == LI else S
        env.protected.add(elem)
        focus = elem
    try:
        update = _acc_update(env, acc, focus)
        if update is None:
            return None
        body: list[str]
        shape = r.random()
        if shape < 0.06:
            body = [f"if {expr(env, B, prefer=focus)}:", "    break"] + update
        elif shape < 0.6:
            cond = expr(env, B, prefer=focus)
            body = [f"if {cond}:"] + _indent(update)
            if r.random() < 0.3:
                other = _acc_update(env, acc, focus) if r.random() < 0.5 else mutate(env, target=acc, prefer=focus)
                if other:
                    body += ["else:"] + _indent(other)
        else:
            body = update
    finally:
        env.protected.discard(src)
        for name in loop_vars:
            env.types.pop(name, None)
            env.protected.discard(name)
    env.last.append(acc)
    return [f"{acc} = {init}", header] + _indent(body)


def _acc_update(env: Env, acc: str, focus: str) -> list[str]:
    """A statement that adds something derived from the loop element `focus` to the accumulator."""
    r = env.rng
    ftype = env.types[focus]
    typ = env.types[acc]
    if typ in (LI, LS):
        elem_type = I if typ == LI else S
        if ftype == elem_type and r.random() < 0.5:
            value = focus
        elif elem_type == S and ftype == I:  # no str producer reads an int: convert the element itself
            value = r.choice([f"str({focus})", f"str({focus} * 2)", f"'x' * {focus}"])
        else:
            value = expr(env, elem_type, prefer=focus) or focus
        if r.random() < 0.75:
            env.use("list", "append")
            return [f"{acc}.append({value})"]
        env.use("list", "insert")
        return [f"{acc}.insert(0, {value})"]
    if typ == S:
        if ftype == I:
            value = r.choice([f"str({focus})", f"str({focus} % 10)"])
        else:
            value = focus if r.random() < 0.5 else (expr(env, S, prefer=focus) or f"str({focus})")
        return [r.choice([f"{acc} += {value}", f"{acc} = {value} + {acc}"])]
    if typ == I:
        if ftype == I:
            return [r.choice([f"{acc} += {focus}", f"{acc} += 1", f"{acc} = max({acc}, {focus})"])]
        value = expr(env, I, prefer=focus) or "1"
        return [r.choice([f"{acc} += {value}", f"{acc} += 1"])]
    key = focus if ftype == S else f"str({focus})"
    if r.random() < 0.5:
        env.use("dict", "get")
        return [f"{acc}[{key}] = {acc}.get({key}, 0) + 1"]
    if r.random() < 0.5:
        env.use("dict", "setdefault")
        return [f"{acc}.setdefault({key}, {expr(env, I, prefer=focus) or '0'})"]
    return [f"{acc}[{key}] = {expr(env, I, prefer=focus) or 'len(' + acc + ')'}"]


def _if_block(env: Env) -> list[str] | None:
    cond = expr(env, B)
    then = mutate(env)
    if cond is None or then is None:
        return None
    lines = [f"if {cond}:"] + _indent(then)
    if env.rng.random() < 0.4:
        other = mutate(env)
        if other:
            lines += ["else:"] + _indent(other)
    return lines


def _early_return(env: Env) -> list[str] | None:
    cond = expr(env, B)
    if cond is None or not env.types:
        return None
    value = env.rng.choice(list(env.types))
    env.used.add(value)
    return [f"if {cond}:", f"    return {value}"]


def _while_loop(env: Env) -> list[str] | None:
    r = env.rng
    lists = env.mutable(LI, LS)
    strs = env.mutable(S)
    if lists and r.random() < 0.5:
        v = r.choice(lists)
        env.used.add(v)
        env.use("list", "pop")
        elem = f"{v}[-1]"
        cond = r.choice([f"{elem} > {_lit_int(env)}", f"{elem} % 2 == 0"]) if env.types[v] == LI else r.choice([f"{elem}.isalpha()", f"len({elem}) < {_lit_int(env, 2, 5)}", f"{elem}.islower()"])
        return [f"while {v} and {cond}:", f"    {v}.pop()"]
    if strs:
        v = r.choice(strs)
        env.used.add(v)
        m = r.choice(["startswith", "endswith"])
        env.use("str", m)
        lit = values.rand_small_str(r)
        cut = f"{v}[{len(lit)}:]" if m == "startswith" else f"{v}[:-{len(lit)}]"
        return [f"while {v}.{m}({lit!r}):", f"    {v} = {cut}"]
    ints = env.mutable(I)
    if ints:
        v = r.choice(ints)
        env.used.add(v)
        acc = env.fresh(I)
        env.types[acc] = I
        env.last.append(acc)
        return [f"{acc} = 0", f"while {v} > 0:", f"    {acc} += {v} % {_lit_int(env, 2, 10)}", f"    {v} //= {_lit_int(env, 2, 4)}"]
    return None


STATEMENTS: tuple[tuple[Callable[[Env], list[str] | None], float], ...] = (
    (_assign_new, 0.25),
    (_accumulator_loop, 0.3),
    (mutate, 0.2),
    (_if_block, 0.12),
    (_while_loop, 0.07),
    (_early_return, 0.06),
)


def _return_line(env: Env) -> str:
    r = env.rng
    if env.last and r.random() < 0.75:
        name = env.last[-1]
        if r.random() < 0.2 and len(env.last) > 1:
            return f"return {env.last[-2]}, {name}"
        return f"return {name}"
    typ = r.choice([S, I, LI, LS, B])
    code = expr(env, typ)
    return f"return {code}" if code else f"return {r.choice(list(env.types))}"


def _random_arg(rng: random.Random, typ: str) -> object:
    if typ == S:
        return values.rand_str(rng)
    if typ == I:
        return values.rand_int(rng, -3, 15)
    if typ == LI:
        return values.rand_list_int(rng)
    if typ == LS:
        return values.rand_list_str(rng)
    return values.rand_dict(rng)


@dataclass(frozen=True)
class CruxFunction:
    """A generated function: its source (``def f(...)``), the call line, and the methods it uses."""

    function: str
    call: str
    methods: frozenset[tuple[str, str]]

    @property
    def program(self) -> str:
        return f"{self.function}\n\n{self.call}\n"


def _try_generate(rng: random.Random) -> CruxFunction | None:
    env = Env(rng)
    n_params = rng.choices([1, 2, 3], weights=[0.5, 0.35, 0.15])[0]
    arg_values: list[object] = []
    for _ in range(n_params):
        typ = rng.choices([S, I, LI, LS, D], weights=[0.42, 0.14, 0.2, 0.1, 0.14])[0]
        name = env.fresh(typ, _NAMES)
        env.types[name] = typ
        env.params.append(name)
        arg_values.append(_random_arg(rng, typ))
    body: list[str] = []
    target_len = rng.randint(MIN_CHARS, 260)
    funcs, weights = zip(*STATEMENTS)
    attempts = 0
    while len("\n".join(body)) < target_len and attempts < 12:
        attempts += 1
        before = (set(env.methods), dict(env.types), set(env.used), list(env.last))
        stmt = rng.choices(funcs, weights=weights)[0](env)
        if stmt:
            body += stmt
        else:  # forget what the abandoned statement drew
            env.methods, env.types, env.used, env.last = before
    body.append(_return_line(env))
    if any(p not in env.used for p in env.params):
        return None
    source = f"def f({', '.join(env.params)}):\n" + "\n".join(_indent(body))
    if not MIN_CHARS <= len(source) <= MAX_CHARS:
        return None
    call = f"result = f({', '.join(repr(a) for a in arg_values)})"
    # producers sometimes draw alternatives they then drop: keep the methods that made it into the source
    used = {(owner, m) for owner, m in env.methods if f".{m}(" in source or (m == "maketrans" and ".maketrans(" in source)}
    return CruxFunction(source, call, frozenset(used))


def generate_function(rng: random.Random) -> CruxFunction:
    """A CruxEval-style function (75-300 characters) with random arguments, drawn from `rng`."""
    while True:
        fn = _try_generate(rng)
        if fn is not None:
            return fn
