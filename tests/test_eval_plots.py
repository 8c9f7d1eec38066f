"""Plots and RESULTS.md are generated from the summary files, with the paper's numbers beside ours."""
from __future__ import annotations

import json
from pathlib import Path

from train.eval import plots


def _write(folder: Path, data: dict) -> None:
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps(data))


def test_plots_and_table_from_summaries(tmp_path: Path) -> None:
    _write(tmp_path / "cruxeval-output", {"pass@1": 12.34, "n": 800, "passed": 99, "backend": "transformers", "model": "checkpoints/default"})
    _write(tmp_path / "cruxeval-oracle-output", {"pass@1": 99.5, "n": 800, "passed": 796, "backend": "oracle"})
    rate = {"stops": 10, "location": 0.9, "locals": 0.8, "state": 0.7}
    _write(tmp_path / "fidelity", {"overall": rate, "by_action": {"step_into": rate, "step_over": rate}, "by_horizon": {"1": rate, "3-4": rate},
                                   "programs_used": 3, "programs": "x", "seed": 0, "scripts": 2, "max_steps": 12, "backend": "transformers",
                                   "model": "checkpoints/default"})
    written = plots.make_all(tmp_path)
    names = sorted(p.name for p in written)
    assert names == ["RESULTS.md", "cruxeval.png", "fidelity_by_action.png", "fidelity_by_horizon.png"]
    for p in written:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    table = (tmp_path / "RESULTS.md").read_text()
    assert "12.3 (99/800)" in table and "99.5 (796/800)" in table and "48.0" in table and "83.2" in table
    assert "| step_into | 10 | 90.0 | 80.0 | 70.0 |" in table


def test_no_summaries_writes_nothing(tmp_path: Path) -> None:
    assert plots.make_all(tmp_path) == []


def test_readme_gets_the_tables_between_its_markers(tmp_path):
    from train.eval.plots import README_END, README_START, update_readme

    readme = tmp_path / "README.md"
    readme.write_text(f"# Project\n\nintro\n\n{README_START}\nold table\n{README_END}\n\nrest\n")
    results_md = "# Results\n\n## CruxEval pass@1\n\n| a | b |\n\n![cruxeval](cruxeval.png)\n"
    assert update_readme(readme, results_md, "results")
    text = readme.read_text()
    assert "old table" not in text and "intro" in text and text.rstrip().endswith("rest")
    assert "### CruxEval pass@1" in text and "(results/cruxeval.png)" in text and "# Results" not in text
    assert not update_readme(tmp_path / "missing.md", results_md, "results")
    (tmp_path / "plain.md").write_text("no markers")
    assert not update_readme(tmp_path / "plain.md", results_md, "results")


def test_realworld_table_appears_when_its_summaries_exist(tmp_path):
    from train.eval.plots import load_summaries, results_markdown

    rates = {"stops": 40, "location": 0.5, "locals": 0.25, "state": 0.125}
    for name, used in (("realworld-long", 18), ("realworld-projects", 17)):
        (tmp_path / name).mkdir()
        summary = {"overall": rates, "programs_used": used, "scripts": 1, "seed": 0, "max_steps": 12, "free_running": True, "model": "m"}
        (tmp_path / name / "summary.json").write_text(json.dumps(summary))
    text = results_markdown(load_summaries(tmp_path))
    assert "## Real-world code" in text and "free-running" in text
    assert "| long single files (18) | 40 | 50.0 | 25.0 | 12.5 |" in text
    assert "| two-file projects (main.py + the module) (17) | 40 | 50.0 | 25.0 | 12.5 |" in text
    assert "Real-world code" not in results_markdown({})


def test_everyday_row_appears_when_its_summary_exists(tmp_path):
    from train.eval.plots import load_summaries, results_markdown

    (tmp_path / "everyday").mkdir()
    summary = {"overall": {"stops": 80, "location": 0.5, "locals": 0.25, "state": 0.125}, "programs_used": 24, "scripts": 1,
               "seed": 0, "max_steps": 12, "free_running": True, "model": "m"}
    (tmp_path / "everyday" / "summary.json").write_text(json.dumps(summary))
    text = results_markdown(load_summaries(tmp_path))
    assert "## Everyday programs" in text and "free-running" in text
    assert "| everyday (24) | 80 | 50.0 | 25.0 | 12.5 |" in text
    assert "Everyday programs" not in results_markdown({})


def test_the_table_says_how_answers_were_decoded() -> None:
    from train.eval.plots import _decoding_note

    assert _decoding_note({}) == "Ours decodes greedily. "
    note = _decoding_note({"input": {"call_candidates": 8}, "output": {"coarse_candidates": 4}, "output-breakpoint": {"coarse_candidates": 4}})
    assert "most likely of 8" in note and "most likely of 4" in note
    assert "most likely of 4" not in _decoding_note({"input": {"call_candidates": 8}, "output": {"coarse_candidates": 1}})
    assert "contradicts" not in note  # a run before the evidence term
    assert "less 8 per use of an argument" in _decoding_note({"input": {"call_candidates": 8, "evidence_weight": 8.0}})
