"""A step's budget (model.budget) on a tiny real model: tokens and time bound a step, what was cut is said, dead ends back up."""
from __future__ import annotations

from pathlib import Path

from model.prompt import language as lang
from model.backends.hf import HFBackend
from model.budget import StepBudget
from model.session import NeuralDebugger
from protocol.debugger import Action, ActionKind

PROGRAM = """\
def add(a, b):
    c = a + b
    return c

x = add(1, 2)
y = [x, x * 2]
print(y)
"""


def make(checkpoint: Path, **options: object) -> NeuralDebugger:
    return NeuralDebugger.from_checkpoint(checkpoint, PROGRAM, "prog.py", **options)


def well_formed(state) -> bool:  # noqa: ANN001
    lines = lang.program_info(PROGRAM).lines
    return all(frame.line in lines for frame in state.frames)


def test_the_token_budget_bounds_every_attempt_and_candidate(tiny_checkpoint: Path) -> None:
    # an untrained model wanders to its token limit: unbounded, a coarse step draws 4 answers with retries of twice the tokens
    session = make(tiny_checkpoint, max_state_tokens=48, coarse_candidates=4, budget=StepBudget(seconds=None, tokens=40))
    session.start()
    spent: list[int] = []
    generate = session.backend.generate

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003
        gen = generate(*args, **kwargs)
        spent.append(len(gen.token_ids))
        return gen

    session.backend.generate = counted  # type: ignore[method-assign]
    state = session.step(Action(kind=ActionKind.CONTINUE))
    assert sum(spent) <= 40
    assert well_formed(state)
    assert session.remark is not None and "step budget (40 tokens) ran out" in session.remark
    assert session.remark is not None and "answer(s) drawn of 4" in session.remark or len(spent) == 1


def test_the_time_budget_cuts_a_generation_and_says_so(tiny_checkpoint: Path) -> None:
    session = make(tiny_checkpoint, max_state_tokens=64, budget=StepBudget(seconds=1e-6, tokens=None))
    session.start()
    state = session.step(Action(kind=ActionKind.STEP_INTO))
    assert well_formed(state)
    assert session.remark is not None and "ran out" in session.remark
    if not session.moved:  # nothing well formed could be closed: the stop says it did not move
        assert session.note is not None and "did not move" in session.note
    # without a budget (evaluation) nothing is cut
    unbounded = make(tiny_checkpoint, max_state_tokens=16)
    unbounded.start()
    unbounded.step(Action(kind=ActionKind.STEP_INTO))
    assert unbounded.remark is None


class _Only:
    """A constraint over a few texts: `prefixes` may be written, `complete` ends a generation."""

    regex = ".*"

    def __init__(self, prefixes: set[str], complete: set[str]) -> None:
        self.prefixes, self.done = prefixes, complete

    def allows(self, text: str) -> bool:
        return text in self.prefixes or text in self.done or any(d.startswith(text) for d in self.done)

    def complete(self, text: str) -> bool:
        return text in self.done


def test_a_dead_end_of_the_python_checks_is_backed_out_of(tiny_checkpoint: Path) -> None:
    backend = HFBackend(tiny_checkpoint)
    tok = backend.tokenizer
    prompt = tok.encode("x = 1\n")
    stop = tok.convert_tokens_to_ids(lang.STOP_TOKEN)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1) if len(tok.encode(chr(c))) == 1]
    # the model's favourite letter after "a", then a constraint where it is a dead end (allowed, but nothing after it is)
    probe = backend.generate(prompt, max_tokens=2, temperature=0.0, stop_ids=[stop],
                             constraint=_Only({"a"}, {"a" + x for x in letters}))
    favourite = probe.text[1:]
    assert favourite in letters
    way_out = {"a" + x for x in letters if x != favourite}
    gen = backend.generate(prompt, max_tokens=4, temperature=0.0, stop_ids=[stop],
                           constraint=_Only({"a", "a" + favourite}, way_out))
    assert gen.finish_reason == "stop" and gen.text in way_out


