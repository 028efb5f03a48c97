"""LMS3 scores and Algorithm 1 (spec §3.3-3.4), as exact numpy scans in fp32.

For a query ``x_q`` and a pool with precomputed ``p_X = P x_X`` and ``Stab(X)``:

* ``Sim(X) = ‖x_q − p_X‖₂`` (paper Eq. 21; a distance, smaller is better);
* ``Score(X) = Sim(X) · Stab(X)`` (Eq. 24);
* ``Score_k`` = the k items of smallest Score, ascending, ties broken by pool index;
* ``Sim_λ`` = the λ items of smallest Sim, ``λ = max(int(l·|D|), min_lambda)``;
* ``D_k = [X ∈ Score_k if X ∈ Sim_λ]`` (order kept); empty ⇒ zero-shot.

Non-reference variants (``normalize``), which remove the pool-norm effect
(``‖P x_X‖`` is ~10-20× ``‖x_q‖`` for SmolLM2, so the reference Sim ranks the
pool by ``‖P x_X‖`` whatever the query):

* ``"unit"``: ``Sim(X) = ‖x_q/‖x_q‖ − P x_X/‖P x_X‖‖₂`` (both unit-normalised);
* ``"centred"``: ``Sim(X) = ‖x_q − (P x_X − mean_D P x)‖₂`` (pool-centred ``P x``).

Stab, Score = Sim·Stab and the rejection rule are unchanged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import numpy as np

log = logging.getLogger(__name__)


Normalize = Literal["none", "unit", "centred"]
NORMALIZATIONS: tuple[Normalize, ...] = ("none", "unit", "centred")

_WARNED: set[tuple[int, float]] = set()


def rejection_lambda(pool_size: int, l: float, min_lambda: int = 0, *, warn: bool = True) -> int:  # noqa: E741
    """``λ = int(l·|D|)`` truncated toward zero, raised to ``min_lambda``, capped at ``|D|``.

    ``λ(7473, 0.01) = 74``, ``λ(1537, 0.01) = 15``, ``λ(99, 0.01) = 0``. With λ = 0
    every query is rejected (the reference behaviour); a warning is logged once per (|D|, l).
    """
    lam = int(l * pool_size)
    lam = min(max(lam, int(min_lambda)), pool_size)
    if lam == 0 and pool_size > 0 and warn and (pool_size, l) not in _WARNED:
        _WARNED.add((pool_size, l))
        log.warning(
            "λ = int(%g · %d) = 0: every query will be rejected to zero-shot; set min_lambda=1 for small pools",
            l,
            pool_size,
        )
    return lam


def similarity(x_q: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``Sim(X) = ‖x_q − P x_X‖₂`` for every row of ``p`` (n, d) → (n,), fp32, finite."""
    diff = np.asarray(p, dtype=np.float32) - np.asarray(x_q, dtype=np.float32)[None, :]
    sim = np.sqrt(np.einsum("nd,nd->n", diff, diff, dtype=np.float32))
    if not np.isfinite(sim).all():
        raise FloatingPointError("non-finite LMS3 similarity")
    return sim


def normalized_inputs(x_q: np.ndarray, p: np.ndarray, normalize: Normalize = "none") -> tuple[np.ndarray, np.ndarray]:
    """``(x_q, p)`` after the pool-norm-removing transform (see the module docstring)."""
    xq = np.asarray(x_q, dtype=np.float32)
    pp = np.asarray(p, dtype=np.float32)
    if normalize == "none":
        return xq, pp
    if normalize == "unit":
        xn = xq / max(float(np.linalg.norm(xq)), 1e-12)
        pn = pp / np.maximum(np.linalg.norm(pp, axis=1, keepdims=True), 1e-12)
        return xn.astype(np.float32), pn.astype(np.float32)
    if normalize == "centred":
        return xq, (pp - pp.mean(axis=0, keepdims=True)).astype(np.float32)
    raise ValueError(f"unknown normalisation {normalize!r}; one of {NORMALIZATIONS}")


def cosine_distance(x_q: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``1 − cos(x_q, x_X)`` for every row of ``x`` (the plain semantic-similarity baseline)."""
    xq = np.asarray(x_q, dtype=np.float32)
    xx = np.asarray(x, dtype=np.float32)
    denom = np.linalg.norm(xx, axis=1) * np.linalg.norm(xq) + 1e-12
    return (1.0 - (xx @ xq) / denom).astype(np.float32)


def smallest_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` smallest values, ascending, ties broken by index (stable)."""
    values = np.asarray(values)
    k = min(int(k), values.shape[0])
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.argsort(values, kind="stable")[:k].astype(np.int64)


@dataclass(frozen=True)
class Lms3Choice:
    """The outcome of Algorithm 1 for one query (pool-local indices)."""

    score_top: np.ndarray  # Score_k, ascending Score
    chosen: np.ndarray  # D_k ⊆ Score_k, order kept
    lam: int
    sim: np.ndarray
    stab: np.ndarray
    score: np.ndarray

    @property
    def rejected(self) -> bool:
        """True when nothing survived and the query falls back to zero-shot."""
        return self.chosen.size == 0


def lms3_select(
    x_q: np.ndarray,
    p: np.ndarray,
    stab: np.ndarray,
    *,
    k: int = 1,
    l: float = 0.01,  # noqa: E741
    min_lambda: int = 0,
    reject: bool = True,
    normalize: Normalize = "none",
) -> Lms3Choice:
    """Algorithm 1: Score top-k, then keep those also in the Sim top-λ (if ``reject``).

    ``normalize`` ≠ ``"none"`` is a non-reference variant: Sim (and so Score and the
    rejection set) is computed on the transformed ``(x_q, p)`` of :func:`normalized_inputs`.
    """
    sim = similarity(*normalized_inputs(x_q, p, normalize))
    stab = np.asarray(stab, dtype=np.float32)
    score = (sim * stab).astype(np.float32)
    top = smallest_k(score, k)
    if not reject:
        return Lms3Choice(top, top, lam=len(sim), sim=sim, stab=stab, score=score)
    lam = rejection_lambda(len(sim), l, min_lambda)
    sim_top = set(smallest_k(sim, lam).tolist())
    chosen = np.array([i for i in top.tolist() if i in sim_top], dtype=np.int64)
    return Lms3Choice(top, chosen, lam=lam, sim=sim, stab=stab, score=score)
