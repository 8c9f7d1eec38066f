"""model/decode/regex_matcher.py: llguidance's byte matcher answers as the `regex` package does on state patterns."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from model.decode.regex_matcher import ByteMatcher, FallbackMatcher, MatcherError, PartialRegex, _common_prefix, regex_matcher
from model.decode.spec import build_grammar
from model.oracle import OracleDebugger
from model.prompt import language as lang
from protocol.debugger import Action, ActionKind

ROOT = Path(__file__).resolve().parent.parent
# pieces a random walk appends: characters of every class the state language uses, its separators, multi-byte text
PIECES = [*"abcxyz_019-. '\"{}[](),:\\/\n\t<|>", "é", "漢", "\ufffd", "\U0001f600", '{"', '":"', '"}', ",..}", "..}",
          lang.LINE_SEP, lang.CALL_SEP, lang.FRAME_SEP, lang.REASON_STEP, lang.RETURN_SEP, lang.STATE_END, "<|line_se"]


def _state_patterns(example: str, steps: int) -> list[str]:
    """The regexes of the grammars of `steps` Step Intos through an examples/ program (recorded by the oracle), plain and
    narrowed by control flow."""
    program = (ROOT / "examples" / example).read_text()
    oracle = OracleDebugger(program)
    patterns = []
    try:
        previous = oracle.start()
        for _ in range(steps):
            for action in (Action(kind=ActionKind.STEP_INTO), Action(kind=ActionKind.STEP_OVER), None):
                grammar = build_grammar(program, previous, action)
                assert grammar is not None
                patterns.append(grammar.regex.removesuffix(re.escape(lang.STATE_END)))
            previous = oracle.step(Action(kind=ActionKind.STEP_INTO))
    finally:
        oracle.close()
    return patterns


def _walk_agrees(pattern: str, rng: random.Random, length: int) -> int:
    """Walk `length` pieces through `pattern`, asking both engines about every piece at every point; returns the checks made."""
    fast, slow = ByteMatcher(pattern), PartialRegex(pattern)
    text, checks = "", 0
    for _ in range(length):
        allowed = []
        for piece in PIECES:
            verdict = slow.allows(text + piece)
            assert fast.allows(text + piece) == verdict, (text + piece)[-120:]
            allowed.append(piece) if verdict else None
        assert fast.complete(text) == slow.complete(text), text[-120:]
        checks += len(PIECES) + 1
        if not allowed:
            break
        text += rng.choice(allowed)
    cut = rng.randrange(len(text) + 1)  # back to an earlier prefix, as close_text cuts
    assert fast.allows(text[:cut]) and fast.complete(text[:cut]) == slow.complete(text[:cut])
    return checks


def _first_step(example: str) -> tuple[str, str]:
    """(the regex of the grammar of a Step Into from the entry of an examples/ program, the rendered true stop)."""
    program = (ROOT / "examples" / example).read_text()
    oracle = OracleDebugger(program)
    try:
        first = oracle.start()
        second = oracle.step(Action(kind=ActionKind.STEP_INTO))
    finally:
        oracle.close()
    grammar = build_grammar(program, first, Action(kind=ActionKind.STEP_INTO))
    assert grammar is not None
    return grammar.regex, lang.render_state(second, first)


@pytest.mark.parametrize("example", ["demo.py", "classes.py", "exceptions_caught.py"])
def test_byte_matcher_agrees_with_regex_on_state_patterns(example: str) -> None:
    rng = random.Random(example)
    checks = sum(_walk_agrees(pattern, rng, 80) for pattern in _state_patterns(example, 4) for _ in range(6))
    assert checks > 10_000


def test_a_rendered_state_matches_and_its_prefixes_are_allowed() -> None:
    regex, text = _first_step("demo.py")
    matcher = ByteMatcher(regex)
    assert matcher.complete(text)
    assert all(matcher.allows(text[:cut]) for cut in range(len(text), -1, -7))  # rolls back a long way, then forward
    assert matcher.complete(text) and not matcher.complete(text[:-1])
    assert not matcher.allows(text + "x")


def test_utf8_is_matched_by_characters() -> None:
    matcher = ByteMatcher('"[^"\\\\]{0,3}"')
    assert matcher.complete('"漢é\U0001f600"')
    assert not matcher.allows('"漢é\U0001f600x')  # four characters, though more bytes than that
    assert matcher.allows('"\ufffd')


def test_a_pattern_llguidance_rejects_falls_back_to_regex() -> None:
    lookahead = "(?=ab)a[a-z]"  # the `regex` package has lookarounds, llguidance's regexes do not
    with pytest.raises(MatcherError):
        ByteMatcher(lookahead)
    matcher = regex_matcher(lookahead)
    assert isinstance(matcher, FallbackMatcher) and matcher.engine == "regex"
    assert matcher.complete("ab") and not matcher.allows("ac")


def test_a_matcher_in_llguidances_error_state_goes_on_with_regex() -> None:
    """llguidance's matcher never leaves its error state (a resource limit, a refused token): `FallbackMatcher` answers by `regex` from then on."""
    pattern = "(?:[a-z]{1,40}[0-9]|[a-y]{1,30}z){1,200}"
    matcher = FallbackMatcher(pattern)
    assert matcher.engine == "llguidance" and matcher.allows("abc")
    inner = matcher._inner
    assert isinstance(inner, ByteMatcher)
    assert not inner._matcher.consume_token(ord("!"))  # consume_token, unlike try_consume_tokens, errs on a refused token
    with pytest.raises(MatcherError):
        inner.allows("abc")
    texts = ["abcz", "abcdefghij" * 3 + "1", "abc9xy", "9"]
    answers = [(matcher.allows(text), matcher.complete(text)) for text in texts]
    assert answers == [(True, True), (True, True), (True, False), (False, False)]
    assert matcher.engine == "regex"


