"""Stage 1, stage 2 and the captioner on :func:`core.train.fit` reproduce the old own loops bit for bit (CPU, fp32).

``train_golden.json`` beside this file is the OUTPUT OF THE OLD CODE (``methods/gmail/train.py``'s
``optimise`` with AdamW + CosineAnnealingWarmRestarts and ``methods/gmail/caption.py``'s AdamW +
CosineAnnealingLR loop, before they moved onto ``core.train.fit``; commit 401c525), recorded on a tiny
configuration: the untrained ``test`` tiny CLIP (seed 0), 24 training pairs at strength 1.0,
5 stage-1 / stage-2 steps of batch 8 with 2 warm restarts (seed 3), 6 captioner steps of batch 8
(seed 2), one torch thread. Per-step losses (and stage 1's L_align / L_CLIP), SHA-256 digests of the
trained weights, a text-feature sum and greedy caption ids must match exactly.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

from core.train import pin_threads

GOLDEN = json.loads((Path(__file__).parent / "train_golden.json").read_text())


def _digest(named) -> str:
    h = hashlib.sha256()
    for k, v in named:
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def trained():
    from methods.gmail.caption import train_captioner
    from methods.gmail.config import GmailConfig
    from methods.gmail.data import SPLIT_SALT, add_artifacts, render_pairs
    from methods.gmail.model import GmailEncoders, batched
    from methods.gmail.train import caption_embeddings, stage1, stage2
    from methods.vlm.backbone import tiny_clip
    from methods.vlm.config import get_preset
    from methods.vlm.train import build_tokenizer

    out = {}
    with pin_threads(1):
        torch.manual_seed(0)
        preset = get_preset("test")
        bb = tiny_clip(preset.model, build_tokenizer(preset, wordnet=False)).eval().requires_grad_(False)
        pairs = render_pairs("train", 24)
        pairs.gen = add_artifacts(pairs.clean_gen, 1.0, seed=SPLIT_SALT["train"])
        cfg = GmailConfig(stage1_steps=5, stage2_steps=5, batch_size=8, restarts=2, seed=3)
        probe = GmailEncoders(bb)
        real_emb = torch.nn.functional.normalize(
            bb.model.visual_projection(batched(probe.real_tower, pairs.real)), dim=-1
        )
        text_emb = caption_embeddings(bb, pairs.captions)
        for align in (True, False):
            torch.manual_seed(cfg.seed)
            enc = GmailEncoders(bb, rank=cfg.rank, alpha=cfg.lora_alpha)
            losses = stage1(enc, pairs.gen, real_emb, text_emb, cfg, align=align)
            weights = _digest((str(i), p) for i, p in enumerate(enc.trainable_parameters()))
            out[f"stage1_{align}"] = {**losses, "weights": weights}
            if align:
                gmail_enc = enc
        pooled_gen = batched(gmail_enc.gen_tower, pairs.gen)
        model, losses = stage2(bb, gmail_enc.gen_proj, pooled_gen, "generated", pairs.captions, cfg)
        text = model.text_features(["a red circle.", "two blue squares."]).sum().item()
        out["stage2"] = {"losses": losses, "weights": _digest(model.state_dict().items()), "text": text}
        emb = batched(gmail_enc.f_g, pairs.gen)
        cap, _vocab, closs = train_captioner(emb, pairs.captions, steps=6, seed=2, batch_size=8)
        ids = cap.generate(emb[:3], max_len=6)
        out["caption"] = {"losses": closs, "weights": _digest(cap.state_dict().items()), "ids": ids}
    return out


@pytest.mark.parametrize("key", ["stage1_True", "stage1_False"])
def test_stage1_is_bit_identical_to_the_old_loop(trained, key):
    new, old = trained[key], GOLDEN[key]
    assert new["total"] == old["total"]
    assert new["align"] == old["align"] and new["clip"] == old["clip"]
    assert new["weights"] == old["weights"]


def test_stage2_is_bit_identical_to_the_old_loop(trained):
    assert trained["stage2"] == GOLDEN["stage2"]


def test_captioner_is_bit_identical_to_the_old_loop(trained):
    assert trained["caption"] == GOLDEN["caption"]
