"""Downstream evaluation on real images and the modality-gap measurements (spec gmail.md §4, §6, §7.5).

* :func:`retrieval` — image→text and text→image Recall@1/5/10 over the held-out real renders and their
  most specific captions. Distinct scenes can share a caption (same kind, cell and background), so a
  retrieved item counts as correct when its caption is the same text as the query's (for i→t) or
  when its image's caption is the query text (for t→i).
* :func:`attribute_accuracy` — zero-shot classification of shape (6), colour (8), background (4) and
  count (3) of each real test image; each class's text embedding is the average over the other
  attributes' prompts (CLIP's prompt ensembling).
* :func:`paired_cosine`, :func:`domain_separability` — the gap: mean cosine of paired real/generated
  embeddings (paper: 0.52 → 0.89) and the held-out accuracy of a logistic-regression probe telling
  real from generated embeddings (chance 0.5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from methods.vlm.render import BACKGROUNDS, COLOURS, COUNTS, PLURAL, SHAPES, article

KS = (1, 5, 10)


def retrieval(image: torch.Tensor, text: torch.Tensor, captions: Sequence[str], ks=KS) -> dict[str, float]:
    """Recall@k (i2t, t2i) for row-paired features; equal caption strings count as the same item."""
    if image.shape != text.shape:
        raise ValueError("image and text features must be paired row by row")
    ids = {c: i for i, c in enumerate(dict.fromkeys(captions))}
    cid = torch.tensor([ids[c] for c in captions], device=image.device)
    same = cid[:, None] == cid[None, :]  # (n, n): item j carries the caption of item i
    sim = image @ text.t()
    out: dict[str, float] = {}
    for direction, s in (("i2t", sim), ("t2i", sim.t())):
        order = s.argsort(dim=1, descending=True)
        hit = same.gather(1, order)  # hit[i, r]: the r-th retrieved item is a correct one
        for k in ks:
            out[f"{direction}_r@{k}"] = float(hit[:, :k].any(dim=1).float().mean())
    return out


def retrieval_chance(captions: Sequence[str], ks=KS) -> dict[str, float]:
    """Expected Recall@k of a random ranking (≈ k × share of items with the query's caption)."""
    _, counts = np.unique(np.asarray(captions), return_counts=True, return_inverse=False)
    per_item = np.repeat(counts, counts) / len(captions)  # each item's share of correct candidates
    return {f"r@{k}": float(np.mean(1 - (1 - per_item) ** k)) for k in ks}


def _phrase(colour: str, shape: str, count: int = 1) -> str:
    if count == 1:
        return f"{article(colour)} {colour} {shape}"
    return f"{COUNTS[count]} {colour} {PLURAL[shape]}"


def attribute_prompts() -> dict[str, list[list[str]]]:
    """Per attribute, per class, the prompts whose embeddings are averaged into the class embedding."""
    colours, bgs = list(COLOURS), list(BACKGROUNDS)
    return {
        "shape": [[f"{_phrase(c, s)}." for c in colours] for s in SHAPES],
        "colour": [[f"{_phrase(c, s)}." for s in SHAPES] for c in colours],
        "background": [[f"{_phrase(c, s)} on a {b} background." for c in colours for s in SHAPES] for b in bgs],
        "count": [[f"{_phrase(c, s, n)}." for c in colours for s in SHAPES] for n in (1, 2, 3)],
    }


@torch.no_grad()
def attribute_accuracy(
    image: torch.Tensor, text_fn: Callable[[list[str]], torch.Tensor], labels: dict[str, torch.Tensor]
) -> dict[str, float]:
    """Zero-shot top-1 accuracy per attribute of L2-normalised real image embeddings ``image``."""
    out = {}
    for attr, classes in attribute_prompts().items():
        flat = [p for ps in classes for p in ps]
        feats = text_fn(flat)
        weights, i = [], 0
        for ps in classes:
            weights.append(F.normalize(feats[i : i + len(ps)].mean(0), dim=-1))
            i += len(ps)
        pred = (image @ torch.stack(weights).t()).argmax(1)
        out[attr] = float((pred == labels[attr].to(pred.device)).float().mean())
    return out


def attribute_chance(labels: dict[str, torch.Tensor]) -> dict[str, float]:
    """Majority-class accuracy per attribute (the floor a constant predictor reaches)."""
    return {k: float(torch.bincount(v).max()) / len(v) for k, v in labels.items() if k in attribute_prompts()}


def paired_cosine(real: torch.Tensor, gen: torch.Tensor) -> float:
    """Mean cosine similarity of row-paired embeddings."""
    return float(F.cosine_similarity(real, gen, dim=-1).mean())


def pca_2d(real: torch.Tensor, gen: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Real and generated embeddings on the first two principal components of their union (the plotted plane)."""
    x = torch.cat([real, gen]).detach().cpu().double()
    x = x - x.mean(0)
    _, _, v = torch.linalg.svd(x, full_matrices=False)
    z = (x @ v[:2].t()).numpy()
    return z[: len(real)], z[len(real) :]


def plane_separability(real: torch.Tensor, gen: torch.Tensor, seed: int = 0) -> float:
    """The linear probe on the 2-D PCA plane of the embedding map (how separate the plotted clouds are)."""
    r, g = pca_2d(real, gen)
    return domain_separability(torch.from_numpy(r).float(), torch.from_numpy(g).float(), seed)


def domain_separability(real: torch.Tensor, gen: torch.Tensor, seed: int = 0) -> float:
    """Held-out accuracy of a linear probe (logistic regression) for real vs generated (pairs split in half)."""
    from sklearn.linear_model import LogisticRegression

    n = len(real)
    perm = np.random.default_rng(seed).permutation(n)
    tr, te = perm[: n // 2], perm[n // 2 :]
    x = np.concatenate([real.detach().cpu().numpy(), gen.detach().cpu().numpy()])
    y = np.concatenate([np.zeros(n), np.ones(n)])
    tr2, te2 = np.concatenate([tr, tr + n]), np.concatenate([te, te + n])
    probe = LogisticRegression(max_iter=2000, C=1.0).fit(x[tr2], y[tr2])
    return float(probe.score(x[te2], y[te2]))
