"""Does static control flow (`model.static.flow`) contain every real next stop? And how small is the set?

Records programs with tracegen's fast recorder (which reproduces debugpy's stops), walks seeded
action scripts (the training policies, `tracegen.sampling.sample_forward`, plus one all-stepIn and
one all-next script per program) and checks, for every forward step, that the recorded stop lies in
`model.static.flow.next_locations(...)` (the superset property). Reports the miss rate and, for `step`
stops, the mean number of lines the top frame may stop on next to the program's executable lines.
Also checks every recorded first stop of a new call against `model.static.entry_locals` (its locals are
the function's parameters and free variables, in debugpy's order), every recorded return value
against `model.static.return_kinds`, and every recorded ``inv_step_call`` answer whose arguments
`model.static.param_kinds` narrows against that grammar, every recorded frame's names against
`model.static.frame_names`, and every recorded stack against `model.static.call_chain`.

    .venv/bin/python -m bench.flow_coverage --synth 500 --seed 0 [--examples examples tests/programs] [--show 10]
"""
from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from model.static.flow import FlowUnavailable, shape_allows, next_locations, program_flow
from protocol.debugger import Action, ActionKind, State, StopReason


@dataclass
class Coverage:
    programs: int = 0
    skipped: int = 0  # could not be recorded
    unconstrained_programs: int = 0
    steps: int = 0
    misses: list[dict] = field(default_factory=list)
    by_action: Counter = field(default_factory=Counter)
    miss_by_action: Counter = field(default_factory=Counter)
    allowed_lines: int = 0  # sum over step stops of the allowed top lines
    constrained_steps: int = 0  # step stops with a finite allowed set
    executable_lines: int = 0  # sum over the same stops of the program's executable lines
    unconstrained_steps: int = 0
    entry_stops: int = 0  # first stops of a new call that `model.static.entry_locals` has a spec for
    entry_misses: list[dict] = field(default_factory=list)
    returns: int = 0  # recorded return values of functions `model.static.return_kinds` types
    return_misses: list[dict] = field(default_factory=list)
    typed_calls: int = 0  # inv_step_call answers whose arguments `model.static.param_kinds` narrows
    named_frames: int = 0  # recorded frames whose visible names `model.static.frame_names` knows
    stacks: int = 0  # recorded stacks of two or more frames (`model.static.call_chain`)
    chain_misses: list[dict] = field(default_factory=list)
    name_misses: list[dict] = field(default_factory=list)
    typed_call_misses: list[dict] = field(default_factory=list)
    grammar_states: int = 0  # recorded forward states checked against the whole decoding constraint
    grammar_misses: list[dict] = field(default_factory=list)
    entries_known: int = 0  # first stops of a call whose parameters `model.static.call_args` knows (some or all)
    kept_values: int = 0  # values `model.static.line_effects` says a step keeps
    required_returns: int = 0  # step stops that must show a return value (`FlowSet.returned`); misses count as misses

    @property
    def miss_rate(self) -> float:
        return len(self.misses) / max(1, self.steps)

    def line(self) -> str:
        mean_allowed = self.allowed_lines / max(1, self.constrained_steps)
        mean_lines = self.executable_lines / max(1, self.constrained_steps)
        per_action = ", ".join(f"{k} {self.miss_by_action[k]}/{n}" for k, n in sorted(self.by_action.items()))
        return (f"{self.programs} programs ({self.skipped} not recordable, {self.unconstrained_programs} not analysable), "
                f"{self.steps} forward steps, misses {len(self.misses)} ({100 * self.miss_rate:.3f}%) [{per_action}]; "
                f"step stops: {self.constrained_steps} constrained, {self.unconstrained_steps} unconstrained; "
                f"mean allowed top lines {mean_allowed:.2f} vs {mean_lines:.1f} executable lines; "
                f"first stops of a call: {self.entry_stops} checked, {len(self.entry_misses)} with other locals; "
                f"typed return values: {self.returns} checked, {len(self.return_misses)} of another kind; "
                f"typed inverse calls: {self.typed_calls} checked, {len(self.typed_call_misses)} outside the grammar; "
                f"frames with known names: {self.named_frames} checked, {len(self.name_misses)} showing others; "
                f"stacks: {self.stacks} checked, {len(self.chain_misses)} not a chain of calls; "
                f"whole states: {self.grammar_states} checked ({self.entries_known} calls with known arguments, "
                f"{self.kept_values} kept values, {self.required_returns} return values required), {len(self.grammar_misses)} refused by the decoding constraint")  # fmt: skip


