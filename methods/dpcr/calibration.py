"""Shift estimation: TSSP (spec §3.3) and the dual projection with CIP (spec §3.4).

TSSP, the task-wise semantic shift projection, is a ridge regression from the previous
backbone's features to the current one's, on the current task's (augmented) training data:

    P_t = (Φ_oldᵀ Φ_old + γ_p I)⁻¹ Φ_oldᵀ Φ_new        (d×d, closed form; γ_p = 1e-9)

CIP, the category information projection, restricts the shift of class c to the row space it
occupied: W_c = P_t Π_c. Old-class statistics are then moved by x ↦ x W_c (see
:meth:`~methods.dpcr.memory.ClassMemory.apply`).

``dpcr_revive`` (not in the paper) lets dead units revive: W_c = P_t (Π_c + E_c), where E_c is the
diagonal projector onto the units that carry no energy for class c under f_{t−1} (zero diagonal of
Σ_c). Those axes are orthogonal to the row space of Σ_c, so Π_c + E_c is again a projector; CIP still
removes the class's missing *directions* among its live units, but a unit that was dead for the class
and is predicted alive by P_t keeps its shifted energy instead of being projected out.

:func:`calibrate` returns, per class, the share of the TSSP-shifted energy that the class projector
removes: ``1 − tr(W_cᵀ Σ_c W_c) / tr(P_tᵀ Σ_c P_t)`` (second moment) and the same for ``‖μ_c W_c‖²``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from methods.dpcr.memory import ClassMemory

ShiftMode = Literal["none", "tssp", "dpcr", "dpcr_revive"]


def tssp_projection(phi_old: np.ndarray, phi_new: np.ndarray, gamma_p: float = 1e-9) -> np.ndarray:
    """P_t = (Φ_oldᵀΦ_old + γ_p I)⁻¹ Φ_oldᵀ Φ_new, solved in float64 (no explicit inverse)."""
    a = np.asarray(phi_old, dtype=np.float64)
    b = np.asarray(phi_new, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"old/new features must match, got {a.shape} vs {b.shape}")
    d = a.shape[1]
    return np.linalg.solve(a.T @ a + gamma_p * np.eye(d), a.T @ b)


def dead_units(gram: np.ndarray) -> np.ndarray:
    """Boolean mask of units with (numerically) zero energy in a class Gram: diag ≤ max(diag)·d·eps."""
    diag = np.clip(np.diag(np.asarray(gram, dtype=np.float64)), 0.0, None)
    tol = (diag.max() if diag.size else 0.0) * diag.size * float(np.finfo(np.float64).eps)
    return diag <= tol


def shift_map(P: np.ndarray, projector: np.ndarray, mode: ShiftMode, gram: np.ndarray | None = None) -> np.ndarray:
    """W_c for one class: I (no calibration), P_t (TSSP only), P_t Π_c (DPCR's dual projection) or
    P_t (Π_c + E_c) (``dpcr_revive``; needs the class ``gram`` to find its dead units)."""
    if mode == "none":
        return np.eye(P.shape[0])
    if mode == "tssp":
        return P
    if mode == "dpcr":
        return P @ projector
    if mode == "dpcr_revive":
        if gram is None:
            raise ValueError("dpcr_revive needs the class Gram")
        return P @ (projector + np.diag(dead_units(gram).astype(np.float64)))
    raise ValueError(f"unknown shift mode {mode!r}")


def calibrate(memory: ClassMemory, P: np.ndarray, mode: ShiftMode) -> dict[int, tuple[float, float, int]]:
    """Move every stored class by its W_c (in place); a no-op for ``mode="none"``.

    Returns ``{c: (energy removed, prototype energy removed, dead units)}``, where the removed shares
    compare W_c with the TSSP-only map P_t (0 for ``tssp``; empty for ``none``).
    """
    out: dict[int, tuple[float, float, int]] = {}
    if mode == "none":
        return out
    for c in memory.labels:
        st = memory.classes[c]
        W = shift_map(P, st.projector, mode, st.gram)
        e_tssp = float(np.trace(P.T @ st.gram @ P))
        e_kept = float(np.trace(W.T @ st.gram @ W))
        m_tssp = float(np.sum((st.mean @ P) ** 2))
        m_kept = float(np.sum((st.mean @ W) ** 2))
        out[c] = (
            1.0 - e_kept / e_tssp if e_tssp > 0 else 0.0,
            1.0 - m_kept / m_tssp if m_tssp > 0 else 0.0,
            int(dead_units(st.gram).sum()),
        )
        memory.apply(c, W)
    return out
