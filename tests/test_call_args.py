"""Entry locals known before the call (`model.static.call_args`): the rules, the grammar, and every recorded call."""
from __future__ import annotations

import pytest

from model.prompt import language as lang
from model.static.call_args import entry_values, literal_repr
from model.decode.constraints import state_constraint
from protocol.debugger import Action, ActionKind, Frame, ReturnValue, State, StopReason
from tests.recorded import recorded_programs
from tracegen.trees import InverseChain

PROGRAM = "def f(text, n=2, *rest, flag=None, **kw):\n    return text * n\n\nword = 'ab'\nresult = f(word, 3)\n"


def _at(line: int, program: str = PROGRAM, **values: str) -> State:
    source = lang.source_line(program, line)
    return State(reason=StopReason.STEP, frames=[Frame(name="<module>", line=line, source=source, locals=dict(values))])


def test_literals_names_and_defaults_are_known() -> None:
    known = entry_values(PROGRAM, _at(5, word="'ab'"))["f"]
    assert known.values == {"text": "'ab'", "n": "3", "rest": "()", "flag": "None", "kw": "{}"} and known.complete
    assert known.locals_text() == '{"flag":"None","kw":"{}","n":"3","rest":"()","text":"\'ab\'"}'
    partial = entry_values(PROGRAM, _at(5))["f"]  # word not shown
    assert partial.values == {"n": "3", "rest": "()", "flag": "None", "kw": "{}"} and not partial.complete


@pytest.mark.parametrize("line", [
    "result = f(g(word))",  # another call first
    "result = f(*[word])",  # star arguments
    "result = [f(w) for w in word]",  # a comprehension is a frame of its own
    "result = f(word, 1, 2, 3, 4, text=1)",  # a TypeError: no frame
    "result = f()",  # a TypeError: no frame
])  # fmt: skip
def test_calls_where_something_else_may_run_are_not_judged(line: str) -> None:
    program = PROGRAM.replace("result = f(word, 3)", line) + "def g(x):\n    return x\n"
    known = entry_values(program, _at(5, program, word="'ab'")).get("f")
    assert known is None or "text" not in known.values


def test_a_quiet_first_call_on_a_line_with_more_calls_is_judged() -> None:
    program = PROGRAM.replace("result = f(word, 3)", "out = []\nout.append(f(word, 3))")
    assert entry_values(program, _at(6, program, out="[]", word="'ab'"))["f"].values["text"] == "'ab'"  # nothing runs before f
    later = PROGRAM.replace("result = f(word, 3)", "out = []\nout.append(len(word) + f(word, 3))")
    assert entry_values(later, _at(6, later, out="[]", word="'ab'")) == {}  # len() runs first
    twice = PROGRAM.replace("result = f(word, 3)", "out = []\nout.extend((f(word, 3), f(word, 4)))")
    back = _at(6, twice, out="[]", word="'ab'").model_copy(update={"return_value": ReturnValue(name="f", value="'ababab'")})
    assert entry_values(twice, back) == {}  # back on the line after the first call: the second comes next


def test_rebound_or_decorated_functions_are_not_judged() -> None:
    assert entry_values(PROGRAM + "f = print\n", _at(5, word="'ab'")) == {}
    decorated = PROGRAM.replace("def f", "@staticmethod\ndef f").replace("result = f(word, 3)", "\nresult = f(word, 3)")
    assert entry_values(decorated, _at(6, decorated, word="'ab'")) == {}


def test_literal_reprs_are_the_shown_ones() -> None:
    import ast

    from tracegen.child_runner import SafeRepr
    for text in ["[1, (2, 'x')]", "[8, [0, 3]]", "{'a': [1.5, None]}", "-3", "'a\\nb'", "(1,)", "b'\\x00'", "1e100", "(1+2j)"]:
        node = ast.parse(text, mode="eval").body
        assert literal_repr(node) == SafeRepr()(ast.literal_eval(node))
    assert literal_repr(ast.parse("{1, 2}", mode="eval").body) is None  # set order is not the program's
    assert literal_repr(ast.parse(repr(list(range(30))), mode="eval").body) is None  # debugpy cuts long collections


def test_step_into_writes_the_known_values() -> None:
    head = '<|reason_step|><|frame_sep|><module><|line_sep|>5{..}<|call_sep|>f<|line_sep|>2{'
    partial = state_constraint(PROGRAM, _at(5), action=Action(kind=ActionKind.STEP_INTO), reprs=True)
    assert partial.allows(head + '"flag":"None","kw":"{}","n":"3"')
    assert not partial.allows(head + '"flag":"None","kw":"{}","n":"4')
    whole = state_constraint(PROGRAM, _at(5, word="'ab'"), action=Action(kind=ActionKind.STEP_INTO), reprs=True)
    assert whole.complete(head + '"flag":"None","kw":"{}","n":"3","rest":"()","text":"\'ab\'"}')
    assert not whole.allows(head + '"text"')


