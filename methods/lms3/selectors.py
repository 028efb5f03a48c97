"""LMS3 and its baselines behind one interface (spec §6.1 item 3).

Every selector maps a query representation ``x_q`` and a :class:`DemoPool` to a
:class:`Selection`: pool-local indices in prompt order (best first). Arms:

* ``zero_shot``: no demonstration;
* ``random``: k uniform demos, seeded by (seed, query key);
* ``cosine``: top-k cosine similarity between ``x_q`` and ``x_X`` (plain semantic similarity);
* ``sim_only``: top-k smallest ``Sim`` (Eq. 21);
* ``stab_only``: top-k smallest ``Stab`` (Eq. 22; the same for every query);
* ``score_no_reject``: top-k smallest ``Score = Sim·Stab`` (Eq. 24);
* ``lms3``: Algorithm 1, Score top-k filtered by the Sim top-λ, zero-shot if empty.

``normalize`` (``sim_only``, ``score_no_reject`` and ``lms3`` only) selects the
non-reference, pool-norm-free Sim of :func:`methods.lms3.scores.normalized_inputs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from methods.lms3.config import Orientation, SelectionConfig
from methods.lms3.pool import DemoPool
from methods.lms3.scores import (
    NORMALIZATIONS,
    Normalize,
    cosine_distance,
    lms3_select,
    normalized_inputs,
    similarity,
    smallest_k,
)

ARMS = ("zero_shot", "random", "cosine", "sim_only", "stab_only", "score_no_reject", "lms3")


@dataclass(frozen=True)
class Selection:
    """The demonstrations one selector chose for one query."""

    arm: str
    chosen: list[int]  # pool-local indices, prompt order
    candidates: list[int] = field(default_factory=list)  # before rejection (lms3), else == chosen
    rejected: bool = False  # lms3 only: every candidate fell outside Sim top-λ
    lam: int | None = None


@dataclass(frozen=True)
class Selector:
    """One arm: ``select(x_q, pool, query_key)`` → :class:`Selection`.

    Args:
        arm: one of :data:`ARMS`.
        selection: k, l and min_lambda (the last two matter for ``lms3`` only).
        orientation: which ``P`` the pool's ``p`` vectors use.
        seed: the ``random`` arm's seed.
        normalize: ``"none"`` (the reference), or the non-reference ``"unit"`` / ``"centred"`` Sim.
    """

    arm: str
    selection: SelectionConfig = field(default_factory=SelectionConfig)
    orientation: Orientation = "reference"
    seed: int = 0
    normalize: Normalize = "none"

    def __post_init__(self) -> None:
        if self.arm not in ARMS:
            raise ValueError(f"unknown selector {self.arm!r}; one of {ARMS}")
        if self.normalize not in NORMALIZATIONS:
            raise ValueError(f"unknown normalisation {self.normalize!r}; one of {NORMALIZATIONS}")

    def select(self, x_q: np.ndarray, pool: DemoPool, query_key: int = 0) -> Selection:
        k = self.selection.k
        if self.arm == "zero_shot" or len(pool) == 0:
            return Selection(self.arm, [])
        if self.arm == "random":
            rng = np.random.default_rng([self.seed, int(query_key)])
            idx = rng.choice(len(pool), size=min(k, len(pool)), replace=False).tolist()
            return Selection(self.arm, idx, idx)
        if self.arm == "cosine":
            idx = smallest_k(cosine_distance(x_q, pool.x), k).tolist()
            return Selection(self.arm, idx, idx)
        if self.arm == "sim_only":
            idx = smallest_k(similarity(*normalized_inputs(x_q, pool.p[self.orientation], self.normalize)), k).tolist()
            return Selection(self.arm, idx, idx)
        if self.arm == "stab_only":
            idx = smallest_k(pool.stab, k).tolist()
            return Selection(self.arm, idx, idx)
        choice = lms3_select(
            x_q,
            pool.p[self.orientation],
            pool.stab,
            k=k,
            l=self.selection.l,
            min_lambda=self.selection.min_lambda,
            reject=self.arm == "lms3",
            normalize=self.normalize,
        )
        return Selection(
            self.arm,
            choice.chosen.tolist(),
            choice.score_top.tolist(),
            rejected=choice.rejected,
            lam=choice.lam if self.arm == "lms3" else None,
        )
