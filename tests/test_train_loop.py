"""The training loop with tiny real models: resume is exact, output folders reload in transformers and
generate parseable states, fine-tuning an existing causal LM, the command line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from model.prompt import language
from protocol.debugger import Action, ActionKind
from train import data
from train.loop import TrainConfig, train
from train.metrics import read_metrics
from train.toydata import toy_trajectories, write_shards

REPO = Path(__file__).resolve().parents[1]


def _cfg(**kw) -> TrainConfig:
    base = dict(micro_batch=4, eval_states=2, eval_sequences=4, eval_every=1000, log_every=1, progress=False, threads=1)
    return TrainConfig(**(base | kw))


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def test_resume_continues_exactly(toy_packed, micro_config, tmp_path):
    import torch

    straight = train(_cfg(data=toy_packed, out=tmp_path / "a", config_file=micro_config, steps=6))
    train(_cfg(data=toy_packed, out=tmp_path / "b", config_file=micro_config, steps=6, stop_after=3))
    assert json.loads((tmp_path / "b" / "training_summary.json").read_text())["steps"] == 3
    resumed = train(_cfg(out=tmp_path / "b", resume=True))
    assert straight["steps"] == resumed["steps"] == 6 and straight["tokens_seen"] == resumed["tokens_seen"]
    a, b = _weights(tmp_path / "a"), _weights(tmp_path / "b")
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-5, atol=1e-6)
    lrs_a = [r["lr"] for r in read_metrics(tmp_path / "a") if r["kind"] == "train"]
    lrs_b = [r["lr"] for r in read_metrics(tmp_path / "b") if r["kind"] == "train"]
    assert lrs_a == pytest.approx(lrs_b)
    # the trainer state never ends up in git
    assert (tmp_path / "b" / "trainer_state" / ".gitignore").read_text().strip() == "*"


def test_refuses_to_clobber_or_resume_nothing(toy_packed, micro_config, tmp_path):
    with pytest.raises(ValueError, match="nothing to resume|no trainer state"):
        train(_cfg(out=tmp_path / "empty", resume=True))
    train(_cfg(data=toy_packed, out=tmp_path / "c", config_file=micro_config, steps=1, eval_states=0))
    with pytest.raises(ValueError, match="--resume"):
        train(_cfg(data=toy_packed, out=tmp_path / "c", config_file=micro_config, steps=1))


def test_time_budget_stops_and_saves(toy_packed, micro_config, tmp_path):
    summary = train(_cfg(data=toy_packed, out=tmp_path / "t", config_file=micro_config, time_budget_min=0.03, eval_states=0))
    assert summary["steps"] >= 1
    kinds = [r["kind"] for r in read_metrics(tmp_path / "t")]
    assert kinds[0] == "start" and kinds[-1] == "end" and "eval" in kinds
    assert "heldout_loss" in summary["final_eval"]
    assert (tmp_path / "t" / "model.safetensors").is_file()


@pytest.mark.slow
def test_overfit_model_reloads_in_transformers_and_writes_a_parseable_state(micro_config, tmp_path):
    """A few trajectories, learned by heart; the folder loads with Auto* classes and generation stops at the state end."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    trajs = toy_trajectories(4, seed=11, inverse_every=0)
    write_shards(tmp_path / "traj", trajs)
    data.pack(tmp_path / "traj", tmp_path / "packed", seq_len=128, heldout_fraction=0.0, vocab_size=400, progress=False)
    out = tmp_path / "model"
    train(_cfg(data=tmp_path / "packed", out=out, config_file=micro_config, steps=120, lr=5e-3, warmup=10, eval_states=0, eval_sequences=0))
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        assert (out / name).is_file(), name
    tok = AutoTokenizer.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out)
    gen = GenerationConfig.from_pretrained(out)
    assert gen.eos_token_id == tok.convert_tokens_to_ids(language.STATE_END)
    assert model.config.max_position_embeddings == 128
    exact = 0
    for traj in trajs:
        history = [traj.initial, *traj.steps[:1]]
        prompt = language.render_prompt(traj.program, traj.breakpoints, history, Action(kind=ActionKind.STEP_OVER))
        ids = tok(prompt, add_special_tokens=False, return_tensors="pt")
        out_ids = model.generate(**ids, max_new_tokens=60, do_sample=False)
        text = tok.decode(out_ids[0, ids["input_ids"].shape[1] :], skip_special_tokens=False)
        assert text.endswith(language.STATE_END)  # stopped by generation_config's eos
        state = language.parse_state(text, traj.steps[0].state, traj.program)
        exact += state == language.canonical_state(traj.steps[1].state, traj.program)
    assert exact >= 3


