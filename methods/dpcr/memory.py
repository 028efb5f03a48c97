"""Per-class memory of DPCR (spec §3.2), float64 throughout.

For class c, stored right after the task that introduces it (features Φ_c of f_t, rows = samples):

* prototype            μ_c = mean of Φ_c                      (1×d)
* uncentred Gram       Σ_c = Φ_cᵀ Φ_c                         (d×d; = n_c (Cov_c + μ_cᵀ μ_c))
* row-space projector  Π_c = U_c U_cᵀ, U_c = left singular vectors of Σ_c with "non-zero" s
* count                N_c = n_c

"Non-zero" has two rules: ``"relative"`` keeps s > s_max · d · eps (numerical rank, the faithful
re-implementation) and ``"literal"`` keeps s > 0 (the reference code's test, under which Π_c ≈ I
except for exactly-zero directions). Class statistics are never recomputed from data later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

ProjectorRule = Literal["relative", "literal"]
EPS64 = float(np.finfo(np.float64).eps)


def row_space_projector(gram: np.ndarray, rule: ProjectorRule = "relative") -> tuple[np.ndarray, int]:
    """Π = U_k U_kᵀ from the SVD of the (symmetric PSD) Gram; returns (Π, k = rank kept)."""
    gram = np.asarray(gram, dtype=np.float64)
    d = gram.shape[0]
    u, s, _ = np.linalg.svd(gram)
    if rule == "relative":
        tol = (s.max() if s.size else 0.0) * d * EPS64
    elif rule == "literal":
        tol = 0.0
    else:
        raise ValueError(f"unknown projector rule {rule!r}")
    keep = s > tol
    uk = u[:, keep]
    return uk @ uk.T, int(keep.sum())


@dataclass
class ClassStats:
    """Stored statistics of one class (row-vector convention)."""

    mean: np.ndarray  # (d,)
    gram: np.ndarray  # (d, d)
    projector: np.ndarray  # (d, d)
    rank: int
    count: int

    @classmethod
    def from_features(cls, feats: np.ndarray, rule: ProjectorRule = "relative") -> ClassStats:
        phi = np.asarray(feats, dtype=np.float64)
        if phi.ndim != 2 or len(phi) == 0:
            raise ValueError("a class needs a non-empty (n, d) feature matrix")
        gram = phi.T @ phi
        proj, rank = row_space_projector(gram, rule)
        return cls(mean=phi.mean(axis=0), gram=gram, projector=proj, rank=rank, count=len(phi))


class ClassMemory:
    """Statistics of every class seen so far, keyed by stream label."""

    def __init__(self, rule: ProjectorRule = "relative") -> None:
        self.rule: ProjectorRule = rule
        self.classes: dict[int, ClassStats] = {}

    def __len__(self) -> int:
        return len(self.classes)

    @property
    def labels(self) -> list[int]:
        return sorted(self.classes)

    def add(self, feats: np.ndarray, labels: np.ndarray) -> list[int]:
        """Store the statistics of every class present in ``labels``; returns the new labels."""
        labels = np.asarray(labels)
        new = [int(c) for c in np.unique(labels)]
        for c in new:
            if c in self.classes:
                raise ValueError(f"class {c} is already in memory (statistics are stored once)")
            self.classes[c] = ClassStats.from_features(np.asarray(feats)[labels == c], self.rule)
        return new

    def apply(self, c: int, W: np.ndarray) -> None:
        """Move class c's statistics by the map x ↦ x W: μ ← μ W, Σ ← Wᵀ Σ W, Π recomputed (spec §3.4)."""
        st = self.classes[c]
        st.mean = st.mean @ W
        g = W.T @ st.gram @ W
        st.gram = 0.5 * (g + g.T)
        st.projector, st.rank = row_space_projector(st.gram, self.rule)

    def copy(self) -> ClassMemory:
        out = ClassMemory(self.rule)
        out.classes = {
            c: ClassStats(s.mean.copy(), s.gram.copy(), s.projector.copy(), s.rank, s.count)
            for c, s in self.classes.items()
        }
        return out
