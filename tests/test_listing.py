"""The bounded source listing (model/prompt/listing.py): the rule's properties, short programs unchanged,
long real files stepped by a real (tiny) model with no context error, and training windows that
use the listings the session uses."""
from __future__ import annotations

import functools
import random
import sysconfig
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.prompt import language as L
from model.prompt import listing as LS
from protocol.debugger import Action, ActionKind, Frame, State, Step, StopReason, Trajectory
from tracegen.synth import generate_program

ROOT = Path(__file__).resolve().parent.parent
STDLIB = Path(sysconfig.get_paths()["stdlib"])
INTO = Action(kind=ActionKind.STEP_INTO)
OVER = Action(kind=ActionKind.STEP_OVER)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def stdlib_program(name: str, driver: str) -> str:
    """A real standard-library module (its ``__main__`` block switched off), then `driver`."""
    text = (STDLIB / f"{name}.py").read_text(encoding="utf-8")
    for quote in ("'", '"'):
        text = text.replace(f"if __name__ == {quote}__main__{quote}:", f"if __name__ == {quote}__not_main__{quote}:")
    return text.rstrip("\n") + "\n\n" + driver + "\n"


LONG = {
    "colorsys": "print(rgb_to_hls(0.2, 0.4, 0.4))\nprint(hsv_to_rgb(0.5, 0.5, 0.5))",
    "textwrap": "print(shorten('Hello  world, this is a long text', width=20))\nprint(dedent('  a\\n  b'))",
    "shlex": "print(split(\"a 'b c' d\"))\nprint(quote('it is'))",
    "fnmatch": "print(translate('*.py'))\nprint(filter(['a.py', 'b.txt'], '*.py'))",
}


def record(program: str, actions: list[Action]) -> list[State]:
    from tracegen.fast import record_program, replay

    return replay(record_program(program), actions, [])


def stack_states(program: str, rng: random.Random, count: int) -> list[State]:
    """States whose frames stop on lines of the right code objects (not a real run: any nesting)."""
    info = L.program_info(program)
    assert info.lines_by_name
    names = sorted(n for n in info.lines_by_name if "." not in n)
    states = []
    for _ in range(count):
        frames = [Frame(name="<module>", line=rng.choice(sorted(info.lines_by_name["<module>"])))]
        for _ in range(rng.randrange(4)):
            name = rng.choice(names)
            frames.insert(0, Frame(name=name, line=rng.choice(sorted(info.lines_by_name[name]))))
        states.append(State(reason=StopReason.STEP, frames=frames))
    return states


def stack_lines_listing(state: State, program: str) -> LS.Listing:
    """The frames' lines and their headers, each with the rest of its statement (tier 0)."""
    index = LS.source_index(program)
    marks = {f.line for f in state.frames if f.file is None} | {h for f in state.frames for h in index.headers.get(f.line, ())}
    lines = {n for m in marks for n in range(index.span(m)[0], index.span(m)[1] + 1) if index.lines[n - 1].strip()}
    return LS.Listing(((None, tuple(sorted(lines))),))


# --- the rule's properties ----------------------------------------------------------------------


@FAST
@given(st.sampled_from(sorted(LONG)), st.integers(0, 10**6), st.integers(-20, 3000))
def test_listing_fits_its_budget_shows_the_stack_and_is_deterministic(module: str, seed: int, budget: int) -> None:
    program = stdlib_program(module, LONG[module])
    for state in stack_states(program, random.Random(seed), 3):
        listing = LS.choose_listing(state, program, budget, len)
        text = L.render_header(program, [], listing)
        listed = LS.listing_text(listing, program)
        if listing.full:
            assert len(listed) <= budget and text == L.render_header(program, [])
        else:
            assert len(listed) <= max(0, budget - budget // LS.SLACK)
        assert listing == LS.choose_listing(state, program, budget, len)  # deterministic
        needed = len(LS.listing_text(stack_lines_listing(state, program), program))
        if needed <= budget - budget // LS.SLACK:  # room for the stack: every frame's line is there, with its number
            lines = LS.program_lines(program)
            for frame in state.frames:
                assert LS.listing_line(frame.line, lines[frame.line - 1]) in listed
        # the listing never invents: every listed line is the program's line with its real number
        shown = [piece for piece in listed.split(L.LINE_SEP) if piece and piece != "..\n"]
        for piece in shown:
            number, _, rest = piece.partition(" ")
            assert LS.listing_line(int(number), LS.program_lines(program)[int(number) - 1]) == L.LINE_SEP + piece


@FAST
@given(st.integers(0, 10**6))
def test_short_programs_render_as_before(seed: int) -> None:
    """Synthetic programs and their real stops: under the budget, the header is today's header, byte for byte."""
    program = generate_program(random.Random(seed)).source
    states = record(program, [INTO] * 30)
    full = L.render_header(program, [2])
    for state in states:
        listing = L.window_listing(None, state, program, 1024, len, breakpoints=[2])
        budget = LS.listing_budget(1024, len(L.render_header(program, [2], LS.NO_LISTING)) + len(L.render_state(state)))
        if len(LS.listing_text(LS.full_listing(program), program)) <= budget:
            assert listing.full and L.render_header(program, [2], listing) == full


def test_examples_render_as_before_with_the_shipped_tokenizer() -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(ROOT / "checkpoints" / "default"))

    @functools.lru_cache(maxsize=None)
    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False))

    for path in sorted((ROOT / "examples").glob("*.py")):
        program = path.read_text()
        states = record(program, [INTO] * 40)
        traj = Trajectory(program=program, initial=states[0], steps=[Step(action=INTO, state=s) for s in states[1:]])
        for state in states:
            assert L.window_listing(None, state, program, 1024, count).full, path.name
        for window in L.render_windows(traj, 1024, count):
            assert window[0].text == L.render_header(program, []), path.name


