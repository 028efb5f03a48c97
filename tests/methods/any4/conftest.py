"""Fixtures for the any4 method tests: a tiny random llama built from a config (no download)."""

from __future__ import annotations

import pytest
import torch


def make_tiny_llama(seed: int = 0, hidden: int = 64, layers: int = 2, vocab: int = 96):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # non-Gaussian, channel-scaled weights like a trained model
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(torch.linspace(0.5, 2.0, p.shape[1]))
    return model


@pytest.fixture
def tiny_llama():
    return make_tiny_llama()


@pytest.fixture
def calib_ids():
    return torch.randint(0, 96, (1, 24), generator=torch.Generator().manual_seed(5))


@pytest.fixture
def tiny_llama_factory():
    """``make_tiny_llama`` for tests that need more than one instance or other sizes."""
    return make_tiny_llama
