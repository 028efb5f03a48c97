"""Order (dimension) determination from the candidate matrix's eigenvalues (spec §3.4).

BIC-type criterion of the PSVM paper:

    G_n(k) = Σ_{i≤k} λ̂_i − c · λ̂_1 · k · log(n) / √n,     d̂ = argmax_{1≤k≤k_max} G_n(k),

i.e. direction k is kept while λ̂_k exceeds c·λ̂_1·log(n)/√n. Scale-free (the penalty is relative
to λ̂_1). c = 1 by default (the spec allows 1–2; the constant is marked [verify] there).
"""

from __future__ import annotations

import numpy as np


def bic_criterion(eigenvalues: np.ndarray, n: int, c: float = 1.0) -> np.ndarray:
    """G_n(k) for k = 1..len(eigenvalues)."""
    lam = np.clip(np.asarray(eigenvalues, dtype=float), 0.0, None)
    if lam.size == 0 or lam[0] <= 0:
        return np.zeros(max(lam.size, 1))
    k = np.arange(1, lam.size + 1)
    return np.cumsum(lam) - c * lam[0] * k * np.log(n) / np.sqrt(n)


def bic_order(eigenvalues: np.ndarray, n: int, c: float = 1.0, k_max: int | None = None) -> int:
    """d̂ = argmax_k G_n(k) over 1 ≤ k ≤ k_max (at least 1)."""
    g = bic_criterion(eigenvalues, n, c)
    if k_max is not None:
        g = g[: max(1, k_max)]
    return int(np.argmax(g)) + 1
