"""Constrained decoding: a predicted state must be well formed.

`RegexConstraint` is the one mechanism: a regular expression over the generated text. The
transformers backend checks prefixes incrementally (`allows`: `model.decode.regex_matcher`, llguidance's
matcher over bytes, or the `regex` package's partial match), vLLM receives the same pattern through
``structured_outputs``. The pattern for a state is built per step by `state_constraint` from the program (its lines, its function names) and the
previous state (so the stack stays consistent).
"""
from __future__ import annotations

import re
import string
from typing import TYPE_CHECKING

from model.decode.regex_matcher import regex_matcher
from model.decode.repr_check import CheckedConstraint

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from model.static.call_chain import ChainCheckedConstraint
    from model.decoding import DecodingRules
    from protocol.debugger import Action, State


class RegexConstraint:
    """Generated text must match `regex` in full; `allows` accepts every prefix of a match
    (`model.decode.regex_matcher`: llguidance's byte matcher, or the `regex` package's partial match)."""

    def __init__(self, regex: str) -> None:
        self.regex = regex
        self._matcher = regex_matcher(regex)

    def allows(self, text: str) -> bool:
        return self._matcher.allows(text)

    def complete(self, text: str) -> bool:
        return self._matcher.complete(text)

    def next_bytes(self, text: str) -> frozenset[int] | None:
        """The bytes the regex lets follow `text` (None: the matcher cannot say; see `model.backends.base.Constraint`)."""
        return self._matcher.next_bytes(text)

    def forced_text(self, text: str) -> str:
        """The text every match that extends `text` goes on with ("": none known; see `regex_matcher.TextMatcher`)."""
        return self._matcher.forced_text(text)

    def __repr__(self) -> str:
        return f"RegexConstraint({self.regex[:60]!r}{'...' if len(self.regex) > 60 else ''})"


class StateConstraint(RegexConstraint):
    """The next state after `previous` in `program` must be well formed (see `model.prompt.language.state_regex`).

    Lines are the program's executable lines (or an exit), locals JSON objects of strings, the
    stack a continuation of the previous one. The local check runs on the text before the stop
    token `<|state_end|>`; `regex` (sent to vLLM) includes it, so a grammar engine that only lets
    the tokenizer's EOS end a match still reaches the stop token.
    """

    def __init__(self, program: str, previous: "State | None", modules: "Mapping[str, str] | None" = None) -> None:
        from model.prompt.language import state_regex

        super().__init__(state_regex(program, previous, include_end=False, modules=modules))
        self.regex = state_regex(program, previous, include_end=True, modules=modules)


