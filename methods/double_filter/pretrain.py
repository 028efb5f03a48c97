"""ITC + ITM pretraining of the two-stream VLP on captioned scenes, cached as ``<cache_dir>/double_filter/<name>-<hash>``.

ITC: symmetric InfoNCE between the projected image and text [CLS] (learned temperature), with captions
of the same text counted as positives. ITM: the fused [CLS] classifies matched vs unmatched pairs; each
image gets a hard negative caption and each caption a hard negative image, drawn from the batch in
proportion to the ITC similarity (ALBEF). A local checkpoint (``model.pt`` + ``word_vocab.json`` of this
layout) can be given instead with ``checkpoint``.

Pretraining runs on any device (:func:`core.train.fit`); the cached weights are saved from the CPU and
loaded onto the caller's device, and their cache key does not depend on where they were trained.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from methods.double_filter.config import BACKBONES, Pretrained
from methods.double_filter.model import DoubleFilterVLP
from methods.double_filter.tasks import pretrain_pairs, tokenizer

log = logging.getLogger(__name__)


def hard_negatives(weights: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One column index per row of ``weights`` (n, n), drawn in proportion to the row (ITM's hard negatives).

    On the CPU: ``torch.multinomial`` with ``generator`` (the draws pretraining always made). Elsewhere the
    CPU ``generator`` cannot drive the device's sampler, so its uniforms are drawn on the CPU, moved, and
    inverted through the rows' cumulative sums (the same distribution, no read-back).
    """
    if weights.device.type == "cpu":
        return torch.multinomial(weights, 1, generator=generator)[:, 0]
    u = torch.rand(weights.shape[0], 1, generator=generator, dtype=torch.float64).to(weights.device)
    cdf = weights.double().cumsum(1)
    idx = torch.searchsorted(cdf, u * cdf[:, -1:], right=True)[:, 0]
    return idx.clamp(max=weights.shape[1] - 1)


def itc_itm_loss(model: DoubleFilterVLP, images, tokens, same, generator: torch.Generator, keep=None):
    """ITC + ITM of one batch; ``same`` (n, n) bool marks pairs whose captions are identical.

    Every tensor it builds lives on the inputs' device; ``generator`` is a CPU generator (see :func:`hard_negatives`).
    """
    img = model.encode_image(images, keep)
    txt, pad = model.encode_text(tokens)
    zi, zt = model.itc_features(img, txt)
    logits = model.logit_scale.exp().clamp(max=100) * zi @ zt.T
    target = same.float() / same.float().sum(1, keepdim=True)
    itc = 0.5 * (-(target * logits.log_softmax(1)).sum(1).mean() - (target.T * logits.log_softmax(0)).sum(0).mean())
    n = len(images)
    with torch.no_grad():
        w_i2t = logits.softmax(1).masked_fill(same, 0) + 1e-9
        w_t2i = logits.softmax(0).T.masked_fill(same.T, 0) + 1e-9
        neg_t = hard_negatives(w_i2t, generator)
        neg_i = hard_negatives(w_t2i, generator)
    pos = model.fuse(txt, pad, img)
    neg1 = model.fuse(txt[neg_t], pad[neg_t], img)  # image with a wrong caption
    neg2 = model.fuse(txt, pad, img[neg_i])  # caption with a wrong image
    out = model.itm_head(torch.cat([pos, neg1, neg2]))
    labels = torch.cat([out.new_ones(n), out.new_zeros(2 * n)]).long()
    return itc + F.cross_entropy(out, labels)


def pretrain(spec: Pretrained, progress=None, *, device: Any = "cpu", amp: str = "off") -> tuple[DoubleFilterVLP, dict]:
    """ITC + ITM pretraining of a fresh VLP on ``device`` (built on the CPU with the seed, then moved)."""
    from core.train import fit, seed_everything

    seed_everything(spec.train.seed)
    tok = tokenizer(spec.model.context_length)
    model = DoubleFilterVLP(spec.model, len(tok))
    images, caps = pretrain_pairs(spec.train.n_scenes)
    rng = np.random.default_rng(spec.train.seed)
    gen = torch.Generator().manual_seed(spec.train.seed)

    def batch(step: int):
        idx = rng.choice(len(images), spec.train.batch_size, replace=False)
        texts = [caps[i][int(rng.integers(len(caps[i])))] for i in idx]
        same = torch.tensor([[a == b for b in texts] for a in texts])
        return images[idx], tok(texts), same

    t0 = time.perf_counter()
    losses = fit(
        model,
        batch,
        lambda m, b: itc_itm_loss(m, *b, gen),
        steps=spec.train.steps,
        lr=spec.train.lr,
        warmup=spec.train.warmup,
        weight_decay=spec.train.weight_decay,
        device=device,
        amp=amp,
        progress=progress,
        message="ITC+ITM pretraining",
    )
    return model, {"losses": losses, "seconds": time.perf_counter() - t0}


def cache_dir(spec: Pretrained) -> Path:
    from core.config import get_settings

    return Path(get_settings().cache_dir) / "double_filter" / f"{spec.name}-{spec.hash()}"


def get_pretrained(
    name: str = "default", *, checkpoint: str | None = None, progress=None, device: Any = "cpu", amp: str = "off"
):
    """(model, tokenizer, info): the cached pretrained VLP of backbone ``name`` (pretrained now on ``device`` if
    missing) or a local checkpoint, in eval mode on ``device``."""
    from core.device import resolve_device
    from methods.vlm.tokenizer import WordTokenizer

    dev = resolve_device(device)
    if checkpoint is not None:
        folder = Path(checkpoint)
        if not (folder / "model.pt").is_file() or not (folder / "config.json").is_file():
            raise FileNotFoundError(
                f"{folder} needs model.pt and config.json (written by this module); nothing downloads"
            )
    else:
        spec = BACKBONES[name]
        folder = cache_dir(spec)
        if not (folder / "model.pt").is_file():
            log.info("pretraining the %s Double-Filter VLP into %s", name, folder)
            model, info = pretrain(spec, progress, device=dev, amp=amp)
            folder.parent.mkdir(parents=True, exist_ok=True)
            tmp = folder.with_name(f".{folder.name}.tmp{os.getpid()}")
            tmp.mkdir(parents=True, exist_ok=True)
            torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, tmp / "model.pt")
            tokenizer(spec.model.context_length).save(tmp / "word_vocab.json")
            from dataclasses import asdict

            (tmp / "config.json").write_text(json.dumps({"model": asdict(spec.model), "train": asdict(spec.train)}))
            (tmp / "train.json").write_text(json.dumps(info))
            if folder.exists():
                import shutil

                shutil.rmtree(folder)
            os.replace(tmp, folder)
    from methods.double_filter.config import ModelConfig

    conf = json.loads((folder / "config.json").read_text())
    tok = WordTokenizer.load(folder / "word_vocab.json")
    model = DoubleFilterVLP(ModelConfig(**conf["model"]), len(tok))
    model.load_state_dict(torch.load(folder / "model.pt", map_location="cpu", weights_only=True))
    info = json.loads((folder / "train.json").read_text()) if (folder / "train.json").is_file() else {}
    info["folder"] = str(folder)
    return model.to(dev).eval(), tok, info
