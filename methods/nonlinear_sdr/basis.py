"""Whitened feature maps φ(x) with identity sample covariance: linear and kernel-PCA (spec §3.2–3.3).

* :class:`LinearBasis`: φ(x) = Σ̂^{−1/2}(x − X̄) (symmetric inverse square root; a tiny ridge keeps a
  singular Σ̂ invertible). A direction w in φ-space is ψ = Σ̂^{−1/2}w in x-space.
* :class:`KernelBasis`: the kernel PSVM's reduced RKHS (Li, Artemiou & Li 2011; ``psvmSDR::npsdr``):
  the centred Gram QKQ (Q = I − 11ᵀ/n) of a Gaussian kernel exp(−γ‖x − x'‖²), γ = 1/median
  pairwise squared distance, its top-b eigenvectors u_j (eigenvalues μ_j), and
  φ_j(x) = √n k̃(x)ᵀu_j / μ_j with k̃ the centred kernel vector — at the training points
  φ_j(X_i) = √n u_ij, so the scores have unit variance and are uncorrelated. b = ⌊n/3⌋ by
  default. ``kernel="linear"`` (k = xᵀx') with b = p spans the same space as the linear basis:
  the kernel PSVM then reproduces linear PSVM (spec §7).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Kernel = Literal["rbf", "linear"]


class LinearBasis:
    """φ(x) = Σ̂^{−1/2}(x − X̄)."""

    def fit(self, x: np.ndarray, ridge: float = 1e-8) -> LinearBasis:
        self.mean_ = x.mean(axis=0)
        xc = x - self.mean_
        cov = xc.T @ xc / len(x)
        vals, vecs = np.linalg.eigh(cov)
        vals = np.clip(vals, 0.0, None) + ridge * max(float(vals.max(initial=0.0)), 1e-12)
        self.inv_sqrt_ = (vecs / np.sqrt(vals)) @ vecs.T
        return self

    @property
    def dim(self) -> int:
        return self.inv_sqrt_.shape[0]

    def transform(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean_) @ self.inv_sqrt_

    def to_x_space(self, w: np.ndarray) -> np.ndarray:
        """ψ = Σ̂^{−1/2} w for directions w (b×k) in φ-space."""
        return self.inv_sqrt_ @ w


def median_gamma(x: np.ndarray, max_points: int = 1000, seed: int = 0) -> float:
    """γ = 1 / median of the pairwise squared distances (on at most ``max_points`` rows)."""
    if len(x) > max_points:
        x = x[np.random.default_rng(seed).choice(len(x), max_points, replace=False)]
    sq = np.sum(x * x, axis=1)
    d2 = np.clip(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0.0, None)
    med = float(np.median(d2[np.triu_indices(len(x), k=1)])) if len(x) > 1 else 1.0
    return 1.0 / med if med > 0 else 1.0


class KernelBasis:
    """The top-b kernel-PCA eigenfunctions, scaled to unit empirical variance."""

    def __init__(self, kernel: Kernel = "rbf", gamma: float | None = None, n_basis: int | None = None) -> None:
        self.kernel, self.gamma, self.n_basis = kernel, gamma, n_basis

    def _gram(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.kernel == "linear":
            return a @ b.T
        sq = np.sum(a * a, axis=1)[:, None] + np.sum(b * b, axis=1)[None, :] - 2 * a @ b.T
        return np.exp(-self.gamma_ * np.clip(sq, 0.0, None))

    def fit(self, x: np.ndarray) -> KernelBasis:
        if self.kernel not in ("rbf", "linear"):
            raise ValueError(f"unknown kernel {self.kernel!r}; rbf or linear")
        n = len(x)
        self.x_ = np.array(x, dtype=float)
        self.gamma_ = float(self.gamma) if self.gamma else median_gamma(self.x_)
        k = self._gram(self.x_, self.x_)
        self.col_mean_ = k.mean(axis=0)
        self.all_mean_ = float(self.col_mean_.mean())
        kc = k - self.col_mean_[None, :] - self.col_mean_[:, None] + self.all_mean_
        vals, vecs = np.linalg.eigh((kc + kc.T) / 2.0)
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
        b = self.n_basis or max(1, n // 3)
        keep = int(min(b, np.sum(vals > 1e-10 * max(vals[0], 1e-300))))
        if keep < 1:
            raise ValueError("the centred Gram matrix is zero: X has no variation")
        self.vals_, self.vecs_ = vals[:keep], vecs[:, :keep]
        self.proj_ = np.sqrt(n) * self.vecs_ / self.vals_  # n×b: φ(x) = k̃(x)ᵀ proj
        return self

    @property
    def dim(self) -> int:
        return self.vals_.shape[0]

    def transform(self, x: np.ndarray) -> np.ndarray:
        k = self._gram(np.asarray(x, dtype=float), self.x_)
        kc = k - self.col_mean_[None, :] - k.mean(axis=1, keepdims=True) + self.all_mean_
        return kc @ self.proj_
