"""One LoRA behaviour-cloning step on real trajectories raises the log-probability of the kept actions."""

from __future__ import annotations

import random

import pytest
import torch

from agents.pae.rollout import run_episode
from agents.pae.scripted import ScriptedPolicy
from agents.pae.sites import build_sites
from methods.pae_learner.bc import BCExample, LoRAConfig, make_lora_model, target_logprob, train_bc

pytestmark = pytest.mark.integration


def test_one_lora_step_raises_logprob_of_kept_actions(env):
    from core.llm import get_local_model

    site = build_sites(0)["dictionary"]
    task = next(t for t in site.template_tasks(random.Random(2), 4) if t.template == "pos")
    traj = run_episode(env, ScriptedPolicy(task), task)  # a real, successful 2-step trajectory
    assert traj.length == 2 and traj.answer
    examples = [BCExample.from_messages(s.prompt, s.reply) for s in traj.steps]
    assert "Elements:" in examples[0].messages[-1][1] and examples[0].target.startswith("Thought:")

    lm = get_local_model()
    shared_before = {k: v.clone() for k, v in list(lm.model.state_dict().items())[:3]}
    cfg = LoRAConfig(r=8, alpha=16, lr=1e-3, grad_accum=len(examples), epochs=1, max_len=200, seed=0)
    model = make_lora_model(lm.model, cfg)
    before = [target_logprob(model, lm.tokenizer, ex, cfg.max_len) for ex in examples]
    stats = train_bc(model, lm.tokenizer, examples, cfg)
    after = [target_logprob(model, lm.tokenizer, ex, cfg.max_len) for ex in examples]
    assert stats.optimizer_steps == 1 and stats.examples == 2
    assert sum(after) > sum(before) + 0.5, (before, after)
    assert all(a > b for a, b in zip(after, before))
    # the gateway's shared model is untouched (LoRA lives on a copy)
    for k, v in shared_before.items():
        assert torch.equal(lm.model.state_dict()[k], v)
    assert not any("lora" in n for n, _ in lm.model.named_parameters())


def test_fresh_lora_start_is_drawn_from_the_seed_and_leaves_the_callers_rng_alone():
    """The SFT start must not depend on what used torch's RNG before (it did: same seed, other adapter)."""
    from core.llm import get_local_model

    lm = get_local_model()
    cfg = LoRAConfig(r=4, alpha=8, seed=3)

    def lora_weights(model):
        return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_A" in n}

    torch.manual_seed(123)
    first = lora_weights(make_lora_model(lm.model, cfg))
    expected_next = torch.rand(4)  # what the caller's generator yields after the call
    torch.manual_seed(123)
    make_lora_model(lm.model, cfg)
    assert torch.equal(torch.rand(4), expected_next)  # the call did not consume the caller's RNG
    torch.manual_seed(999)
    torch.rand(1000)  # another history of the global generator
    second = lora_weights(make_lora_model(lm.model, cfg))
    other = lora_weights(make_lora_model(lm.model, LoRAConfig(r=4, alpha=8, seed=4)))
    assert first and first.keys() == second.keys()
    assert all(torch.equal(first[k], second[k]) for k in first)
    assert any(not torch.equal(first[k], other[k]) for k in first)
    assert all(float(v.abs().sum()) > 0 for v in first.values())  # A is random, not zero


def test_two_trainings_from_one_seed_give_the_same_adapter():
    from core.llm import get_local_model

    lm = get_local_model()
    cfg = LoRAConfig(r=4, alpha=8, lr=1e-3, grad_accum=1, epochs=2, max_len=96, seed=7)
    examples = [
        BCExample.from_messages(
            [{"role": "user", "content": f"Task {i}: find the price."}], f"Thought: look.\nAction: Click [{i}]"
        )
        for i in range(3)
    ]

    def trained():
        torch.manual_seed(len(examples) * 1000 + int(torch.randint(0, 1000, (1,))))  # any caller history
        model = make_lora_model(lm.model, cfg)
        train_bc(model, lm.tokenizer, examples, cfg)
        return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}

    a, b = trained(), trained()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert any(float(v.abs().sum()) > 0 for k, v in a.items() if "lora_B" in k)  # it trained


def test_pae_updates_take_their_own_lr_and_keep_the_cached_sft_start():
    from agents.pae.config import RunConfig
    from agents.pae.nodes.learn import _sft_key, lora_config

    same, own = RunConfig(lr=5e-4), RunConfig(lr=5e-4, actor_lr=1e-4)
    assert lora_config(same, 1, actor=True).lr == 5e-4  # default: the SFT start's lr
    assert lora_config(own, 1, actor=True).lr == 1e-4 and lora_config(own, 3).lr == 5e-4
    assert _sft_key(same, ["t1", "t2"]) == _sft_key(own, ["t2", "t1"])  # a cached SFT start is reused
    assert _sft_key(RunConfig(lr=1e-4), ["t1"]) != _sft_key(same, ["t1"])