def test_a_runaway_the_budget_cut_is_trimmed_before_it_is_closed(tiny_checkpoint: Path, monkeypatch) -> None:  # noqa: ANN001
    from model import session as session_module
    from model.backends.base import Generation
    from tracegen.fast import record_program, replay

    # the backend answers the recorded stops, then what a small model writes when it loses track of a value: the
    # right stop, then one item repeated until its time runs out
    states = replay(record_program(PROGRAM), [Action(kind=ActionKind.STEP_INTO)] * 6, [])
    texts = [lang.render_state(after, before) for before, after in zip(states, states[1:])]
    last = next(i for i, text in enumerate(texts) if '":"' in text)
    value = texts[last].index('":"') + 3
    runaway = texts[last][:value] + "[" + "1, " * 300
    answers = texts[:last] + [runaway]
    session = make(tiny_checkpoint, budget=StepBudget(seconds=60, tokens=None))
    tok = session.tokenizer
    stop = tok.convert_tokens_to_ids(lang.STOP_TOKEN)

    def scripted(*args, **kwargs) -> Generation:  # noqa: ANN002, ANN003
        text = answers.pop(0)
        ids = tok.encode(text, add_special_tokens=False)
        if text == runaway:
            return Generation(token_ids=ids, text=text, finish_reason="deadline")
        return Generation(token_ids=ids, text=text, finish_reason="stop", stop_token=stop)

    session.backend.generate = scripted  # type: ignore[method-assign]
    closed_inputs: list[int] = []
    close = session_module.close_text

    def recorded(text, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        closed_inputs.append(len(text))
        return close(text, *args, **kwargs)

    monkeypatch.setattr(session_module, "close_text", recorded)
    session.start()
    for _ in range(last):
        session.step(Action(kind=ActionKind.STEP_INTO))
    assert not closed_inputs and session.state.frames[-1].line == states[last].frames[-1].line
    session.step(Action(kind=ActionKind.STEP_INTO))
    # closed from where the repetition began (plus two periods), not scanned back over 900 characters
    assert closed_inputs and max(closed_inputs) < value + 20
    assert session.note is not None and "cut there and closed" in session.note
    assert session.state.frames[-1].line == states[last + 1].frames[-1].line


def test_spending_fits_says_whether_more_work_ends_before_the_deadline() -> None:
    import time

    spending = StepBudget(seconds=10, tokens=None).start()
    spending.started = time.monotonic() - 9  # one second left
    assert spending.fits(0.5) and not spending.fits(2)
    assert StepBudget(seconds=None, tokens=None).start().fits(1e9)
    spent = StepBudget(seconds=None, tokens=5).start()
    spent.spend(5)
    assert not spent.fits(0)


def test_continue_by_fine_steps_stops_before_a_fine_step_that_would_not_fit(tiny_checkpoint: Path) -> None:
    """A fine step the budget cuts is dropped, so a Continue does not start one when what is left of the budget is
    shorter than its fine steps so far: it shows the last whole stop within the budget, not after it."""
    import time

    from model.backends.base import Generation
    from tracegen.fast import record_program, replay

    states = replay(record_program(PROGRAM), [Action(kind=ActionKind.STEP_OVER)] * 3, [])
    assert [s.frames[-1].line for s in states] == [1, 5, 6, 7]
    answers = [lang.render_state(after, before) for before, after in zip(states, states[1:])]
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, "prog.py", breakpoints=[7],
                                             budget=StepBudget(seconds=1.2, tokens=None), coarse_steps="fine")
    tok = session.tokenizer
    stop = tok.convert_tokens_to_ids(lang.STOP_TOKEN)

    def slow(*args, **kwargs) -> Generation:  # noqa: ANN002, ANN003 - a fine step of 0.4 s, whatever the deadline
        time.sleep(0.4)
        text = answers.pop(0)
        return Generation(token_ids=tok.encode(text, add_special_tokens=False), text=text, finish_reason="stop", stop_token=stop)

    session.backend.generate = slow  # type: ignore[method-assign]
    session.start()
    started = time.monotonic()
    state = session.step(Action(kind=ActionKind.CONTINUE))
    elapsed = time.monotonic() - started
    # two fine steps (0.8 s); a third would end past 1.2 s, so it is not started (unbudgeted, it would reach line 7)
    assert [r.action.kind for r in session.history] == [ActionKind.STEP_OVER] * 2
    assert state.frames[-1].line == 6 and elapsed < 1.2
    assert session.remark is not None and "ran 2 fine step(s) and did not arrive" in session.remark


class _Ones:
    """A constraint that lets only a run of ``1`` be written and never ends it: a value running away."""

    regex = "1*"

    def allows(self, text: str) -> bool:
        return set(text) <= {"1"}

    def complete(self, text: str) -> bool:
        return False


def test_a_bounded_generation_stops_as_a_value_runs_into_a_repetition(tiny_checkpoint: Path) -> None:
    backend = HFBackend(tiny_checkpoint)
    prompt = backend.tokenizer.encode("x = 1\n")
    stop = backend.tokenizer.convert_tokens_to_ids(lang.STOP_TOKEN)
    bounded = backend.generate(prompt, max_tokens=300, temperature=0.0, stop_ids=[stop], constraint=_Ones(), stop_repeats=True)
    assert bounded.finish_reason == "repeat" and 96 <= len(bounded.text) < 110
    unbounded = backend.generate(prompt, max_tokens=300, temperature=0.0, stop_ids=[stop], constraint=_Ones())
    assert unbounded.finish_reason == "length" and len(unbounded.token_ids) == 300


