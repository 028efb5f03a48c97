"""The statistics-based comparison arms of spec §6, and the choice of γ.

Every arm keeps its own :class:`~methods.dpcr.memory.ClassMemory`, fed with the same new-class
statistics, but moves old classes differently when the backbone changes:

* ``ridge_uncal``  — no shift estimation (W_c = I): ridge on stale statistics;
* ``tssp``         — W_c = P_t (task-wise projection only);
* ``dpcr``         — W_c = P_t Π_c with the relative-tolerance projector (DPCR);
* ``dpcr_literal`` — W_c = P_t Π_c with the reference's literal s > 0 projector;
* ``dpcr_revive``  — W_c = P_t (Π_c + E_c): as ``dpcr`` but units dead for the class under f_{t−1}
  may revive (not in the paper; see :mod:`methods.dpcr.calibration`).

After every task each arm rebuilds its classifier by RRCR (``ridge.py``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from methods.dpcr.calibration import ShiftMode, calibrate
from methods.dpcr.memory import ClassMemory, ProjectorRule
from methods.dpcr.ridge import CurrentTerm, RidgeClassifier, ridge_solution

log = logging.getLogger(__name__)

ARM_MODES: dict[str, tuple[ShiftMode, ProjectorRule]] = {
    "ridge_uncal": ("none", "relative"),
    "tssp": ("tssp", "relative"),
    "dpcr": ("dpcr", "relative"),
    "dpcr_literal": ("dpcr", "literal"),
    "dpcr_revive": ("dpcr_revive", "relative"),
}


@dataclass
class StatisticsArm:
    """One way of keeping old-class statistics up to date, plus its ridge classifier."""

    name: str
    mode: ShiftMode
    memory: ClassMemory
    classifier: RidgeClassifier | None = field(default=None)

    @classmethod
    def create(cls, name: str) -> StatisticsArm:
        mode, rule = ARM_MODES[name]
        return cls(name=name, mode=mode, memory=ClassMemory(rule))

    def shift(self, P: np.ndarray) -> dict[int, tuple[float, float, int]]:
        """Calibrate the stored classes for the backbone change estimated by P_t.

        Returns per class the energy share the class projector removed (see :func:`calibrate`).
        """
        return calibrate(self.memory, P, self.mode)

    def add(self, feats: np.ndarray, labels: np.ndarray) -> None:
        self.memory.add(feats, labels)

    def refit(
        self, gamma: float, count_constant: int | None = None, current: CurrentTerm | None = None
    ) -> RidgeClassifier:
        self.classifier = RidgeClassifier.from_solution(
            ridge_solution(self.memory, gamma, count_constant=count_constant, current=current)
        )
        return self.classifier

    def prototypes(self) -> dict[int, np.ndarray]:
        return {c: s.mean for c, s in self.memory.classes.items()}


def select_gamma(
    feats: np.ndarray,
    labels: np.ndarray,
    grid: tuple[float, ...],
    *,
    holdout: float,
    seed: int,
    count_constant: int | None = None,
) -> tuple[float, dict[float, tuple[float, float]]]:
    """Pick γ on a stratified held-out part of task 1 (spec §6).

    Fits RRCR on the rest for each γ, scores held-out accuracy of the row-normalised classifier,
    and breaks ties by the held-out squared error of the (unnormalised) ridge regression to the
    one-hot targets. Returns (γ, {γ: (accuracy, mse)}).
    """
    from sklearn.model_selection import train_test_split

    labels = np.asarray(labels)
    idx_fit, idx_val = train_test_split(np.arange(len(labels)), test_size=holdout, stratify=labels, random_state=seed)
    lo = int(labels.min())
    mem = ClassMemory("relative")
    mem.add(feats[idx_fit], labels[idx_fit] - lo)
    y_val = labels[idx_val] - lo
    Y = np.eye(len(mem))[y_val]
    scores: dict[float, tuple[float, float]] = {}
    for g in grid:
        W = ridge_solution(mem, g, count_constant=count_constant)
        acc = float((RidgeClassifier.from_solution(W).predict(feats[idx_val]) == y_val).mean())
        mse = float(((feats[idx_val] @ W - Y) ** 2).mean())
        scores[g] = (acc, mse)
    best = max(grid, key=lambda g: (scores[g][0], -scores[g][1]))
    log.info("gamma scores on the task-1 hold-out: %s -> %g", scores, best)
    return float(best), scores
