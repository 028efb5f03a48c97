"""PAE's behaviour cloning runs on ``core.train.fit``: bit-identical to the loop it had before (golden run).

Three examples, gradient accumulation 2, two epochs: each epoch is a full step and a short one
(the last example alone, scaled as if the step were full). The literal losses are the OLD loop's
output (``methods/pae_learner/bc.py`` before it moved onto ``fit``), recorded on this machine with
one torch thread; :func:`_old_train_bc` is that loop verbatim, so the exact comparison also holds
where another CPU rounds differently.
"""

from __future__ import annotations

import random

import pytest
import torch

from methods.pae_learner.bc import BCExample, LoRAConfig, TrainStats, example_nll, make_lora_model, train_bc

# Per-example losses of the old loop (examples in its shuffled order, two epochs).
OLD_LOSSES = [
    5.1123270988464355,
    5.023468017578125,
    4.241133213043213,
    3.616793394088745,
    3.5637998580932617,
    2.8482344150543213,
]


def _old_train_bc(model, tokenizer, examples, cfg):
    """The loop before the migration (its log line left out)."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=cfg.lr)
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)
    stats = TrainStats()
    model.train()
    for _epoch in range(cfg.epochs):
        order = list(range(len(examples)))
        rng.shuffle(order)
        pending = 0
        for i in order:
            loss = example_nll(model, tokenizer, examples[i], cfg.max_len)
            (loss / cfg.grad_accum).backward()
            stats.losses.append(float(loss.detach()))
            stats.examples += 1
            pending += 1
            if pending == cfg.grad_accum:
                opt.step()
                opt.zero_grad(set_to_none=True)
                stats.optimizer_steps += 1
                pending = 0
        if pending:
            opt.step()
            opt.zero_grad(set_to_none=True)
            stats.optimizer_steps += 1
    model.eval()
    return stats


@pytest.fixture(scope="module")
def lm():
    from core.llm import get_local_model

    return get_local_model()


def _lora(model):
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}


def test_bc_on_fit_is_bit_identical_to_the_old_loop(lm):
    cfg = LoRAConfig(r=4, alpha=8, lr=1e-3, grad_accum=2, epochs=2, max_len=64, seed=7)
    examples = [
        BCExample.from_messages(
            [{"role": "user", "content": f"Task {i}: find the price."}], f"Thought: look.\nAction: Click [{i}]"
        )
        for i in range(3)
    ]
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        new_model = make_lora_model(lm.model, cfg)
        seen = []
        new = train_bc(new_model, lm.tokenizer, examples, cfg, on_step=lambda i, n, loss: seen.append((i, n, loss)))
        old_model = make_lora_model(lm.model, cfg)
        old = _old_train_bc(old_model, lm.tokenizer, examples, cfg)
    finally:
        torch.set_num_threads(before)
    assert new.losses == old.losses  # every example's loss, exactly
    assert (new.examples, new.optimizer_steps) == (old.examples, old.optimizer_steps) == (6, 4)
    a, b = _lora(new_model), _lora(old_model)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert any(float(v.abs().sum()) > 0 for k, v in a.items() if "lora_B" in k)  # it trained
    assert old.losses == pytest.approx(OLD_LOSSES, rel=1e-6)  # the numbers recorded before the migration
    # progress once per optimizer step: examples done so far, of all, and the last example's loss
    assert [(i, n) for i, n, _ in seen] == [(2, 6), (3, 6), (5, 6), (6, 6)]
    assert [loss for _, _, loss in seen] == [new.losses[k - 1] for k, _, _ in seen]
    assert not new_model.training
