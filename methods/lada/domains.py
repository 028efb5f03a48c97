"""A cross-domain X-TAIL stream on the ``methods.vlm`` substrate (synthetic stand-in for the 10 X-TAIL datasets).

Five domains, each with its own visual style so that "which domain" is learnable from pixels, as it
is for Aircraft vs. MNIST vs. DTD in the real benchmark:

| domain | classes | what varies | style |
|---|---|---|---|
| ``colours`` | 8 colour words | shape random | plain objects on black |
| ``digits`` | zero … nine | real handwritten digits (scikit-learn, ×4) | grey, no colour |
| ``objects`` | 8 lexicon nouns | position, size | grey background, heavy pixel noise |
| ``shapes`` | 6 shape words | colour random | plain objects on white |
| ``textures`` | plain, striped, dotted, checkered | shape and colour random | teal background |

Order I is alphabetical, as X-TAIL's. Rendered domains have a fixed pool of 48 training and 30
test images per class (their own seeds); a run draws ``shots`` training images per class with its
seed (16-shot, X-TAIL's setting). The digits use the substrate's fixed train/test split.
Frozen image features of the whole pool are computed once per backbone and reused; they stay on
the backbone's device (images and labels stay on the CPU).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path

import numpy as np
import torch

from core.lazy import locked_cache
from methods.continual.xtail import Inputs, XTailStream, XTailTask
from methods.vlm.render import COLOURS, LEXICON, SHAPES, TEXTURES, render, sample_scene

log = logging.getLogger(__name__)

DATA_VERSION = 1
TRAIN_POOL, TEST_PER_CLASS = 48, 30
OBJECT_NOUNS = ("tomato", "tent", "starfish", "towel", "melon", "badge", "brick", "cone")
DOMAIN_ORDER = ("colours", "digits", "objects", "shapes", "textures")  # order I: alphabetical


def _domain_classes() -> dict[str, tuple[str, ...]]:
    from methods.vlm.data import DIGIT_WORDS

    return {
        "colours": tuple(COLOURS),
        "digits": DIGIT_WORDS,
        "objects": OBJECT_NOUNS,
        "shapes": SHAPES,
        "textures": TEXTURES,
    }


def _kind(domain: str, label: int, rng: np.random.Generator) -> tuple[tuple[str, str, str], str, float]:
    """(shape, colour, texture), background and pixel noise of one image of class ``label``."""
    colours = list(COLOURS)
    if domain == "colours":
        return (str(rng.choice(SHAPES)), colours[label], "plain"), "black", 0.03
    if domain == "shapes":
        return (SHAPES[label], str(rng.choice(colours)), "plain"), "white", 0.03
    if domain == "textures":
        return (str(rng.choice(["square", "circle"])), str(rng.choice(colours)), TEXTURES[label]), "teal", 0.03
    if domain == "objects":
        return LEXICON[OBJECT_NOUNS[label]], "gray", 0.12
    raise ValueError(f"unknown rendered domain {domain!r}")


def render_domain(domain: str, split: str, per_class: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(n, 3, 32, 32) images and labels 0..M-1 of a rendered domain (fixed seed per domain and split)."""
    n_classes = len(_domain_classes()[domain])
    salt = DOMAIN_ORDER.index(domain) * 10 + (0 if split == "train" else 1)
    rng = np.random.default_rng([7100, salt])
    images, labels = [], []
    for _ in range(per_class):
        for label in range(n_classes):
            kind, background, noise = _kind(domain, label, rng)
            scene = sample_scene(rng, kind=kind, count=1, noise=noise)
            img, _ = render(dataclasses.replace(scene, background=background))
            images.append(img)
            labels.append(label)
    return torch.from_numpy(np.stack(images)).permute(0, 3, 1, 2).contiguous(), torch.tensor(labels)


