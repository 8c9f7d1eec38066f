"""Measurements taken during training: held-out loss and next-state exact match (greedy decoding)."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from train.manifest import NextStateExample, read_examples
from train.packing import PackedSplit

MAX_NEW_TOKENS = 384


def heldout_loss(model: Any, split: PackedSplit, sequences: int, batch: int, device: str, autocast: Callable[[], AbstractContextManager]) -> float:
    """Mean cross-entropy per target token over the first `sequences` held-out sequences."""
    import torch

    n = min(sequences, len(split))
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, n, batch):
            ids, mask = split.batch(np.arange(start, min(n, start + batch)))
            labels = np.where(mask, ids, -100)
            items = int((labels[:, 1:] != -100).sum())
            if items == 0:
                continue
            ids_t, labels_t = torch.from_numpy(ids).to(device), torch.from_numpy(labels).to(device)
            with autocast():
                loss = model(input_ids=ids_t, labels=labels_t, num_items_in_batch=torch.tensor(items, device=device)).loss
            total += float(loss) * items
            count += items
    return total / count if count else float("nan")


def generate_state(model: Any, tokenizer: Any, prompt: str, eos_id: int, pad_id: int, device: str,
                   autocast: Callable[[], AbstractContextManager], max_new: int = MAX_NEW_TOKENS) -> str:
    """The greedy continuation of `prompt` up to and including the state-end token (at most `max_new` tokens), as text."""
    import torch

    from model.prompt.value_chars import encode_text

    ids = encode_text(tokenizer, prompt)  # as the model was trained (value chars when it has the flag)
    limit = int(getattr(model.config, "max_position_embeddings", 2048))
    room = max(1, min(max_new, limit - len(ids)))
    ids = ids[-(limit - room) :] if len(ids) > limit - room else ids
    with torch.no_grad(), autocast():
        out = model.generate(
            torch.tensor([ids], device=device), attention_mask=torch.ones(1, len(ids), dtype=torch.long, device=device),
            max_new_tokens=room, do_sample=False, eos_token_id=eos_id, pad_token_id=pad_id,
        )  # fmt: skip
    return tokenizer.decode(out[0, len(ids) :].tolist(), skip_special_tokens=False)


def target_text(example: NextStateExample) -> str:
    """The rendered target state (what a perfect model writes)."""
    from model.prompt import language
    from protocol.debugger import State

    previous = State.model_validate_json(example.previous) if example.previous else None
    return language.render_state(State.model_validate_json(example.target), previous)


def judge(example: NextStateExample, generated: str) -> tuple[bool, bool]:
    """(parsed, exact): whether the text parses as a state, and whether it equals the target state."""
    from model.prompt import language
    from protocol.debugger import State

    previous = State.model_validate_json(example.previous) if example.previous else None
    try:
        predicted = language.parse_state(generated, previous, example.program)
    except (language.ParseError, ValueError):
        return False, False
    target = language.canonical_state(State.model_validate_json(example.target), example.program)
    return True, language.canonical_state(predicted, example.program) == target


def next_state_accuracy(model: Any, built: Any, data_dir: Path, count: int, device: str, autocast: Callable[[], AbstractContextManager]) -> dict[str, Any]:
    """Exact match of greedily generated next states on the first `count` held-out examples, overall and per action."""
    from model.prompt.value_chars import encode_text

    examples = read_examples(data_dir, count)
    if not examples:
        return {}
    hits: dict[str, list[int]] = defaultdict(list)
    parsed = 0
    for ex in examples:
        # a continuation longer than the target cannot match it: stop a little after its length
        budget = len(encode_text(built.tokenizer, target_text(ex))) + 8
        text = generate_state(model, built.tokenizer, ex.prompt, built.eos_id, built.pad_id, device, autocast, budget)
        ok, exact = judge(ex, text)
        parsed += ok
        hits[ex.action].append(int(exact))
    total = sum(sum(v) for v in hits.values())
    return {
        "next_state_exact": total / len(examples),
        "next_state_parsed": parsed / len(examples),
        "next_state_n": len(examples),
        "next_state_by_action": {k: sum(v) / len(v) for k, v in sorted(hits.items())},
    }