@pytest.mark.parametrize("seed", [0, 1])
def test_every_recorded_call_has_the_known_values(seed: int) -> None:
    checked = 0
    for source, trace in recorded_programs(25, seed):
        states = [lang.canonical_state(s, source) for s in InverseChain(trace, max_states=400).states]
        for previous, state in zip(states, states[1:]):
            if state.finished or previous.finished or len(state.frames) != len(previous.frames) + 1:
                continue
            for name, known in entry_values(source, previous).items():
                new = state.frames[0]
                if new.name != name or [f.line for f in state.frames[1:]] != [f.line for f in previous.frames]:
                    continue
                for key, text in known.values.items():
                    assert new.locals.get(key) == text, (source, previous.frames[0].line, key, text, new.locals)
                    checked += 1
                if known.complete:
                    assert known.locals_text() == lang.json_locals(new.locals, delta=False), (source, new.locals)
    assert checked > 20


def test_nested_collections_debugpy_cuts_are_not_known() -> None:
    import ast

    assert literal_repr(ast.parse("[8, [0, [1]], 3]", mode="eval").body) is None  # shown as [8, [0, [...]], 3]
    assert literal_repr(ast.parse(repr(["x" * 200]), mode="eval").body) is None


def test_calls_of_another_files_plain_functions_are_known_by_how_they_are_imported() -> None:
    from model.static.call_args import imported_entry_values

    modules = {"pkg/shapes.py": "def add(xs, start=0):\n    return sum(xs, start)\n\n\nclass Box:\n    def add(self, x):\n        pass\n",
               "util.py": "def twice(x):\n    return 2 * x\n\n\ndef twice(x):\n    return x + x\n"}  # fmt: skip
    main = "import pkg.shapes as sh\nfrom util import twice\n\nt = sh.add([1, 2])\nu = twice(3)\n"
    assert imported_entry_values(main, _at(4, main), modules) == {}  # `add` is also a method there: not plain
    plain = {**modules, "pkg/shapes.py": "def add(xs, start=0):\n    return sum(xs, start)\n"}
    known = imported_entry_values(main, _at(4, main), plain)[("pkg/shapes.py", "add")]
    assert known.complete and known.locals_text() == '{"start":"0","xs":"[1, 2]"}'
    assert imported_entry_values(main, _at(5, main), plain) == {}  # `twice` is bound twice in util.py
    once = {**plain, "util.py": "def twice(x):\n    return 2 * x\n"}
    assert imported_entry_values(main, _at(5, main), once)[("util.py", "twice")].values == {"x": "3"}
    rebound = main + "twice = print\n"
    assert imported_entry_values(rebound, _at(5, rebound), once) == {}


def test_a_call_of_a_plain_class_enters_its_init_with_the_new_object_and_the_arguments() -> None:
    program = ("class Shape:\n    def __init__(self, name, sides=0):\n        self.name = name\n\n\n"
               "class Square(Shape):\n    pass\n\n\nclass Shown:\n    def __init__(self, x):\n        self.x = x\n\n    def __repr__(self):\n        return 'S'\n\n\n"
               "a = Shape('tri', 3)\nb = Square('sq')\nc = Shown(1)\n")  # fmt: skip
    known = entry_values(program, _at(18, program))["__init__"]
    assert known.complete and known.lines == frozenset({3})
    assert known.locals_text() == '{"name":"\'tri\'","self":"<__main__.Shape object at 0x?>","sides":"3"}'
    assert entry_values(program, _at(19, program))["__init__"].values["self"] == "<__main__.Square object at 0x?>"  # Shape's __init__
    assert entry_values(program, _at(18, program), "geo/shapes.py")["__init__"].values["self"] == "<geo.shapes.Shape object at 0x?>"
    assert entry_values(program, _at(20, program)) == {}  # a __repr__ of its own: the new object's repr is not known
    base = program.replace("class Shape:", "class Shape(Exception):")
    assert entry_values(base, _at(18, base)) == {}  # a library base: its __new__ and repr
    line18 = _at(18, program)
    grammar = state_constraint(program, line18, action=Action(kind=ActionKind.STEP_INTO))
    def entering(sides: str) -> str:
        frames = [Frame(name="__init__", line=3, locals={"name": "'tri'", "self": "<__main__.Shape object at 0x?>", "sides": sides}), line18.top]
        return lang.render_state(State(reason=StopReason.STEP, frames=frames), line18).removesuffix(lang.STATE_END)
    assert grammar.complete(entering("3")) and not grammar.complete(entering("0"))


def test_a_call_of_another_files_plain_class_shows_that_modules_name_in_the_new_objects_repr() -> None:
    from model.static.call_args import imported_entry_values

    modules = {"zoo/animals.py": "class Animal:\n    def __init__(self, name):\n        self.name = name\n"}
    main = "from zoo.animals import Animal\n\npet = Animal('owl')\n"
    known = imported_entry_values(main, _at(3, main), modules)[("zoo/animals.py", "__init__")]
    assert known.locals_text() == '{"name":"\'owl\'","self":"<zoo.animals.Animal object at 0x?>"}' and known.lines == frozenset({3})
