"""The ensemble of binary classification problems built from the response (spec §3.1).

A continuous Y is cut at its empirical quantiles q_h (levels h/H, h = 1..H−1) into
"left-vs-right" dichotomies Ỹ^{(h)} = +1 if Y > q_h else −1; optionally each slice is also
set against the rest ("slice-vs-rest", for non-monotone dependence). A categorical Y with K
classes gives one-vs-rest problems (one only when K = 2: the two are mirror images) and/or
one-vs-another problems on the two classes' samples. For a binary Y a single problem gives
one normal vector, so the ensemble is widened over class weights π_h = h/H (the weighted
principal SVM: the loss of the +1 class is weighted 1 − π, that of the −1 class π).

Labels are ±1 for the samples a problem uses and 0 for the samples it leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

ResponseKind = Literal["continuous", "categorical"]
Multiclass = Literal["ovr", "ovo", "both"]


@dataclass(frozen=True)
class Dichotomy:
    """One ±1 classification problem: labels (0 = sample not used), per-class loss weights, a name."""

    labels: np.ndarray
    name: str
    weight_pos: float = 1.0
    weight_neg: float = 1.0

    @property
    def mask(self) -> np.ndarray:
        return self.labels != 0

    def sample_weights(self) -> np.ndarray:
        """Loss weight of every used sample (the weighted-SVM class weights)."""
        y = self.labels[self.mask]
        return np.where(y > 0, self.weight_pos, self.weight_neg)


def response_kind(y: np.ndarray, max_classes: int = 20) -> ResponseKind:
    """``categorical`` for strings/booleans, two values, or integer values with at most ``max_classes`` levels."""
    y = np.asarray(y)
    if y.dtype.kind in "OUSb":
        return "categorical"
    values = np.unique(y)
    if values.size <= 2:
        return "categorical"
    integral = y.dtype.kind in "iu" or bool(np.all(np.isfinite(y)) and np.all(np.mod(y, 1) == 0))
    return "categorical" if integral and values.size <= max_classes else "continuous"


def _valid(labels: np.ndarray) -> bool:
    return bool((labels > 0).any() and (labels < 0).any())


def continuous_dichotomies(y: np.ndarray, n_slices: int = 10, slice_vs_rest: bool = False) -> list[Dichotomy]:
    """Left-vs-right problems at the quantiles of levels h/H (ties dropped), plus slice-vs-rest if asked."""
    y = np.asarray(y, dtype=float)
    if n_slices < 2:
        raise ValueError("n_slices must be >= 2")
    cuts = np.unique(np.quantile(y, np.arange(1, n_slices) / n_slices))
    out = []
    for h, q in enumerate(cuts):
        labels = np.where(y > q, 1, -1).astype(np.int8)
        if _valid(labels):
            out.append(Dichotomy(labels, f"Y > q{h + 1}"))
    if slice_vs_rest:
        edges = np.concatenate([[-np.inf], cuts, [np.inf]])
        for h in range(len(edges) - 1):
            inside = (y > edges[h]) & (y <= edges[h + 1])
            labels = np.where(inside, 1, -1).astype(np.int8)
            if _valid(labels):
                out.append(Dichotomy(labels, f"slice {h + 1} vs rest"))
    return out


def categorical_dichotomies(
    y: np.ndarray, multiclass: Multiclass = "ovr", weights: int = 0
) -> tuple[list[Dichotomy], np.ndarray]:
    """One-vs-rest and/or one-vs-another problems; ``weights`` > 1 replicates each over π_h = h/weights.

    Returns the problems and the class values (sorted).
    """
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    k = classes.size
    base: list[Dichotomy] = []
    if multiclass in ("ovr", "both"):
        for j in range(1 if k == 2 else k):
            base.append(Dichotomy(np.where(codes == j, 1, -1).astype(np.int8), f"{classes[j]} vs rest"))
    if multiclass in ("ovo", "both") and k > 2:
        for a in range(k):
            for b in range(a + 1, k):
                labels = np.where(codes == a, 1, np.where(codes == b, -1, 0)).astype(np.int8)
                base.append(Dichotomy(labels, f"{classes[a]} vs {classes[b]}"))
    base = [d for d in base if _valid(d.labels)]
    if weights > 1:
        base = [
            Dichotomy(d.labels, f"{d.name} (π={h / weights:.2f})", 2 * (1 - h / weights), 2 * h / weights)
            for d in base
            for h in range(1, weights)
        ]
    return base, classes


def dichotomies(
    y: np.ndarray,
    *,
    kind: ResponseKind | Literal["auto"] = "auto",
    n_slices: int = 10,
    slice_vs_rest: bool = False,
    multiclass: Multiclass = "ovr",
    binary_weights: bool = True,
) -> tuple[list[Dichotomy], ResponseKind]:
    """The ensemble of ±1 problems for ``y`` (spec §3.1) and the response kind used."""
    kind = response_kind(y) if kind == "auto" else kind
    if kind == "continuous":
        out = continuous_dichotomies(y, n_slices, slice_vs_rest)
    else:
        n_classes = np.unique(np.asarray(y)).size
        out, _ = categorical_dichotomies(y, multiclass, n_slices if (binary_weights and n_classes == 2) else 0)
    if not out:
        raise ValueError("y has a single value: no classification problem can be formed from it")
    return out, kind
