"""Teacher-forced NLL of the gold solution given a prompt (spec §6.1 item 4).

The prompt is tokenized with the tokenizer's default special tokens and the gold
text without any; the sequence is ``prompt_ids + gold_ids``, so every arm of a
query scores exactly the same gold tokens. One forward pass per sequence gives
``−log p(g_t | prompt, g_<t)`` for the gold tokens only; the LM head is applied at
those positions alone. Returned per sequence: mean per-token NLL, sum and count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class GoldNll:
    """NLL of one gold text."""

    mean: float
    total: float
    tokens: int


def _pair_ids(tokenizer: Any, prompt: str, gold: str) -> tuple[list[int], list[int]]:
    p = [int(i) for i in tokenizer(prompt)["input_ids"]]
    g = [int(i) for i in tokenizer(gold, add_special_tokens=False)["input_ids"]]
    if not p or not g:
        raise ValueError("the prompt and the gold text must both be non-empty")
    return p, g


def gold_nll(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    golds: Sequence[str],
    *,
    batch_size: int = 4,
    max_tokens: int = 4096,
    progress: Callable[[float], None] | None = None,
) -> list[GoldNll]:
    """Per-pair gold NLL, batched by length with right padding (the padding never affects real tokens)."""
    if len(prompts) != len(golds):
        raise ValueError("prompts and golds differ in length")
    pairs = [_pair_ids(tokenizer, p, g) for p, g in zip(prompts, golds)]
    for p, g in pairs:
        if len(p) + len(g) > max_tokens:
            raise ValueError(f"sequence of {len(p) + len(g)} tokens exceeds max_tokens={max_tokens}")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    pad = int(pad[0] if isinstance(pad, (list, tuple)) else pad)
    out: list[GoldNll | None] = [None] * len(pairs)
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    base = model.base_model
    head = model.get_output_embeddings()
    dev = next(model.parameters()).device  # ids are built on the CPU and moved; only the NLLs come back
    done = 0
    for b0 in range(0, len(order), max(1, batch_size)):
        idx = order[b0 : b0 + batch_size]
        seqs = [pairs[i][0] + pairs[i][1] for i in idx]
        width = max(len(s) for s in seqs)
        ids = torch.full((len(idx), width), pad, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, : len(s)] = torch.tensor(s)
            mask[r, : len(s)] = 1
        with torch.inference_mode():
            hidden = base(input_ids=ids.to(dev), attention_mask=mask.to(dev), use_cache=False).last_hidden_state
            for r, i in enumerate(idx):
                n_p, g = len(pairs[i][0]), pairs[i][1]
                # the state at position t predicts token t+1: gold tokens sit at n_p .. n_p+len(g)-1
                h = hidden[r, n_p - 1 : n_p - 1 + len(g)]
                logp = torch.log_softmax(head(h).float(), dim=-1)
                nll = -logp[torch.arange(len(g), device=dev), torch.tensor(g, device=dev)]
                out[i] = GoldNll(mean=float(nll.mean()), total=float(nll.sum()), tokens=len(g))
        done += len(idx)
        if progress is not None:
            progress(done / len(pairs))
    return [o for o in out if o is not None]
