"""Shift estimation: TSSP (spec §3.3) and the dual projection with CIP (spec §3.4).

TSSP, the task-wise semantic shift projection, is a ridge regression from the previous
backbone's features to the current one's, on the current task's (augmented) training data:

    P_t = (Φ_oldᵀ Φ_old + γ_p I)⁻¹ Φ_oldᵀ Φ_new        (d×d, closed form; γ_p = 1e-9)

CIP, the category information projection, restricts the shift of class c to the row space it
occupied: W_c = P_t Π_c. Old-class statistics are then moved by x ↦ x W_c (see
:meth:`~methods.dpcr.memory.ClassMemory.apply`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from methods.dpcr.memory import ClassMemory

ShiftMode = Literal["none", "tssp", "dpcr"]


def tssp_projection(phi_old: np.ndarray, phi_new: np.ndarray, gamma_p: float = 1e-9) -> np.ndarray:
    """P_t = (Φ_oldᵀΦ_old + γ_p I)⁻¹ Φ_oldᵀ Φ_new, solved in float64 (no explicit inverse)."""
    a = np.asarray(phi_old, dtype=np.float64)
    b = np.asarray(phi_new, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"old/new features must match, got {a.shape} vs {b.shape}")
    d = a.shape[1]
    return np.linalg.solve(a.T @ a + gamma_p * np.eye(d), a.T @ b)


def shift_map(P: np.ndarray, projector: np.ndarray, mode: ShiftMode) -> np.ndarray:
    """W_c for one class: I (no calibration), P_t (TSSP only) or P_t Π_c (DPCR's dual projection)."""
    if mode == "none":
        return np.eye(P.shape[0])
    if mode == "tssp":
        return P
    if mode == "dpcr":
        return P @ projector
    raise ValueError(f"unknown shift mode {mode!r}")


def calibrate(memory: ClassMemory, P: np.ndarray, mode: ShiftMode) -> None:
    """Move every stored class by its W_c (in place); a no-op for ``mode="none"``."""
    if mode == "none":
        return
    for c in memory.labels:
        memory.apply(c, shift_map(P, memory.classes[c].projector, mode))
