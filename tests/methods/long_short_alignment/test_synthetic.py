"""Synthetic tasks, the training job and the reproducer wiring (tiny sizes)."""

from __future__ import annotations

import pytest
import torch

from methods.long_short_alignment.synthetic import SynthConfig, decode, evaluate, make_batch, target, train


def test_targets_and_decoding():
    gen = torch.Generator().manual_seed(0)
    lengths = torch.tensor([1, 4, 9])
    tokens, bits = make_batch(3, lengths, gen)
    assert tokens.shape == (3, 10) and (tokens[:, 0] == 2).all()
    assert (tokens[2, 1:] != 3).all() and (tokens[0, 2:] == 3).all()
    assert torch.allclose(target("mean", bits, lengths), bits.sum(1) / lengths)
    y = target("outrep", bits, lengths)
    assert torch.allclose(decode("outrep", y), lengths.float(), rtol=1e-5)
    assert decode("outrep", torch.tensor([0.0])).item() == pytest.approx(100.0)  # clamp to [1/√100, 1]


def test_training_reduces_loss_and_learned_refuses_long_lengths():
    cfg = SynthConfig(task="mean", pe="learned", steps=40, batch=32, eval_per_length=20, d=16, ffn=32, layers=1)
    model, losses = train(cfg)
    assert sum(losses[-5:]) < sum(losses[:5])
    mse = evaluate(model, cfg, lengths=(5, 10, 20))
    assert mse[5] is not None and mse[10] is not None and mse[20] is None
