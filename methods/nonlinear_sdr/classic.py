"""The classical comparators, from their definitions, on Z = Σ̂^{−1/2}(X − X̄).

Slices J_1..J_H: H groups of (nearly) equal size by the rank of a continuous Y, or the classes of
a categorical Y; p_h = |J_h|/n, m_h = mean of Z over J_h, V_h = covariance of Z over J_h.

* SIR (Li 1991):  M = Σ_h p_h m_h m_hᵀ.
* SAVE (Cook & Weisberg 1991):  M = Σ_h p_h (I − V_h)².
* DR, directional regression (Li & Wang 2007):
  M = 2 Σ_h p_h (E[ZZᵀ|J_h])² + 2 (Σ_h p_h m_h m_hᵀ)² + 2 (Σ_h p_h m_hᵀm_h)(Σ_h p_h m_h m_hᵀ) − 2I.
* pHd, principal Hessian directions (Li 1992, y-based):  M = E[(Y − EY) ZZᵀ], eigen-decomposed by
  |eigenvalue|. It uses the values of Y, not slices: the moment-based comparator of the
  contamination study.

Each returns the candidate matrix; directions in x-space are Σ̂^{−1/2} times its eigenvectors.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from methods.nonlinear_sdr.slicing import ResponseKind

Classic = Literal["sir", "save", "dr", "phd"]
CLASSIC: tuple[Classic, ...] = ("sir", "save", "dr", "phd")


def slice_codes(y: np.ndarray, kind: ResponseKind, n_slices: int = 10) -> np.ndarray:
    """Slice index of every sample: equal-size rank slices (continuous) or class codes (categorical)."""
    if kind == "categorical":
        return np.unique(np.asarray(y), return_inverse=True)[1]
    ranks = np.argsort(np.argsort(np.asarray(y, dtype=float), kind="stable"), kind="stable")
    return np.minimum((ranks * n_slices) // len(y), n_slices - 1)


def _slice_moments(z: np.ndarray, codes: np.ndarray):
    for h in np.unique(codes):
        zs = z[codes == h]
        yield len(zs) / len(z), zs.mean(axis=0), zs.T @ zs / len(zs)


def sir_matrix(z: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return sum(p * np.outer(m, m) for p, m, _ in _slice_moments(z, codes))


def save_matrix(z: np.ndarray, codes: np.ndarray) -> np.ndarray:
    eye = np.eye(z.shape[1])
    out = np.zeros_like(eye)
    for p, m, second in _slice_moments(z, codes):
        a = eye - (second - np.outer(m, m))
        out += p * a @ a
    return out


def dr_matrix(z: np.ndarray, codes: np.ndarray) -> np.ndarray:
    eye = np.eye(z.shape[1])
    a = np.zeros_like(eye)
    b = np.zeros_like(eye)
    c = 0.0
    for p, m, second in _slice_moments(z, codes):
        a += p * second @ second
        b += p * np.outer(m, m)
        c += p * float(m @ m)
    return 2 * a + 2 * b @ b + 2 * c * b - 2 * eye


def phd_matrix(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    r = np.asarray(y, dtype=float) - float(np.mean(y))
    m = (z.T * r) @ z / len(z)
    vals, vecs = np.linalg.eigh((m + m.T) / 2)
    return (vecs * np.abs(vals)) @ vecs.T  # same eigenvectors, ordered by |eigenvalue|


def classic_matrix(name: Classic, z: np.ndarray, y: np.ndarray, kind: ResponseKind, n_slices: int = 10) -> np.ndarray:
    """The candidate matrix of ``name`` on whitened ``z``."""
    if name == "phd":
        if kind == "categorical":
            _, y = np.unique(np.asarray(y), return_inverse=True)
        return phd_matrix(z, y)
    codes = slice_codes(y, kind, n_slices)
    if np.unique(codes).size < 2:
        raise ValueError("y has a single value: no slices can be formed from it")
    fn = {"sir": sir_matrix, "save": save_matrix, "dr": dr_matrix}.get(name)
    if fn is None:
        raise ValueError(f"unknown method {name!r}; one of {', '.join(CLASSIC)}")
    return fn(z, codes)