def _pool(domain: str) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    if domain == "digits":
        from methods.vlm.data import load_dataset

        tr, te = load_dataset("digits", "train"), load_dataset("digits", "test")
        return {"train": (tr.images, tr.labels), "test": (te.images, te.labels)}
    return {"train": render_domain(domain, "train", TRAIN_POOL), "test": render_domain(domain, "test", TEST_PER_CLASS)}


@locked_cache(maxsize=1)
def domain_pools() -> dict[str, dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    """Every domain's train pool and test set (rendered once, cached on disk under ``<cache_dir>/lada``)."""
    from core.config import get_settings

    path = Path(get_settings().cache_dir) / "lada" / f"domains-v{DATA_VERSION}.pt"
    if path.is_file():
        return torch.load(path, weights_only=False)
    pools = {d: _pool(d) for d in DOMAIN_ORDER}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save(pools, tmp)
    tmp.replace(path)
    return pools


@torch.no_grad()
def pool_features(backbone, pools: dict, batch_size: int = 512) -> dict[str, dict[str, torch.Tensor]]:
    """Frozen, L2-normalised image features of every pool, on the backbone's device (the image encoder never trains in LADA)."""
    backbone.eval()
    out: dict[str, dict[str, torch.Tensor]] = {}
    for d, splits in pools.items():
        out[d] = {}
        for split, (images, _) in splits.items():
            out[d][split] = torch.cat(
                [backbone.encode_image(images[i : i + batch_size]) for i in range(0, len(images), batch_size)]
            )
    return out


def _few_shot(labels: torch.Tensor, shots: int, rng: np.random.Generator) -> torch.Tensor:
    keep = []
    for c in torch.unique(labels).tolist():
        pool = np.flatnonzero(labels.numpy() == c)
        keep += sorted(rng.choice(pool, min(shots, len(pool)), replace=False).tolist())
    return torch.as_tensor(keep, dtype=torch.long)


def build_stream(
    backbone,
    *,
    seed: int,
    shots: int = 16,
    domains: tuple[str, ...] = DOMAIN_ORDER,
    test_per_class: int | None = None,
    pools: dict | None = None,
    features: dict | None = None,
    amp: str = "off",
) -> XTailStream:
    """The X-TAIL stream over ``domains`` (in this order) with ``shots`` training images per class drawn by ``seed``.

    Learners on it compute where ``backbone`` is, training in ``amp``.
    """
    names = _domain_classes()
    unknown = [d for d in domains if d not in names]
    if unknown:
        raise ValueError(f"unknown domains {unknown}; known: {', '.join(DOMAIN_ORDER)}")
    pools = pools if pools is not None else domain_pools()
    features = features if features is not None else pool_features(backbone, {d: pools[d] for d in domains})
    rng = np.random.default_rng(seed)
    tasks, classnames = [], []
    for k, d in enumerate(domains):
        offset = len(classnames)
        classnames += list(names[d])
        (x_tr, y_tr), (x_te, y_te) = pools[d]["train"], pools[d]["test"]
        f_tr, f_te = features[d]["train"], features[d]["test"]
        tr = _few_shot(y_tr, shots, rng)
        te = (
            torch.arange(len(y_te))
            if test_per_class is None
            else _few_shot(y_te, test_per_class, np.random.default_rng(k))
        )
        tasks.append(
            XTailTask(
                index=k,
                name=d,
                classes=tuple(range(offset, offset + len(names[d]))),
                classnames=names[d],
                train=Inputs(x_tr[tr], f_tr[tr.to(f_tr.device)]),
                y_train=y_tr[tr] + offset,
                test=Inputs(x_te[te], f_te[te.to(f_te.device)]),
                y_test=y_te[te] + offset,
            )
        )
    if len(set(classnames)) != len(classnames):
        raise ValueError("class names must be unique across domains")
    return XTailStream(
        tasks=tuple(tasks), classnames=tuple(classnames), seed=seed, backbone=backbone, meta={"shots": shots}, amp=amp
    )
