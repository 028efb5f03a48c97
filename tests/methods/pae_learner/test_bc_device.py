"""PAE's learner on another device: LoRA behaviour cloning on the lazy stand-in matches the CPU run."""

from __future__ import annotations

import pytest
import torch

from methods.pae_learner.bc import BCExample, LoRAConfig, make_lora_model, target_logprob, train_bc
from tests.devices import lazy_safe_views, stand_in_device


@pytest.fixture(scope="module")
def tiny():
    """A tiny random Llama with SmolLM2's tokenizer (its chat template), on the CPU."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from core.llm.local_models import converted_dir

    tok = AutoTokenizer.from_pretrained(str(converted_dir()))
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(cfg).eval(), tok


def _run(model, tok, device):
    cfg = LoRAConfig(r=4, alpha=8, dropout=0.0, lr=1e-2, grad_accum=2, epochs=1, max_len=64, seed=3)  # no RNG
    examples = [
        BCExample.from_messages(
            [{"role": "user", "content": f"Task {i}: open it."}], f"Thought: go.\nAction: Click [{i}]"
        )
        for i in range(3)
    ]
    lora = make_lora_model(model, cfg, device=device)
    before = target_logprob(lora, tok, examples[0], cfg.max_len)
    stats = train_bc(lora, tok, examples, cfg)
    after = target_logprob(lora, tok, examples[0], cfg.max_len)
    weights = {n: p.detach().cpu() for n, p in lora.named_parameters() if "lora_B" in n}
    return lora, stats, before, after, weights


def test_bc_trains_on_the_stand_in_as_on_the_cpu(tiny):
    model, tok = tiny
    dev = stand_in_device()
    with lazy_safe_views():
        lora, stats, before, after, weights = _run(model, tok, dev)
    assert all(p.device.type == "lazy" for p in lora.parameters())  # the copy moved, the shared model did not
    assert all(p.device.type == "cpu" for p in model.parameters())
    _, ref, ref_before, ref_after, ref_weights = _run(model, tok, "cpu")
    assert (stats.examples, stats.optimizer_steps) == (ref.examples, ref.optimizer_steps) == (3, 2)
    assert stats.losses == pytest.approx(ref.losses, rel=1e-4)
    assert (before, after) == pytest.approx((ref_before, ref_after), rel=1e-4)
    assert after > before
    assert weights.keys() == ref_weights.keys()
    for k in weights:
        torch.testing.assert_close(weights[k], ref_weights[k], rtol=1e-3, atol=1e-5)