def test_only_a_bounded_session_asks_to_stop_repeats(tiny_checkpoint: Path) -> None:
    asked: list[dict] = []
    for budget in (StepBudget(seconds=60, tokens=None), None):
        session = make(tiny_checkpoint, max_state_tokens=16, **({} if budget is None else {"budget": budget}))
        generate = session.backend.generate

        def recorded(*args, generate=generate, **kwargs):  # noqa: ANN002, ANN003, ANN202
            asked.append(kwargs)
            return generate(*args, **kwargs)

        session.backend.generate = recorded  # type: ignore[method-assign]
        session.start()
        session.step(Action(kind=ActionKind.STEP_INTO))
    bounded = [kw for kw in asked if "deadline" in kw]
    assert bounded and all(kw.get("stop_repeats") for kw in bounded)
    assert any("deadline" not in kw and not kw.get("stop_repeats") for kw in asked)


def test_a_value_stopped_as_it_repeats_is_closed_and_the_stop_moves(tiny_checkpoint: Path) -> None:
    from model.backends.base import Generation
    from tracegen.fast import record_program, replay

    # the backend answers the first stop, then stops a value as it runs into a repetition ("repeat", `stop_repeats`)
    states = replay(record_program(PROGRAM), [Action(kind=ActionKind.STEP_INTO)] * 6, [])
    texts = [lang.render_state(after, before) for before, after in zip(states, states[1:])]
    last = max(i for i, text in enumerate(texts) if '":"' in text)  # `y = [x, x * 2]`: a value the grammar leaves free
    value = texts[last].index('":"') + 3
    repeating = texts[last][:value] + "[7, " + "0, " * 40
    answers = texts[:last] + [repeating]
    session = make(tiny_checkpoint, budget=StepBudget(seconds=60, tokens=None))
    tok = session.tokenizer
    stop = tok.convert_tokens_to_ids(lang.STOP_TOKEN)

    def scripted(*args, **kwargs) -> Generation:  # noqa: ANN002, ANN003
        text = answers.pop(0)
        ids = tok.encode(text, add_special_tokens=False)
        if text == repeating:
            assert kwargs.get("stop_repeats")
            return Generation(token_ids=ids, text=text, finish_reason="repeat")
        return Generation(token_ids=ids, text=text, finish_reason="stop", stop_token=stop)

    session.backend.generate = scripted  # type: ignore[method-assign]
    session.start()
    for _ in range(last + 1):
        session.step(Action(kind=ActionKind.STEP_INTO))
    assert not answers  # the repeating answer was not retried
    assert session.note is not None and "ran into a repetition" in session.note and "cut there and closed" in session.note
    assert session.state.frames[-1].line == states[last + 1].frames[-1].line
    shown = "".join(str(v) for frame in session.state.frames for v in frame.locals.values())
    assert "[7, 0, 0" in shown and "0, 0, 0, 0" not in shown


def test_a_continue_whose_next_fine_step_cannot_be_predicted_shows_how_far_it_got(tiny_checkpoint: Path) -> None:
    """A fine step that could not move ends a Continue at the last whole fine stop, which moved: the stop is not
    reported as "did not move", and the remark says why it ended there."""
    from model.backends.base import Generation
    from tracegen.fast import record_program, replay

    states = replay(record_program(PROGRAM), [Action(kind=ActionKind.STEP_OVER)] * 3, [])
    first = lang.render_state(states[1], states[0])
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, PROGRAM, "prog.py", breakpoints=[7], constrained=False,
                                             budget=StepBudget(seconds=60, tokens=None), coarse_steps="fine")  # fmt: skip
    tok = session.tokenizer
    stop = tok.convert_tokens_to_ids(lang.STOP_TOKEN)
    answers = [first]

    def scripted(*args, **kwargs) -> Generation:  # noqa: ANN002, ANN003 - the first fine stop, then text that never parses
        text = answers.pop(0) if answers else "not a state"
        return Generation(token_ids=tok.encode(text, add_special_tokens=False), text=text, finish_reason="stop", stop_token=stop)

    session.backend.generate = scripted  # type: ignore[method-assign]
    session.start()
    state = session.step(Action(kind=ActionKind.CONTINUE))
    assert state.frames[-1].line == 5 and session.moved
    assert [r.action.kind for r in session.history] == [ActionKind.STEP_OVER]
    assert session.remark is not None and "ran 1 fine step(s) and did not arrive: the next could not be predicted" in session.remark
