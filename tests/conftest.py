"""Shared pytest fixtures.

`tiny_checkpoint`: a Hugging Face checkpoint folder holding a randomly initialised
LlamaForCausalLM of a few hundred thousand parameters and a byte-level BPE tokenizer trained on a
few rendered traces (model.prompt.tokenizer when present). Session-scoped, built once under pytest's
tmp_path_factory; reuse it anywhere a real (untrained) model is needed.

Hypothesis profiles: ``quick`` (the default) draws fewer examples for the properties that leave their
count to the profile; ``all`` (``HYPOTHESIS_PROFILE=all``, set by `make test-all`) draws the full count.
Neither has a deadline: on a loaded machine a slow example is not a failure.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("quick", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("all", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))

TINY_PROGRAMS = [
    "def add(a, b):\n    c = a + b\n    return c\n\nx = add(1, 2)\ny = [x, x * 2]\nprint(y)\n",
    "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n\nr = fact(4)\ns = {'r': r}\n",
    "total = 0\nfor i in range(3):\n    total += i\nwords = ['a', 'b']\nname = ''.join(words)\n",
]


def _tokenizer_corpus() -> list[str]:
    """Rendered traces of the tiny programs when the language and recorder exist, else the sources."""
    texts = list(TINY_PROGRAMS)
    try:
        from model.prompt.language import render_text, render_trajectory
        from tracegen.fast import record_program, replay
        from protocol.debugger import Action, ActionKind, Step, Trajectory

        for source in TINY_PROGRAMS:
            trace = record_program(source)
            actions = [Action(kind=ActionKind.STEP_INTO)] * 12
            states = replay(trace, actions, [])
            steps = [Step(action=a, state=s) for a, s in zip(actions, states[1:])]
            texts.append(render_text(render_trajectory(Trajectory(program=source, initial=states[0], steps=steps))))
    except Exception:  # noqa: BLE001 - the corpus only shapes the vocabulary
        pass
    return texts


def _special_tokens() -> list[str]:
    try:
        from model.prompt.language import SPECIAL_TOKENS  # type: ignore[attr-defined]

        return list(SPECIAL_TOKENS)
    except Exception:  # noqa: BLE001
        names = ["frame_sep", "call_sep", "line_sep", "return_sep", "exception_sep", "src_sep", "arg_sep", "action_sep",
                 "step_into", "step_over", "step_return", "breakpoint", "continue", "inv_step_into", "inv_step_over",
                 "inv_step_call", "exit_normal", "exit_error", "exit_never", "state_end", "pad"]
        return [f"<|{n}|>" for n in names]


def build_tokenizer(folder: Path) -> None:
    """Train and save a small tokenizer into `folder` (model.prompt.tokenizer when it exists)."""
    corpus = _tokenizer_corpus()
    try:
        from model.prompt.tokenizer import save_tokenizer, train_tokenizer

        tok = train_tokenizer(corpus, vocab_size=512)
        save_tokenizer(tok, folder)
        return
    except ImportError:
        pass
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=_special_tokens(), initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|exit_normal|>", pad_token=_special_tokens()[-1]).save_pretrained(str(folder))


def build_tiny_checkpoint(folder: Path, *, seed: int = 0, max_positions: int = 2048) -> Path:
    """Write a random 2-layer Llama (hidden 64, 4 heads of 16) plus tokenizer into `folder`."""
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    build_tokenizer(folder)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, head_dim=16, max_position_embeddings=max_positions,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(str(folder))
    GenerationConfig().save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random checkpoint folder (shared by the whole test session; do not modify it)."""
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny_checkpoint"))


# ---- training: a micro model shape and a small packed toy dataset (shared by the training-loop tests)
MICRO = {"layers": 2, "width": 128, "heads": 2, "intermediate": 256}


@pytest.fixture(scope="module")
def micro_config(tmp_path_factory) -> Path:
    import json

    path = tmp_path_factory.mktemp("cfg") / "micro.json"
    path.write_text(json.dumps(MICRO))
    return path


@pytest.fixture(scope="module")
def toy_packed(tmp_path_factory) -> Path:
    from train import data
    from train.toydata import toy_trajectories, write_shards

    root = tmp_path_factory.mktemp("toy")
    write_shards(root / "traj", toy_trajectories(120, seed=5))
    data.pack(root / "traj", root / "packed", seq_len=128, heldout_fraction=0.2, vocab_size=400, progress=False)
    return root / "packed"
