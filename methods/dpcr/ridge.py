"""Ridge-regression classifier reconstruction, RRCR (spec §3.5), float64.

From the (calibrated) statistics of every seen class:

    R = Σ_c Σ_c + γ I,        Q[:, c] = N_c μ_cᵀ,        Ŵ = R⁻¹ Q   (d × C)

For the classes of the current task Σ_c and N_c μ_c are exactly Φ_cᵀΦ_c and Φ_cᵀ Y_c, so this is
the spec's "old statistics + new data" form; for calibrated old classes N_c μ_cᵀ = N_c W_cᵀ μ_cᵀ.
The classifier is Ŵᵀ with each class row L2-normalised; logits = x · normalise(Ŵᵀ)ᵀ.
``count_constant`` replaces N_c by the reference's constant ``num_per_class``.

The reference takes the current task's term (Φ_newᵀΦ_new, Φ_newᵀY_new) from one pass of the
*augmented* training loader through f_t rather than from the stored clean statistics; a
:class:`CurrentTerm` passed to :func:`ridge_solution` replaces the stored statistics of its classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from methods.dpcr.memory import ClassMemory


@dataclass(frozen=True)
class CurrentTerm:
    """The current task's data term: ``gram`` = ΦᵀΦ (d×d), ``cross`` = ΦᵀY over ``labels`` (d×len)."""

    gram: np.ndarray
    cross: np.ndarray
    labels: tuple[int, ...]

    @classmethod
    def from_features(cls, feats: np.ndarray, y: np.ndarray, labels: tuple[int, ...]) -> CurrentTerm:
        phi = np.asarray(feats, dtype=np.float64)
        Y = (np.asarray(y)[:, None] == np.asarray(labels)[None, :]).astype(np.float64)
        return cls(gram=phi.T @ phi, cross=phi.T @ Y, labels=tuple(labels))


def ridge_solution(
    memory: ClassMemory, gamma: float, *, count_constant: int | None = None, current: CurrentTerm | None = None
) -> np.ndarray:
    """Ŵ = (Σ_c Σ_c + γI)⁻¹ [N_c μ_cᵀ]_c, columns ordered by label 0..C−1 (labels must be contiguous).

    With ``current``, the classes in ``current.labels`` contribute ``current.gram`` to R and
    ``current.cross`` to their columns of Q instead of their stored statistics.
    """
    labels = memory.labels
    if labels != list(range(len(labels))):
        raise ValueError("memory labels must be 0..C-1")
    replaced = set(current.labels) if current is not None else set()
    if not replaced <= set(labels):
        raise ValueError("the current term's classes must be in memory")
    d = memory.classes[labels[0]].mean.shape[0]
    R = gamma * np.eye(d)
    Q = np.zeros((d, len(labels)))
    for c in labels:
        if c in replaced:
            continue
        st = memory.classes[c]
        R += st.gram
        Q[:, c] = (count_constant if count_constant is not None else st.count) * st.mean
    if current is not None:
        R += current.gram
        Q[:, list(current.labels)] += current.cross
    return np.linalg.solve(R, Q)


def joint_ridge(phi: np.ndarray, y: np.ndarray, gamma: float, n_classes: int) -> np.ndarray:
    """Ridge on raw features: (ΦᵀΦ + γI)⁻¹ ΦᵀY with one-hot Y (the joint-training reference)."""
    phi = np.asarray(phi, dtype=np.float64)
    Y = np.eye(n_classes)[np.asarray(y)]
    return np.linalg.solve(phi.T @ phi + gamma * np.eye(phi.shape[1]), phi.T @ Y)


@dataclass
class RidgeClassifier:
    """Row-normalised classifier weight (C × d)."""

    weight: np.ndarray

    @classmethod
    def from_solution(cls, W: np.ndarray) -> RidgeClassifier:
        Wt = np.asarray(W, dtype=np.float64).T
        norms = np.linalg.norm(Wt, axis=1, keepdims=True)
        return cls(weight=Wt / np.where(norms > 0, norms, 1.0))

    @property
    def n_classes(self) -> int:
        return self.weight.shape[0]

    def logits(self, feats: np.ndarray) -> np.ndarray:
        return np.asarray(feats, dtype=np.float64) @ self.weight.T

    def predict(self, feats: np.ndarray) -> np.ndarray:
        return self.logits(feats).argmax(axis=1)
