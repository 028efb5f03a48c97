"""DOR's textual outliers (spec dor.md §3.1–3.2): candidate vocabulary, near-OOD pool, dynamic sampling.

* Candidates: WordNet nouns (adjectives behind a flag), minus every word equal to a base class
  name (case-insensitive, ``_`` read as a space). New-class names are never looked at, except by
  the ``oracle`` ablation, whose pool *is* the new class names.
* Score: s_o = (1/n) Σ_j cos(ψ(t_o), ψ(t_{c_j})), the mean cosine between the zero-shot feature of
  "a photo of a {o}." and those of the n base classes.
* Pool O: the top-K candidates by s_o (``near``, the method); ablations ``far`` (bottom-K),
  ``random`` (K uniformly) and ``oracle`` (the new classes).
* Sampling: B outliers uniformly without replacement from O, a fresh draw every step
  (``resample="step"``) or every epoch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from methods.vlm.zeroshot import TEMPLATES, prompts, text_features

PoolKind = Literal["near", "far", "random", "oracle"]


def normalise_name(name: str) -> str:
    return " ".join(name.lower().replace("_", " ").split())


def candidates(vocabulary: Sequence[str], base_names: Sequence[str], backbone=None) -> list[str]:
    """Vocabulary words that are not a base class name (and that the backbone's tokenizer covers, if it can say)."""
    base = {normalise_name(b) for b in base_names}
    covers = getattr(getattr(backbone, "_tokenizer", None), "covers", None)
    out, seen = [], set()
    for w in vocabulary:
        n = normalise_name(w)
        if not n or n in base or n in seen or (covers is not None and not covers(n)):
            continue
        seen.add(n)
        out.append(n)
    return out


@dataclass
class OutlierPool:
    """The outlier words O, their frozen zero-shot features ψ(o), and how they were chosen."""

    words: list[str]
    features: torch.Tensor  # (K, d), L2-normalised, frozen
    scores: np.ndarray  # s_o of each pool word (NaN for the oracle)
    kind: str
    n_candidates: int

    def __post_init__(self) -> None:
        self.features = self.features.detach().clone().requires_grad_(False)


def weights_device(backbone) -> torch.device:
    """The device of the backbone's text projection (where its features are computed)."""
    return backbone.model.text_projection.weight.device


def zero_shot_features(backbone, words: Sequence[str], template: str = TEMPLATES[0]) -> torch.Tensor:
    """ψ(w) for every word: frozen zero-shot features of the filled template.

    Cached on disk per backbone (its folder name), template and word list under ``<cache_dir>/dor/zs_text``:
    scoring the ~58k WordNet nouns is the slow part of a run and never changes for a frozen backbone.
    """
    import hashlib
    import os
    from pathlib import Path

    from core.config import get_settings

    weights = backbone.model.text_projection.weight.detach().cpu()
    fingerprint = hashlib.sha256(weights.contiguous().numpy().tobytes()).hexdigest()  # the weights, not just the name
    blob = "\n".join([getattr(backbone, "name", "clip"), fingerprint, template, *words])
    key = hashlib.sha256(blob.encode()).hexdigest()[:16]
    path = Path(get_settings().cache_dir) / "dor" / "zs_text" / f"{key}.pt"
    if path.is_file():
        feats = torch.load(path, map_location="cpu")  # cached from any device, used on the backbone's
        if feats.shape[0] == len(words):
            return feats.to(weights_device(backbone))
    feats = text_features(backbone, prompts(words, template))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save(feats.cpu(), tmp)
    tmp.replace(path)
    return feats


def select_pool(
    backbone,
    vocabulary: Sequence[str],
    base_names: Sequence[str],
    *,
    k: int = 500,
    kind: PoolKind = "near",
    new_names: Sequence[str] = (),
    seed: int = 0,
    template: str = TEMPLATES[0],
) -> OutlierPool:
    """Score every candidate with zero-shot features and keep K of them by ``kind``."""
    if kind == "oracle":
        if not new_names:
            raise ValueError("the oracle pool needs the new class names")
        words = [normalise_name(n) for n in new_names]
        feats = text_features(backbone, prompts(words, template))
        return OutlierPool(words, feats, np.full(len(words), np.nan), kind, len(words))
    cands = candidates(vocabulary, base_names, backbone)
    if len(cands) < k:
        raise ValueError(f"only {len(cands)} candidate outliers, fewer than K={k}")
    feats = zero_shot_features(backbone, cands, template)
    base = text_features(backbone, prompts(base_names, template))
    scores = (feats @ base.t()).mean(1).cpu().numpy()
    if kind == "near":
        idx = np.argsort(-scores, kind="stable")[:k]
    elif kind == "far":
        idx = np.argsort(scores, kind="stable")[:k]
    elif kind == "random":
        idx = np.sort(np.random.default_rng(seed).choice(len(cands), k, replace=False))
    else:
        raise ValueError(f"unknown pool kind {kind!r}")
    return OutlierPool(
        [cands[i] for i in idx], feats[torch.as_tensor(idx, device=feats.device)], scores[idx], kind, len(cands)
    )


class OutlierSampler:
    """Draws B pool indices uniformly without replacement: a new subset every step (or epoch)."""

    def __init__(
        self,
        pool_size: int,
        batch: int,
        *,
        seed: int,
        resample: Literal["step", "epoch"] = "step",
        steps_per_epoch: int = 1,
    ):
        if batch < 1 or pool_size < 1:
            raise ValueError("pool_size and batch must be >= 1")
        self.pool_size, self.batch = pool_size, min(batch, pool_size)
        self.resample, self.steps_per_epoch = resample, max(1, steps_per_epoch)
        self.generator = torch.Generator().manual_seed(seed)
        self._key, self._current = None, None

    def __call__(self, step: int) -> torch.Tensor:
        key = step if self.resample == "step" else step // self.steps_per_epoch
        if key != self._key:
            self._key = key
            self._current = torch.randperm(self.pool_size, generator=self.generator)[: self.batch]
        return self._current