def test_unknown_engine_and_regex_engine() -> None:
    with pytest.raises(ValueError, match="unknown matcher engine"):
        regex_matcher("a", engine="re2")
    assert isinstance(regex_matcher("a", engine="regex"), PartialRegex)


@pytest.mark.parametrize(("a", "b", "common"), [(b"", b"abc", 0), (b"abc", b"abcd", 3), (b"abcd", b"ab", 2), (b"abxd", b"abyd", 2),
                                                (b"xbc", b"abc", 0), (b"abcdefgh", b"abcdefgz", 7)])  # fmt: skip
def test_common_prefix(a: bytes, b: bytes, common: int) -> None:
    assert _common_prefix(a, b) == common


def test_the_environment_chooses_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    from model.decode.regex_matcher import ENGINE_VARIABLE

    monkeypatch.setenv(ENGINE_VARIABLE, "regex")
    assert isinstance(regex_matcher("a"), PartialRegex)
    monkeypatch.setenv(ENGINE_VARIABLE, "auto")
    assert isinstance(regex_matcher("a"), FallbackMatcher)
    monkeypatch.setenv(ENGINE_VARIABLE, "pcre")
    with pytest.raises(ValueError, match=ENGINE_VARIABLE):
        regex_matcher("a")


def test_next_bytes_are_the_ascii_characters_that_may_follow() -> None:
    regex, rendered = _first_step("classes.py")
    pattern = regex.removesuffix(re.escape(lang.STATE_END))
    fast, slow = FallbackMatcher(pattern), PartialRegex(pattern)
    text = rendered.removesuffix(lang.STATE_END)
    for cut in range(0, len(text) + 1, 5):
        ascii_next = {byte for byte in fast.next_bytes(text[:cut]) if byte < 128}
        assert ascii_next == {byte for byte in range(128) if slow.allows(text[:cut] + chr(byte))}, text[:cut]
    assert fast.next_bytes(text + "\x00") == frozenset() and slow.next_bytes(text) is None
