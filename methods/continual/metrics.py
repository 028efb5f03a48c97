"""Class-incremental metrics, all computed from one accuracy matrix.

Notation: ``A[t, j]`` = top-1 accuracy on the test samples of task ``j`` after learning task
``t`` (0-based, ``j <= t``; entries above the diagonal are NaN because those classes are not
seen yet). ``n_j`` = number of test samples of task ``j``.

* accuracy on all seen classes after task t: ``a_t = Σ_{j<=t} n_j A[t, j] / Σ_{j<=t} n_j``
  (sample-weighted, i.e. plain top-1 accuracy over the union of seen test sets);
* last accuracy ``A_f = a_{T-1}``; average incremental accuracy ``Ā = mean_t a_t``;
* old / new accuracy after t >= 1: accuracy over the test samples of tasks ``< t`` / of task ``t``
  (the reference code's ``grouped`` accuracy, showing task-recency bias);
* forgetting (Chaudhry et al. 2018): ``F = mean_{j<T-1} max_{t in [j, T-2]} (A[t, j] - A[T-1, j])``;
* backward transfer ``BWT = mean_{j<T-1} (A[T-1, j] - A[j, j])``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from core.stats import mean_sd


def accuracy_matrix_row(y_true: np.ndarray, y_pred: np.ndarray, task_of_label: np.ndarray, n_tasks: int) -> np.ndarray:
    """One row of ``A``: accuracy on each task's test samples (NaN for tasks absent from ``y_true``)."""
    row = np.full(n_tasks, np.nan)
    groups = task_of_label[y_true]
    correct = np.asarray(y_pred) == np.asarray(y_true)
    for j in range(n_tasks):
        m = groups == j
        if m.any():
            row[j] = float(correct[m].mean())
    return row


def seen_accuracy(matrix: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """``a_t`` for every t: sample-weighted accuracy over tasks ``0..t``."""
    A = np.asarray(matrix, dtype=float)
    n = np.asarray(sizes, dtype=float)
    out = np.empty(A.shape[0])
    for t in range(A.shape[0]):
        out[t] = float(np.dot(A[t, : t + 1], n[: t + 1]) / n[: t + 1].sum())
    return out


def old_new_accuracy(matrix: np.ndarray, sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Old-class and new-class accuracy after each task (old is NaN after the first task)."""
    A = np.asarray(matrix, dtype=float)
    n = np.asarray(sizes, dtype=float)
    old = np.full(A.shape[0], np.nan)
    new = np.array([A[t, t] for t in range(A.shape[0])])
    for t in range(1, A.shape[0]):
        old[t] = float(np.dot(A[t, :t], n[:t]) / n[:t].sum())
    return old, new


def forgetting(matrix: np.ndarray) -> float:
    """Average forgetting of the tasks before the last one (NaN with a single task)."""
    A = np.asarray(matrix, dtype=float)
    T = A.shape[0]
    if T < 2:
        return math.nan
    drops = [float(np.max(A[j : T - 1, j]) - A[T - 1, j]) for j in range(T - 1)]
    return float(np.mean(drops))


def backward_transfer(matrix: np.ndarray) -> float:
    """``mean_j (A[T-1, j] - A[j, j])`` over the tasks before the last one."""
    A = np.asarray(matrix, dtype=float)
    T = A.shape[0]
    if T < 2:
        return math.nan
    return float(np.mean([A[T - 1, j] - A[j, j] for j in range(T - 1)]))


def summarize(matrix: np.ndarray, sizes: Sequence[int]) -> dict[str, float]:
    """Every scalar metric of one run: A_f, A_bar, forgetting, BWT, final old/new and their gap."""
    a = seen_accuracy(matrix, sizes)
    old, new = old_new_accuracy(matrix, sizes)
    gaps = new[1:] - old[1:]
    return {
        "A_f": float(a[-1]),
        "A_bar": float(a.mean()),
        "forgetting": forgetting(matrix),
        "bwt": backward_transfer(matrix),
        "old_acc": float(old[-1]) if len(old) > 1 else math.nan,
        "new_acc": float(new[-1]),
        "gap": float(gaps[-1]) if len(gaps) else math.nan,
        "mean_gap": float(gaps.mean()) if len(gaps) else math.nan,
    }


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and (population, ddof=0) standard deviation, ignoring NaN; NaN when empty (:func:`core.stats.mean_sd`)."""
    ms = mean_sd(values, ddof=0, nan="omit")
    return ms.mean, ms.sd