class FlowConstraint(RegexConstraint):
    """`StateConstraint` narrowed to the stops static control flow allows after `action` (`model.static.flow_regex`), a
    Continue's or Step Out's without breakpoint stops none of whose lines it can reach (`model.static.reach`), a step
    from the first run of a loop header over constants into its body (`model.static.loop_entry`), a Step Into from
the start of a line into the line's first call when nothing before it runs code (`model.static.first_call`), a step
from a line that runs nothing and cannot raise to its frame's next line (`model.static.line_effects.staying`), a step
from a line its frame cannot return from into no caller where none can catch (`model.static.frame_exit`), nor into a
call its caller's line made once (`model.static.reach.without_recalled_top`); a step's line event on a breakpoint line
stops as a breakpoint (`model.static.breakpoint_stops`); `may_exit`: the program may also end (code elsewhere can exit);
    `below`, `file`: `previous` is the top of a project's stack, frames of `file` over frames `below` matches
    (`model.static.flow_regex.flow_state_regex`); `exceptions` off: no exception stop (a caller's grammar has them);
    `rules` (`model.decoding`) say which narrowing of the locals and the return value comes on top. `enter`: the stop
    enters a call of the line (`model.static.reach.entering`; a coarse action's fine step at a line that certainly calls).
    `returned`: `previous` is a stop back on its calling line after that function's call came back, which a Step Into
    does not start again where the line calls it once (`model.static.reach.without_returned_call`)."""

    def __init__(self, program: str, previous: "State", action: "Action", breakpoints: "Sequence[int]" = (),
                 rules: "DecodingRules | None" = None, *, enter: bool = False, returned: "str | None" = None,
                 may_exit: bool = False, below: str = "", file: "str | None" = None, exceptions: bool = True) -> None:  # fmt: skip
        from dataclasses import replace

        from model.static.breakpoint_stops import breakpoint_line_events
        from model.static.call_args import entry_values
        from model.static.class_returns import showing_class_return
        from model.static.comprehension_entry import comprehension_entries
        from model.static.first_call import entering_first_call
        from model.static.frame_exit import staying_unless_caught
        from model.decoding import FULL_RULES
        from model.static.line_effects import kept_locals, staying
        from model.static.line_order import in_statement_order
        from model.static.loop_entry import entering_loop
        from model.static.reach import entering, without_recalled_top, without_returned_call, without_unreachable_breakpoints
        from model.static.flow import next_locations
        from model.static.flow_regex import flow_state_regex
        from protocol.debugger import ActionKind

        rules = rules or FULL_RULES
        self.flow = without_unreachable_breakpoints(next_locations(program, previous, action, breakpoints), program, previous,
                                                    action.kind, breakpoints)  # fmt: skip
        if returned is not None and action.kind is ActionKind.STEP_INTO:
            self.flow = without_returned_call(self.flow, program, previous, returned)
        if action.kind is ActionKind.STEP_INTO:
            self.flow = entering_first_call(self.flow, program, previous, returned)
        self.flow = without_recalled_top(self.flow, program, previous, action.kind)
        self.flow = staying_unless_caught(self.flow, program, previous, action.kind)
        self.flow = staying(entering_loop(self.flow, program, previous, action.kind), program, previous, action.kind)
        if enter:
            self.flow = entering(self.flow, len(previous.frames))
        self.flow = breakpoint_line_events(self.flow, program, previous, action.kind, breakpoints)
        self.flow = in_statement_order(self.flow, program, previous, action.kind)
        if rules.line_effects:
            self.flow = showing_class_return(self.flow, program, previous, action.kind)
        if may_exit:
            self.flow = replace(self.flow, exit=True)
        if not exceptions:
            self.flow = replace(self.flow, exception=[])
        entry = {**entry_values(program, previous, file), **comprehension_entries(program, previous)} \
            if action.kind is ActionKind.STEP_INTO and rules.known_entries else None
        steps = (ActionKind.STEP_INTO, ActionKind.STEP_OVER, ActionKind.STEP_RETURN)
        kept = kept_locals(program, previous, action.kind) if action.kind in steps and rules.line_effects else None
        options = {"entry": entry, "kept": kept, "frame_names": rules.frame_names, "typed_returns": rules.value_kinds, "below": below, "file": file}
        self.body = flow_state_regex(program, previous, self.flow, include_end=False, **options)
        super().__init__(self.body)
        self.regex = flow_state_regex(program, previous, self.flow, include_end=True, **options)


class ProjectFlowConstraint(RegexConstraint):
    """A forward step of a project (`model.decode.project_flow`): its top frames go on as their file's flow says
    (`FlowConstraint` over that file, the frames under them kept), other stops as `ProjectStep.plan` writes them.
    `breakpoints`: the program's lines; `file_breakpoints`: the other files' (path -> lines); `enter` and `returned`
    (`FlowConstraint`) apply where all frames are the program's."""

    def __init__(self, program: str, previous: "State", action: "Action", modules: "Mapping[str, str]", breakpoints: "Sequence[int]" = (),
                 rules: "DecodingRules | None" = None, *, file_breakpoints: "Mapping[str, Sequence[int]] | None" = None,
                 enter: bool = False, returned: "str | None" = None) -> None:  # fmt: skip
        from model.decode.project_flow import ProjectStep
        from model.prompt.language import STATE_END, state_regex

        step = ProjectStep.plan(program, previous, action, modules, breakpoints, file_breakpoints)
        first = FlowConstraint(step.source, step.top, action, step.own_breakpoints, rules, enter=enter and not step.start,
                               returned=None if step.start else returned, may_exit=step.exits and not step.start,
                               below=step.below, file=step.file, exceptions=False)  # fmt: skip
        self.flow = first.flow
        bodies = [first.body if step.entered is None else "", *step.others]
        if first.flow.unconstrained and step.entered is None:  # the file's flow cannot say: any well-formed stop
            bodies = [state_regex(program, previous, include_end=False, modules=modules)]
        body = "|".join(f"(?:{b})" for b in bodies if b)
        super().__init__(body)
        self.regex = f"(?:{body}){re.escape(STATE_END)}"