def scripts_for(trace, rng: random.Random, per_program: int, max_steps: int) -> Iterable[tuple[list[int], list[State], list[Action]]]:  # noqa: ANN001
    """(breakpoints, states, actions) of seeded policy scripts and one all-stepIn and one all-next script."""
    from tracegen.fast import replay_to_end
    from tracegen.sampling import sample_forward

    for _ in range(per_program):
        traj = sample_forward(trace, rng, max_steps)
        yield list(traj.breakpoints), traj.states, [s.action for s in traj.steps]
    for kind in (ActionKind.STEP_INTO, ActionKind.STEP_OVER):
        actions = [Action(kind=kind)] * max_steps
        states = replay_to_end(trace, actions[:max_steps])
        yield [], states[: max_steps + 1], actions


def check_program(source: str, rng: random.Random, cov: Coverage, *, per_program: int = 6, max_steps: int = 40, name: str = "") -> None:
    from tracegen.fast import RecordError, record_program

    try:
        trace = record_program(source)
    except (RecordError, OSError, ValueError):
        cov.skipped += 1
        return
    if not trace.events:
        cov.skipped += 1
        return
    cov.programs += 1
    try:
        program_flow(source)
    except FlowUnavailable:
        cov.unconstrained_programs += 1
    executable = len(trace.code_lines)
    _check_inverse_calls(source, trace, cov, name)
    for breakpoints, states, actions in scripts_for(trace, rng, per_program, max_steps):
        for previous, action, state in zip(states, actions, states[1:]):
            flow = next_locations(source, previous, action, breakpoints)
            cov.steps += 1
            cov.by_action[action.kind.value] += 1
            if not flow.allows(previous, state):
                cov.miss_by_action[action.kind.value] += 1
                cov.misses.append({"program": name, "source": source, "action": str(action), "breakpoints": breakpoints,
                                   "previous": [(f.name, f.line) for f in previous.frames], "reason": state.reason.value,
                                   "next": [(f.name, f.line) for f in state.frames], "flow": flow})  # fmt: skip
            _check_entry(source, previous, state, cov, name)
            _check_return(source, state, cov, name)
            _check_names(source, state, cov, name)
            _check_chain(source, state, cov, name)
            _check_grammar(source, previous, action, breakpoints, state, cov, name)
            if state.reason is StopReason.STEP:
                new = [(f.name, f.line) for f in reversed(state.frames)]
                old = [(f.name, f.line) for f in reversed(previous.frames)]
                cov.required_returns += any(flow.must_return(s) and shape_allows(s, old, new) for s in flow.step)
                allowed = flow.top_lines(StopReason.STEP)
                if allowed is None:
                    cov.unconstrained_steps += 1
                else:
                    cov.constrained_steps += 1
                    cov.allowed_lines += len(allowed)
                    cov.executable_lines += executable


def _check_grammar(source: str, previous: State, action: Action, breakpoints: list[int], state: State, cov: Coverage,
                   name: str) -> None:  # fmt: skip
    """The recorded state, rendered as the model writes it, must be a text the session's decoding constraint allows."""
    from model.prompt import language as lang
    from model.static.call_args import entry_values
    from model.decode.constraints import state_constraint
    from model.static.line_effects import kept_locals

    before, after = lang.canonical_state(previous, source), lang.canonical_state(state, source)
    constraint = state_constraint(source, before, action=action, breakpoints=breakpoints, reprs=True)
    text = lang.render_state(after, before)[: -len(lang.STATE_END)]
    cov.grammar_states += 1
    if action.kind is ActionKind.STEP_INTO:
        cov.entries_known += len(entry_values(source, before))
    if action.kind in (ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN):
        cov.kept_values += sum(len(k.kept) for k in kept_locals(source, before, action.kind).values())
    if not constraint.complete(text):
        cov.grammar_misses.append({"program": name, "action": action.kind.value, "text": text[:300]})


def _check_entry(source: str, previous: State, state: State, cov: Coverage, name: str) -> None:
    """A new call's first stop shows what `model.static.entry_locals` says (parameters, free variables)."""
    from model.static.entry_locals import entry_locals
    from model.prompt.language import _continues

    if state.finished or not state.frames:
        return
    new, old = list(reversed(state.frames)), list(reversed(previous.frames))
    top = new[-1]
    spec = entry_locals(source).get((top.name, top.line))
    if spec is None or top.file is not None or _continues(new, old, len(new) - 1):
        return
    cov.entry_stops += 1
    if not spec.allows(list(top.locals)):
        cov.entry_misses.append({"program": name, "frame": (top.name, top.line), "locals": list(top.locals), "spec": spec})


