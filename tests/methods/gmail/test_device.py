"""GMAIL off the CPU: the captioner on ``meta`` (PyTorch's lazy stand-in has no GRU) and the §7 checks on the stand-in.

The whole ``gmail.align`` job runs on the stand-in accelerator in ``tests/test_devices.py`` (without the
captioner, whose GRU the lazy backend cannot run); these cover the rest.
"""

from __future__ import annotations

import math

import torch

from tests.devices import lazy_safe_views, stand_in_device


def test_captioner_trains_and_decodes_on_the_embeddings_device(few_pairs):
    from methods.gmail.caption import train_captioner

    emb = torch.randn(len(few_pairs), 32, device="meta")  # any CPU tensor mixed in fails on meta
    model, vocab, losses = train_captioner(emb, few_pairs.captions, steps=3, seed=0, batch_size=4)
    assert len(losses) == 3 and all(math.isnan(v) for v in losses)  # meta: shapes, no numbers
    assert all(p.device.type == "meta" for p in model.parameters())
    ids = model.generate_ids(emb[:2], max_len=5)
    assert ids.device.type == "meta" and tuple(ids.shape) == (2, 5)


def test_mechanical_checks_hold_on_the_stand_in_device(tiny_backbone, few_pairs):
    import copy

    from methods.gmail.checks import check_asymmetry, check_lora_identity, check_router
    from methods.gmail.model import GmailEncoders, batched

    dev = stand_in_device()
    bb = copy.deepcopy(tiny_backbone).to(dev)
    gen, real = few_pairs.gen[:8].to(dev), few_pairs.real[:8].to(dev)
    real_emb = batched(GmailEncoders(bb).f_r, real)
    with lazy_safe_views():
        results = [check_asymmetry(bb, gen, real_emb), check_lora_identity(bb, gen), check_router(bb, real)]
    assert all(ok for ok, _ in results), results