class InverseCallConstraint(RegexConstraint):
    """``inv_step_call``'s answer: the first stop of a call, with the function's entry locals (`model.static.entry_locals`)."""

    def __init__(self, body: str, full: str) -> None:
        super().__init__(body)
        self.regex = full

    @classmethod
    def or_state(cls, program: str, later: "State", rules: "DecodingRules | None" = None) -> RegexConstraint:
        """The narrowed constraint, or `StateConstraint` when the first stop cannot be placed statically; `rules`
        (`model.decoding`): whether the entry's keys and the arguments' kinds narrow it too."""

        from model.decoding import FULL_RULES
        from model.static.entry_locals import inverse_call_regex
        from model.prompt.language import STATE_END

        rules = rules or FULL_RULES
        body = inverse_call_regex(program, later, include_end=False, typed=rules.value_kinds, names=rules.frame_names)
        if body is None:
            return StateConstraint(program, later)
        return cls(body, body + re.escape(STATE_END))


def state_constraint(program: str, previous: "State | None", modules: "Mapping[str, str] | None" = None, *,
                     action: "Action | None" = None, breakpoints: "Sequence[int]" = (),
                     reprs: bool = False, rules: "DecodingRules | None" = None, enter: bool = False,
                     returned: "str | None" = None, file_breakpoints: "Mapping[str, Sequence[int]] | None" = None) -> "RegexConstraint | CheckedConstraint | ChainCheckedConstraint":  # fmt: skip
    """The constraint for the state that follows `previous` (None: a first state); `modules` (path ->
    source) are the user files whose frames may appear.

    With a forward `action` (and no `modules`: the flow analysis covers one file), the stops are
    narrowed by static control flow (`FlowConstraint`; `breakpoints`: the session's lines in the
    program) and to stacks that are chains of calls (`model.static.call_chain`); with `modules`, by the flow of the file
    the previous stop is in (`ProjectFlowConstraint`; `file_breakpoints`: the other files'
    breakpoints, path -> lines); with ``inv_step_call``, to
    the first stop of a call (`InverseCallConstraint`). With `reprs`, values must stay possible reprs (`model.decode.repr_check.CheckedConstraint`;
    checked by the transformers backend on each prefix, by vLLM on its answer: `model.decode.spec`). `rules` (`model.decoding`, default the full
    decoding's): which narrowing beyond well-formedness and control flow applies. `enter`: a Step Into's stop must
    enter a call of the line; `returned`: the function whose call came back to `previous`'s line (`FlowConstraint`).
    """
    from model.static.call_chain import ChainCheckedConstraint
    from protocol.debugger import ActionKind

    constraint: RegexConstraint | ChainCheckedConstraint
    forward = action is not None and previous is not None and not action.kind.inverse
    if action is not None and previous is not None and not modules and action.kind is ActionKind.INV_STEP_CALL:
        constraint = InverseCallConstraint.or_state(program, previous, rules)
    elif forward and not modules:
        constraint = ChainCheckedConstraint(FlowConstraint(program, previous, action, breakpoints, rules, enter=enter, returned=returned), program)
    elif (forward and modules and not previous.finished and previous.frames and all(f.file is None or f.file in modules for f in previous.frames)
          and (others := other_code_names(modules)) is not None):
        inner = ProjectFlowConstraint(program, previous, action, modules, breakpoints, rules, file_breakpoints=file_breakpoints,
                                      enter=enter, returned=returned)  # fmt: skip
        constraint = ChainCheckedConstraint(inner, program, others)
    else:
        constraint = StateConstraint(program, previous, modules)
    return CheckedConstraint(constraint, program) if reprs else constraint


