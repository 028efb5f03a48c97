"""Contrastive training of the tiny CLIP (CLIP's symmetric InfoNCE) and its evaluation.

Each step draws a batch from the mixture of the ``scenes``, ``digits`` and ``photos`` train
splits (``TrainConfig.mix``), one random true caption per image, and minimises
``(CE(s·I·Tᵀ, diag) + CE(s·T·Iᵀ, diag)) / 2`` with the learnable scale ``s = exp(logit_scale)``
clamped to 100 as in CLIP. The loop is :func:`core.train.fit` (AdamW, warm-up + cosine) on any
device: the model is built and initialised on the CPU (the same weights wherever it trains), batches
are drawn on the CPU and moved as they come; the trained model is cached device-free.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from core.train import fit, pin_threads, seed_everything
from methods.vlm.backbone import CLIPBackbone, tiny_clip
from methods.vlm.config import Preset
from methods.vlm.data import SCENE_SPLIT_SIZES, VLDataset, load_dataset, scene_split, vocabulary_texts
from methods.vlm.tokenizer import WordTokenizer
from methods.vlm.zeroshot import image_features, retrieval_recall, text_features, zero_shot_accuracy

log = logging.getLogger(__name__)

#: (dataset, split) pairs reported as zero-shot accuracy after training.
ZERO_SHOT_SETS = (
    ("objects", "test"),
    ("objects20", "test"),
    ("scenes", "test"),
    ("digits", "test"),
    ("photos", "test"),
)


@dataclass
class TrainResult:
    backbone: CLIPBackbone
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def clip_loss(img: torch.Tensor, txt: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """CLIP's symmetric InfoNCE over normalised, paired features."""
    logits = scale * img @ txt.t()
    target = torch.arange(len(img), device=logits.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2


def training_pool(preset: Preset) -> list[tuple[VLDataset, float]]:
    """(dataset, weight) of the training mixture; datasets of weight 0 are not loaded."""
    full = preset.train.n_scenes >= SCENE_SPLIT_SIZES["train"]
    w_scenes, w_digits, w_photos = preset.train.mix
    pool = []
    if w_scenes > 0:
        pool.append(
            (load_dataset("scenes", "train") if full else scene_split("train", preset.train.n_scenes), w_scenes)
        )
    if w_digits > 0:
        pool.append((load_dataset("digits", "train"), w_digits))
    if w_photos > 0:
        pool.append((load_dataset("photos", "train"), w_photos))
    if not pool:
        raise ValueError("the training mixture has no dataset with a positive weight")
    return pool


def build_tokenizer(preset: Preset, *, wordnet: bool) -> WordTokenizer:
    return WordTokenizer.build(vocabulary_texts(wordnet=wordnet), context_length=preset.model.context_length)


def train(preset: Preset, *, wordnet: bool = True, progress=None, device=None, amp: str = "off") -> TrainResult:
    """Train a fresh tiny CLIP for ``preset``; returns it in eval mode with the loss curve.

    ``device`` (``None``: the CPU) and ``amp`` go to :func:`core.train.fit`; the returned model is on ``device``.
    """
    cfg = preset.train
    with pin_threads(cfg.threads):
        seed_everything(cfg.seed)
        tokenizer = build_tokenizer(preset, wordnet=wordnet)
        backbone = tiny_clip(preset.model, tokenizer)
        mixture = training_pool(preset)
        pool = [d for d, _ in mixture]
        mix = np.asarray([w for _, w in mixture], dtype=np.float64)
        mix /= mix.sum()
        rng = np.random.default_rng(cfg.seed)

        def batch(_step: int) -> tuple[torch.Tensor, torch.Tensor]:
            which = rng.choice(len(pool), size=cfg.batch_size, p=mix)
            images, texts = [], []
            for d, n in zip(pool, np.bincount(which, minlength=len(pool)), strict=True):
                if n == 0:
                    continue
                idx = rng.integers(0, len(d), size=n)
                images.append(d.images[torch.as_tensor(idx)])
                texts += [d.captions[i][rng.integers(len(d.captions[i]))] for i in idx]
            return torch.cat(images), tokenizer(texts)

        def loss_fn(model: CLIPBackbone, b) -> torch.Tensor:
            images, tokens = b
            scale = model.model.logit_scale.exp().clamp(max=100.0)
            return clip_loss(model.encode_image(images), model.encode_text(tokens), scale)

        def clamp_scale(_step: int) -> None:  # after every step, without reading the loss back
            with torch.no_grad():
                backbone.model.logit_scale.clamp_(0, math.log(100.0))

        start = time.perf_counter()
        losses = fit(
            backbone,
            batch,
            loss_fn,
            steps=cfg.steps,
            lr=cfg.lr,
            warmup=cfg.warmup,
            weight_decay=cfg.weight_decay,
            clip=1.0,
            betas=(0.9, 0.98),
            after_step=clamp_scale,
            device=device,
            amp=amp,
            progress=progress,
            message=f"training the {preset.name} tiny CLIP: contrastive step",  # the phase the UI announces
        )
    backbone.eval().requires_grad_(False)
    for p in backbone.parameters():
        p.grad = None
    return TrainResult(backbone, losses, time.perf_counter() - start)


def retrieval_captions(ds: VLDataset) -> list[str]:
    """The most specific caption of each scene: attributes, position (single objects) and background.

    Index 5 is ``"{attributes} at the {position} on a {bg} background."`` for one object and
    index 3 ``"a picture of {attributes} on a {bg} background."`` for several (see :func:`render.captions`).
    """
    return [c[5] if len(c) > 5 else c[3] for c in ds.captions]


@torch.no_grad()
def evaluate(
    backbone: CLIPBackbone, *, include: tuple[tuple[str, str], ...] = ZERO_SHOT_SETS, retrieval_n: int | None = None
) -> dict[str, float]:
    """Zero-shot top-1 accuracy per dataset (with chance) and retrieval R@1/5 (with chance) on the test scenes."""
    out: dict[str, float] = {}
    for name, split in include:
        try:
            ds = load_dataset(name, split)
        except FileNotFoundError:
            continue
        out[f"zeroshot_{name}"] = zero_shot_accuracy(backbone, ds)
        out[f"chance_{name}"] = 1.0 / len(ds.classnames)
    test = load_dataset("scenes", "test") if retrieval_n is None else scene_split("test", retrieval_n)
    img = image_features(backbone, test.images)
    txt = text_features(backbone, retrieval_captions(test))
    out.update({f"retrieval_{k}": v for k, v in retrieval_recall(img, txt).items()})
    out["retrieval_chance_r@1"] = 1.0 / len(test)
    out["retrieval_chance_r@5"] = 5.0 / len(test)
    return out