def test_a_smaller_budget_shows_fewer_lines_and_the_choice_follows_the_stop() -> None:
    program = stdlib_program("textwrap", LONG["textwrap"])
    states = record(program, [INTO] * 80)
    deep = max(states, key=lambda s: len(s.frames))
    big = LS.choose_listing(deep, program, 3000, len)
    small = LS.choose_listing(deep, program, 1000, len)
    assert not big.full and small.line_count() < big.line_count()
    for frame in deep.frames:
        assert big.shows(None, frame.line)
    assert big.covers(deep, program)
    far = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=max(L.program_info(program).lines_by_name["<module>"]))])
    assert not LS.choose_listing(far, program, 1000, len).covers(deep, program)


def test_callees_of_the_current_line_are_listed_even_far_away() -> None:
    filler = "".join(f"def unused_{i}(x):\n    y = x * {i}\n    return y + {i}\n\n" for i in range(120))
    program = "def target(v):\n    w = v + 1\n    return w\n\n" + filler + "r = target(3)\nprint(r)\n"
    call_line = LS.program_lines(program).index("r = target(3)") + 1
    state = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=call_line)])
    listing = LS.choose_listing(state, program, 400, len)
    assert not listing.full
    for line in (1, 2, call_line):  # the callee's def and first line, the stop
        assert listing.shows(None, line)
    assert not listing.shows(None, 10)  # unused code far from both is left out
    assert LS.LISTING_ELIDED in L.render_header(program, [], listing)


def test_other_user_files_appear_as_sections_with_their_path() -> None:
    module = "def price(n):\n    base = n * 2\n    return base + 1\n" + "".join(f"def other_{i}():\n    return {i}\n" for i in range(80))
    program = "import pricing\n" + "".join(f"a_{i} = {i}\n" for i in range(150)) + "t = pricing.price(4)\nprint(t)\n"
    modules = {"pricing.py": module}
    state = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=152)])
    listing = LS.choose_listing(state, program, 500, len, modules=modules)
    text = LS.listing_text(listing, program, modules)
    assert LS.listing_file_header("pricing.py") + LS.listing_line(1, "def price(n):") in text
    assert LS.listing_line(2, "    base = n * 2") in text
    inside = State(reason=StopReason.STEP, frames=[Frame(name="price", line=2, file="pricing.py"), Frame(name="<module>", line=152)])
    assert listing.covers(inside, program, modules)
    assert LS.choose_listing(state, program, 500, len, modules=dict(reversed(list(modules.items())))) == listing


def test_a_program_that_does_not_parse_still_gets_a_listing() -> None:
    program = "x = 1\n" * 200 + "def broken(:\n"
    state = State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=100)])
    listing = LS.choose_listing(state, program, 200, len)
    assert listing.shows(None, 100) and len(LS.listing_text(listing, program)) <= 200


# --- training windows and the session use the same listings ----------------------------------


