"""PAE's "RL" step: online filtered behaviour cloning's trajectory filter (spec §3.4).

``filter_trajectories`` keeps only successful trajectories (reward > 0); per task, a
single success is kept, and with several successes only those whose length is at
most the ``top_p``-quantile (20th percentile by default, linear interpolation) of that
task's successful lengths — the shortest ways to succeed. ``calculate_upperbound``
is the fraction of tasks solved at least once so far. ``sample_for_training``
draws ``actor_trajectories`` of the kept trajectories without replacement (capped by
availability), as the reference code does.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol, TypeVar

import numpy as np


class TrajectoryLike(Protocol):
    task_id: str
    reward: float
    length: int


T = TypeVar("T", bound=TrajectoryLike)


def filter_trajectories(trajectories: Sequence[T], top_p: float = 0.2) -> list[T]:
    """Successful trajectories, per task only the shortest (≤ the ``top_p`` quantile of success lengths)."""
    if not 0.0 <= top_p <= 1.0:
        raise ValueError("top_p must be in [0, 1]")
    by_task: dict[str, list[T]] = defaultdict(list)
    for t in trajectories:
        if t.reward > 0:
            by_task[t.task_id].append(t)
    kept: list[T] = []
    for task_id in sorted(by_task):
        wins = by_task[task_id]
        if len(wins) == 1:
            kept.extend(wins)
            continue
        cut = float(np.percentile([w.length for w in wins], top_p * 100))
        kept.extend(w for w in wins if w.length <= cut)
    return kept


def calculate_upperbound(trajectories: Sequence[TrajectoryLike]) -> float:
    """Fraction of distinct tasks with at least one successful trajectory (0 when there are none)."""
    tasks: dict[str, bool] = {}
    for t in trajectories:
        tasks[t.task_id] = tasks.get(t.task_id, False) or t.reward > 0
    return sum(tasks.values()) / len(tasks) if tasks else 0.0


def sample_for_training(kept: Sequence[T], n: int, rng: random.Random) -> list[T]:
    """``n`` trajectories drawn without replacement (all of them when fewer are kept)."""
    if n >= len(kept):
        return list(kept)
    return rng.sample(list(kept), n)