def other_code_names(modules: "Mapping[str, str]") -> frozenset[str] | None:
    """The names of the code objects of the other user files (their functions, classes, ``<module>``...); None when
    one does not compile."""
    from model.prompt.language import program_info

    names: set[str] = set()
    for text in modules.values():
        found = program_info(text).names
        if found is None:
            return None
        names |= found
    return frozenset(names)


CLOSERS: tuple[str, ...] = ("", '"', "}", "..}", ",..}", '"}', '",..}', '":""}', '":"",..}')


def close_text(text: str, constraint: "RegexConstraint | CheckedConstraint", closers: tuple[str, ...] = CLOSERS, *,
               close_values: bool = False) -> str | None:  # fmt: skip
    """The longest prefix of `text` that one short closer (a quote, a brace, ``..}``...) makes a full match.

    For a prediction cut off by its token budget (e.g. an untrained model that never closes a
    string): the result is well formed, with the unfinished value truncated. When no closer works
    at any cut (a grammar that still needs required keys), the longest allowed prefix is filled
    character by character (`_fill`). None when neither works.

    With `close_values`, each closer is also tried after what closes the repr the prefix stops
    inside (`model.decode.cut_values.value_closer`: ``']"`` after ``{"x":"['a``), and a fill closes the
    value it is in before adding characters (a session asks this for inverse actions only; see
    `NeuralDebugger._generate_state`).
    """
    from model.decode.cut_values import prefix_closers

    value_closers = prefix_closers(text) if close_values else [""] * (len(text) + 1)
    longest = None
    for cut in range(len(text), -1, -1):
        head = text[:cut]
        if not constraint.allows(head):
            continue
        if longest is None:
            longest = head
        for closer in _candidates(value_closers[cut], closers):
            if constraint.complete(head + closer):
                return head + closer
    if longest is None:
        return None
    value_closer = value_closers[len(longest)]
    if value_closer and constraint.allows(longest + value_closer):
        filled = _fill(longest + value_closer, constraint, closers, close_values=True)
        if filled is not None:
            return filled
    return _fill(longest, constraint, closers, close_values=close_values)


def _candidates(value_closer: str, closers: tuple[str, ...]) -> tuple[str, ...]:
    """`closers`, then each after `value_closer` (which ends the open JSON string itself, so its ``"`` is dropped)."""
    if not value_closer:
        return closers
    after = tuple(value_closer + closer[1:] if closer.startswith('"') else value_closer + closer for closer in closers)
    return closers + tuple(dict.fromkeys(after))


FILL_CHARS = '"}])0,:<|>' + string.ascii_lowercase + "_" + string.ascii_uppercase + string.digits + "'.[({ -"
VALUE_FILL_CHARS = '"}])0' + "'" + ',:<|>' + string.ascii_lowercase + "_" + string.ascii_uppercase + string.digits + ".[({ -"
FILL_LIMIT = 96  # steps a fill may take


def _fill(head: str, constraint: "RegexConstraint | CheckedConstraint", closers: tuple[str, ...], *,
          close_values: bool = False) -> str | None:  # fmt: skip
    """`head` completed one step at a time until a closer finishes it: for a grammar that needs more than
    a closer (``inv_step_call``'s required parameters: ``,"b":"0"}``). A step adds the first of
    `FILL_CHARS` the grammar allows; with `close_values` it first closes the value the text is inside
    (`model.decode.cut_values.value_closer`) when the grammar allows that, and tries a quote before other
    characters (`VALUE_FILL_CHARS`: an empty string, not a ``<...>`` description). None when no closer
    finishes it within `FILL_LIMIT` steps."""
    from model.decode.cut_values import ValueScan

    chars = VALUE_FILL_CHARS if close_values else FILL_CHARS
    scan = ValueScan()
    scan.feed_text(head)
    text = head
    for _ in range(FILL_LIMIT):
        ending = scan.closer() if close_values else ""
        for closer in _candidates(ending, closers):
            if constraint.complete(text + closer):
                return text + closer
        step = ending if ending and constraint.allows(text + ending) else None
        step = step or next((char for char in chars if constraint.allows(text + char)), None)
        if step is None:
            return None
        text += step
        scan.feed_text(step)
    return None