def test_training_windows_use_the_listing_rule_on_long_files() -> None:
    program = stdlib_program("colorsys", LONG["colorsys"])
    states = record(program, [INTO, INTO, OVER] * 30)
    actions = [INTO, INTO, OVER] * 30
    traj = Trajectory(program=program, initial=states[0], steps=[Step(action=a, state=s) for a, s in zip(actions, states[1:])])
    windows = L.render_windows(traj, 4096, len)  # characters as tokens: about a 1024-token context
    assert sum(s.predicted for w in windows for s in w) == len(traj.steps)  # every step, once
    index = 0
    for window in windows:
        header = window[0].text
        assert LS.LISTING_ELIDED in header and len(L.render_text(window)) <= 4096
        _, pairs = L.parse_session(L.render_text(window), program)
        for offset, (_, state) in enumerate(pairs[:-1]):  # every prompt's last state is shown by the window's listing
            for frame in states[index + offset].frames:
                assert L.LINE_SEP + f"{frame.line} " in header
        index += len(pairs) - 1


@pytest.mark.slow
def test_long_files_step_with_a_real_model_and_no_context_error(tiny_checkpoint: Path) -> None:
    from model.session import NeuralDebugger

    for name in ("colorsys", "shlex"):
        program = stdlib_program(name, LONG[name])
        session = NeuralDebugger.from_checkpoint(tiny_checkpoint, program, max_model_len=1024, max_state_tokens=48)
        session.start()
        for action in [INTO, INTO, OVER] * 4:
            if session.state.finished:
                break
            prompt = session._prompt_ids(action)
            assert len(prompt) <= 1024 - 48
            header = session.tokenizer.decode(session._header(), skip_special_tokens=False)
            assert LS.LISTING_ELIDED in header
            for frame in session.state.frames:  # the stop the model predicts from is in its listing
                assert L.LINE_SEP + f"{frame.line} " in header
            session.step(action)
        session.close()


@pytest.mark.slow
def test_teacher_forced_session_prompts_are_training_windows(tiny_checkpoint: Path) -> None:
    """The session's prompts (true states appended) start with the headers training windows have."""
    from model.session import NeuralDebugger

    program = stdlib_program("colorsys", LONG["colorsys"])
    actions = [INTO, INTO, OVER] * 8
    states = record(program, actions)
    session = NeuralDebugger.from_checkpoint(tiny_checkpoint, program, max_model_len=1024)
    session.start()
    count = session._count
    traj = Trajectory(program=program, initial=states[0], steps=[Step(action=a, state=s) for a, s in zip(actions, states[1:])])
    training = {w[0].text for w in L.render_windows(traj, 1024, count)}
    seen = set()
    for action, state in zip(actions, states[1:]):
        session._prompt_ids(action)
        seen.add(session.tokenizer.decode(session._header(), skip_special_tokens=False))
        session.append(action, state)
    session.close()
    assert seen and seen <= training


def test_packing_a_long_file_keeps_every_step_and_uses_bounded_listings(tiny_checkpoint: Path) -> None:
    from transformers import AutoTokenizer

    from train.data import SegmentEncoder, trajectory_documents

    program = stdlib_program("shlex", LONG["shlex"])
    actions = [INTO, INTO, OVER] * 20
    states = record(program, actions)
    traj = Trajectory(program=program, initial=states[0], steps=[Step(action=a, state=s) for a, s in zip(actions, states[1:])])
    encoder = SegmentEncoder(AutoTokenizer.from_pretrained(str(tiny_checkpoint)))
    docs, windows = trajectory_documents(traj, encoder, 1024, "states")
    assert docs and all(len(d.ids) <= 1024 for d in docs)
    assert sum(s.predicted for w in windows for s in w) == len(traj.steps)
    assert all(LS.LISTING_ELIDED in w[0].text for w in windows)


def test_the_choice_does_not_depend_on_the_process(tmp_path: Path) -> None:
    """Same listing under other hash seeds (no set or dict order leaks into the choice)."""
    import json
    import subprocess
    import sys

    script = (
        "import json, sys\n"
        "sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + '/tests')\n"
        "from test_listing import LONG, record, stdlib_program, INTO, OVER\n"
        "from model.prompt import listing as LS\n"
        "program = stdlib_program('textwrap', LONG['textwrap'])\n"
        "states = record(program, [INTO, INTO, OVER] * 15)\n"
        "out = [LS.choose_listing(s, program, 1500, len, breakpoints=[434, 200]).sections for s in states]\n"
        "print(json.dumps(out))\n"
    )
    results = []
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", script, str(ROOT)], capture_output=True, text=True, timeout=120,
                              env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert done.returncode == 0, done.stderr[-2000:]
        results.append(json.loads(done.stdout))
    assert results[0] == results[1] and len(results[0]) > 10