def _foreign_model(folder: Path) -> None:
    """A tiny GPT-2 with its own byte-level BPE that knows none of the language's special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = ["def f(x):\n    return x + 1\n", "for i in range(10):\n    print(i)\n"] * 50
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    fast.save_pretrained(folder)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(fast), n_layer=1, n_embd=64, n_head=2, n_positions=256)).save_pretrained(folder)


def test_finetune_adds_special_tokens_and_repacks(toy_packed, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = tmp_path / "base"
    _foreign_model(base)
    before = len(AutoTokenizer.from_pretrained(base))
    out = tmp_path / "ft"
    summary = train(_cfg(data=toy_packed, out=out, init_from=base, steps=3, eval_states=1))
    tok = AutoTokenizer.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out)
    assert model.config.model_type == "gpt2"
    assert len(tok) == before + len(language.SPECIAL_TOKENS)
    assert model.get_input_embeddings().weight.shape[0] >= len(tok)
    for special in language.SPECIAL_TOKENS:
        assert len(tok.encode(special, add_special_tokens=False)) == 1, special
    # the data were re-tokenized with the fine-tuned model's tokenizer, from the packed folder's source
    assert summary["data"]["dir"] == str(out / "data")
    from train.manifest import Manifest
    from train.modeling import tokenizer_hash

    assert Manifest.load(out / "data").tokenizer_sha256 == tokenizer_hash(tok)
    assert summary["final_eval"]["next_state_n"] == 1
    assert summary["init_from"] == str(base) and summary["init_from_summary"] is None  # a foreign model has no summary


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "neural_debugger_cli", "train", *args], cwd=REPO, capture_output=True, text=True, timeout=240)


@pytest.mark.slow
def test_cli_trains_from_trajectory_shards_and_reports_errors(micro_config, tmp_path):
    write_shards(tmp_path / "traj", toy_trajectories(40, seed=2))
    out = tmp_path / "ck"
    done = _cli("--data", str(tmp_path / "traj"), "--out", str(out), "--config", str(micro_config), "--steps", "2",
                "--seq-len", "128", "--eval-states", "1", "--batch", "2", "--no-progress", "--threads", "1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "saved" in done.stdout and "tokens/s" in done.stdout
    assert (out / "data" / "pack.json").is_file() and (out / "model.safetensors").is_file()
    bad = _cli("--data", str(tmp_path / "traj"), "--out", str(tmp_path / "x"), "--preset", "huge", "--steps", "1")
    assert bad.returncode == 2 and "unknown preset 'huge'" in bad.stderr
    missing = _cli("--data", str(tmp_path / "nothing"), "--out", str(tmp_path / "y"), "--steps", "1")
    assert missing.returncode == 2 and "no trajectories" in missing.stderr
    nothing = _cli("--out", str(tmp_path / "z"), "--resume")
    assert nothing.returncode == 2 and "resume" in nothing.stderr


@pytest.mark.parametrize("precision", ["bf16", "bf16-matmul"])
def test_reduced_precision_trains_like_fp32_and_restores_the_setting(toy_packed, micro_config, tmp_path, precision):
    """bf16 autocast / oneDNN bf16 matmuls on the CPU: the same steps reach nearly the same loss as fp32,
    the saved weights stay float32, and the process-wide matmul setting is back afterwards."""
    import torch

    before = torch.backends.mkldnn.matmul.fp32_precision
    fp32 = train(_cfg(data=toy_packed, out=tmp_path / "fp32", config_file=micro_config, steps=8, eval_states=0, precision="fp32"))
    low = train(_cfg(data=toy_packed, out=tmp_path / precision, config_file=micro_config, steps=8, eval_states=0, precision=precision))
    assert torch.backends.mkldnn.matmul.fp32_precision == before
    assert low["final_eval"]["heldout_loss"] == pytest.approx(fp32["final_eval"]["heldout_loss"], rel=0.03)
    assert all(t.dtype == torch.float32 for t in _weights(tmp_path / precision).values())
