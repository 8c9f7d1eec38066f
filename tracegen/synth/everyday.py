"""Everyday programs: 10-40 lines of Python written the way people write it.

A program is composed, not picked from templates. `generate_everyday(rng)` draws:

- a *domain* (`everyday_domains`: shop items with float prices, students with scores, readings,
  tasks, trip legs, expenses, parts, sensor samples) and which of its fields the records carry;
- a *representation* of a record: a dict, a tuple, a ``namedtuple``, a ``@dataclass`` or a plain
  class with ``__init__``, attributes and a method (its instances show as debugpy shows them,
  ``<__main__.Item object at 0x?>``);
- how the data arrives: a literal list, text lines parsed with ``split`` and ``float``/``int``
  under ``try/except ValueError`` (one line is malformed), or parallel lists put together with ``zip``;
- a *layout*: module-level code, or a ``main()`` function, with some steps moved into helper
  functions (which may call other helpers; several results come back as a tuple and are unpacked);
- 3-7 *steps* (`everyday_steps`), each written in one of several styles, that compute what people
  compute: totals and means over floats, ``min``/``max``/``sorted(key=...)``, a ``None``
  placeholder, groups in a ``defaultdict`` or a dict of lists, a ``Counter``, sets and their
  operators, ``enumerate`` with f-strings or ``str.format``, ``zip``, lookups under
  ``try/except/finally``, ``math``, a ``deque`` window, a container class, module constants.

Every program runs deterministically and ends (tests record samples). `EverydayProgram.features`
names what a program exercises, for coverage tests.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from tracegen.synth.everyday_domains import DOMAINS
from tracegen.synth.everyday_steps import REPRESENTATIONS, STEPS, Ctx, Step, data_block, record_defs
from tracegen.synth.multi import Names

MAX_LINES = 40
MIN_LINES = 10


@dataclass(frozen=True)
class EverydayProgram:
    """A generated everyday program and the features it exercises."""

    source: str
    features: frozenset[str]


def _indent(lines: list[str], by: str = "    ") -> list[str]:
    return [by + line if line else line for line in lines]


def _as_helper(ctx: Ctx, step: Step) -> tuple[list[str], list[str]]:
    """Move a step into a function of its inputs returning its outputs: (the def, the call lines)."""
    name = ctx.names.get(*step.helper_names)
    params = ", ".join(step.uses)
    body = [*step.lines, "return " + ", ".join(step.makes)]
    call = f"{', '.join(step.makes)} = {name}({params})"
    ctx.tags.add("helpers")
    if len(step.makes) > 1:
        ctx.tags.update({"tuple", "unpack"})
    return [f"def {name}({params}):", *_indent(body)], [call]


def generate_everyday(rng: random.Random) -> EverydayProgram:
    """One everyday program (10-40 lines) drawn from `rng`; the same generator state gives the same program."""
    while True:  # an attempt fails only when its first steps overflow a small line budget: rare
        program = _attempt(rng)
        if program is not None:
            return program


def _attempt(rng: random.Random) -> EverydayProgram | None:
    domain = rng.choice(DOMAINS)
    fields = ["label", "amount"]
    if rng.random() < 0.8:
        fields.append("count")
    if rng.random() < 0.7:
        fields.append("group")
    ctx = Ctx(rng, Names(rng), domain, rng.choice(REPRESENTATIONS), tuple(fields))
    in_main = rng.random() < 0.4
    ctx.defs.extend(record_defs(ctx))
    body = data_block(ctx)
    helpers: list[list[str]] = []
    budget = rng.randint(18, MAX_LINES)
    funcs = [f for f, _ in STEPS]
    weights = [w for _, w in STEPS]
    wanted = rng.randint(3, 7)
    done = 0
    for _ in range(3 * len(funcs)):
        if done >= wanted:
            break
        snap = ctx.snapshot()
        step = rng.choices(funcs, weights=weights)[0](ctx)
        if step is None:
            ctx.restore(snap)
            continue
        definition: list[str] = []
        lines = list(step.lines)
        if step.uses and step.helper_names and rng.random() < 0.35:
            definition, lines = _as_helper(ctx, step)
            # products the helper made for itself stay inside it
            for kind, var in list(ctx.products.items()):
                if kind not in snap["products"] and var not in step.makes:  # type: ignore[operator]
                    del ctx.products[kind]
        trial_helpers = helpers + ([definition] if definition else [])
        if _assemble(ctx, trial_helpers, body + lines, in_main).count("\n") > budget:
            ctx.restore(snap)
            if done >= 2:
                break
            continue
        helpers, body = trial_helpers, body + lines
        done += 1
    if done < 2:
        return None
    if in_main:
        ctx.tags.add("main")
    source = _assemble(ctx, helpers, body, in_main)
    if not MIN_LINES <= source.count("\n") <= MAX_LINES:
        return None
    ctx.tags.add(ctx.rep)
    return EverydayProgram(source, frozenset(ctx.tags))


def _assemble(ctx: Ctx, helpers: list[list[str]], body: list[str], in_main: bool) -> str:
    parts: list[str] = []
    if ctx.imports:
        parts.append("\n".join(sorted(ctx.imports, key=lambda s: (s.startswith("from"), s))))
    if ctx.consts:
        parts.append("\n".join(ctx.consts))
    parts.extend(ctx.defs)
    parts.extend("\n".join(h) for h in helpers)
    if in_main:
        parts.append("\n".join(["def main():", *_indent(body)]))
        parts.append("main()")
    else:
        parts.append("\n".join(body))
    return "\n\n".join(parts) + "\n"


__all__ = ["EverydayProgram", "generate_everyday", "MAX_LINES", "MIN_LINES"]
