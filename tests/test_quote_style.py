"""Double-quoted string literals (tracegen.synth.quote_style) change a program's spelling and nothing else."""
from __future__ import annotations

import ast
import json
import random
from pathlib import Path

import pytest

from tracegen.dataset import SynthConfig, make_dataset
from tracegen.synth import generate_program
from tracegen.synth.everyday import generate_everyday
from tracegen.synth.quote_style import double_quoted


def test_only_plain_single_quoted_literals_change() -> None:
    source = "x = {'apple': 1, \"b\": 'it\\'s'}\ny = f'{x[\"apple\"]}!'\nz = r'\\d' + b'ab' + '''tri''' + f'{1}'\n"
    assert double_quoted(source) == "x = {\"apple\": 1, \"b\": 'it\\'s'}\ny = f'{x[\"apple\"]}!'\nz = r\"\\d\" + b\"ab\" + '''tri''' + f\"{1}\"\n"
    assert double_quoted("s = 'open\n") == "s = 'open\n"  # does not tokenize: unchanged


@pytest.mark.parametrize("seed", range(4))
def test_generated_programs_keep_their_syntax_tree(seed: int) -> None:
    rng = random.Random(seed)
    for source in [generate_program(rng).source for _ in range(10)] + [generate_everyday(rng).source for _ in range(5)]:
        restyled = double_quoted(source)
        assert ast.dump(ast.parse(restyled)) == ast.dump(ast.parse(source))
        if "'" in source:
            assert restyled != source or all('"' in line or "\\'" in line for line in source.splitlines() if "'" in line)


def test_a_dataset_with_double_quotes_draws_the_same_programs_and_records_the_same_runs(tmp_path: Path) -> None:
    def rows(share: float) -> list[dict]:
        out = tmp_path / f"dq{share}"
        make_dataset(SynthConfig(count=6, seed=3, per_program=1, double_quotes=share), out, show_progress=False)
        return [json.loads(line) for line in (out / "shard-00000.jsonl").read_text().splitlines()]

    def without_source(value: object) -> object:
        if isinstance(value, dict):
            return {k: without_source(v) for k, v in value.items() if k not in ("source", "program")}
        return [without_source(v) for v in value] if isinstance(value, list) else value

    plain, quoted = rows(0.0), rows(1.0)
    assert [without_source(r) for r in plain] == [without_source(r) for r in quoted]
    assert [double_quoted(r["program"]) for r in plain] == [r["program"] for r in quoted]
    assert any(r["program"] != q["program"] for r, q in zip(plain, quoted))
    with pytest.raises(ValueError):
        SynthConfig(count=1, double_quotes=1.5)