def _check_return(source: str, state: State, cov: Coverage, name: str) -> None:
    """A recorded return value has a kind `model.static.return_kinds` allows for its function."""
    from model.static.return_kinds import return_kinds
    from model.static.value_kinds import repr_fits

    if state.return_value is None or any(f.file is not None for f in state.frames):
        return
    kinds = return_kinds(source).get(state.return_value.name.rsplit(".", 1)[-1])
    if kinds is None:
        return
    cov.returns += 1
    if not repr_fits(state.return_value.value, kinds):
        cov.return_misses.append({"program": name, "function": state.return_value.name, "value": state.return_value.value[:60],
                                  "kinds": sorted(kinds)})  # fmt: skip


def _check_names(source: str, state: State, cov: Coverage, name: str) -> None:
    """Every frame of the program shows only names `model.static.frame_names` says are visible on its line (the top
    frame: `frame_names`; a frame below it, waiting on a call: `calling_names`)."""
    from model.static.frame_names import calling_names, frame_names

    top, below = frame_names(source), calling_names(source)
    for depth, frame in enumerate(state.frames):
        names = top if depth == 0 else below
        visible = names.get((frame.name, frame.line)) if frame.file is None else None
        if visible is None:
            continue
        cov.named_frames += 1
        if not set(frame.locals) <= visible:
            cov.name_misses.append({"program": name, "frame": (frame.name, frame.line), "extra": sorted(set(frame.locals) - visible)})


def _check_chain(source: str, state: State, cov: Coverage, name: str) -> None:
    """A recorded stack is a chain of calls (`model.static.call_chain`)."""
    from model.prompt import language as lang
    from model.static.call_chain import chain_problem

    if state.finished or len(state.frames) < 2:
        return
    cov.stacks += 1
    problem = chain_problem(source, lang.render_state(state, None))
    if problem:
        cov.chain_misses.append({"program": name, "problem": problem})


def _check_inverse_calls(source: str, trace, cov: Coverage, name: str) -> None:  # noqa: ANN001
    """Every recorded inv_step_call answer whose arguments `model.static.param_kinds` narrows fits the grammar."""
    import regex

    from model.prompt import language as lang
    from model.static.entry_locals import inverse_call_regex
    from tracegen.trees import InverseChain

    chain = InverseChain(trace, max_states=400)
    for k in range(len(chain)):
        j = chain.inverse(k, ActionKind.INV_STEP_CALL)
        later = chain.states[k]
        if j is None or later.return_value is None:
            continue
        pattern = inverse_call_regex(source, later)
        if pattern is None or pattern == inverse_call_regex(source, later, typed=False):
            continue
        cov.typed_calls += 1
        text = lang.render_state(chain.states[j], later)
        if not regex.fullmatch(pattern, text, regex.DOTALL):
            cov.typed_call_misses.append({"program": name, "function": later.return_value.name, "state": text[:200]})


def synth_sources(count: int, seed: int) -> list[tuple[str, str]]:
    from tracegen.synth import generate_program

    rng = random.Random(seed)
    return [(f"synth-{seed}-{i}", generate_program(rng).source) for i in range(count)]


def file_sources(folders: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.py")):
            out.append((str(path), path.read_text(encoding="utf-8", errors="replace")))
    return out


# (label, Coverage field, the record's fields printed after the program) of the other checks' misses
MISS_LINES = (("ENTRY", "entry_misses", ("frame", "locals", "spec")), ("RETURN", "return_misses", ("function", "value", "kinds")),
              ("CHAIN", "chain_misses", ("problem",)), ("NAMES", "name_misses", ("frame", "extra")),
              ("CALL", "typed_call_misses", ("function", "state")), ("GRAMMAR", "grammar_misses", ("action", "text")))  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synth", type=int, default=500, help="synthetic programs (tracegen.synth)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--examples", nargs="*", default=["examples", "tests/programs"], help="folders of .py programs")
    parser.add_argument("--per-program", type=int, default=6, help="policy scripts per program")
    parser.add_argument("--max-steps", type=int, default=40)
    parser.add_argument("--show", type=int, default=10, help="misses to print")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    for label, sources in (("files", file_sources(args.examples)), ("synth", synth_sources(args.synth, args.seed))):
        cov = Coverage()
        for name, source in sources:
            check_program(source, rng, cov, per_program=args.per_program, max_steps=args.max_steps, name=name)
        print(f"{label}: {cov.line()}")
        for miss in cov.misses[: args.show]:
            print(f"  MISS {miss['program']} {miss['action']} bps={miss['breakpoints']} {miss['previous']} -> {miss['reason']} {miss['next']}")
        for kind, misses, fields in MISS_LINES:
            for miss in getattr(cov, misses)[: args.show]:
                print(f"  {kind} MISS {miss['program']} " + " ".join(str(miss[f]) for f in fields))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
