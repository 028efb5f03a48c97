"""The task-incremental protocol: learn task after task, evaluate every seen task with its own prompt.

A sibling of :mod:`methods.continual.harness` (class-incremental, one label space) for learners
whose tasks keep their own output space and format, such as instruction-tuned LLMs (SEFE).
After learning task ``t`` the learner answers the test items of every task ``j ≤ t``; each
answer is judged twice, for **format compliance** (does it parse in task j's expected answer
style?) and **correctness**. That gives three matrices with ``M[t, j]`` = value on task j after
task t (NaN above the diagonal):

* ``accuracy`` — correct answers / all answers (the usual accuracy matrix ``a_{t,j}``);
* ``compliance`` — format-compliant answers / all answers (1 − superficial forgetting);
* ``essential`` — correct / compliant answers (accuracy among usable answers; NaN when none).

Summary metrics (spec §4 of SEFE, standard in continual instruction tuning), from the accuracy
matrix A with T tasks: ``MFT = mean_j A[j, j]`` (accuracy right after learning), ``MFN =
mean_j A[T−1, j]`` (final), ``MAA = mean_t mean_{j≤t} A[t, j]`` (average over stages),
``BWT = mean_{j<T−1} (A[T−1, j] − A[j, j])`` and the forgetting of :mod:`methods.continual.metrics`.
The same four are reported for the compliance matrix (superficial) and the essential matrix.
"""

from __future__ import annotations

import math
import time
import warnings
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from core.jobs import JobContext, null_context
from methods.continual.metrics import backward_transfer, forgetting, mean_std

MATRICES = ("accuracy", "compliance", "essential")


@dataclass
class TaskEval:
    """One task's test answers at one stage."""

    n: int
    correct: int
    compliant: int
    examples: list[dict[str, Any]] = field(default_factory=list)  # a few {prompt, output, answer, ...}

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else math.nan

    @property
    def compliance(self) -> float:
        return self.compliant / self.n if self.n else math.nan

    @property
    def essential(self) -> float:
        return self.correct / self.compliant if self.compliant else math.nan


class TaskIncrementalLearner(ABC):
    """A learner driven task by task; it sees only the current task's training data."""

    @abstractmethod
    def learn_task(self, t: int, task: str, progress: JobContext) -> dict[str, float]:
        """Learn task ``t`` (0-based) named ``task``; return diagnostics (may be empty)."""

    @abstractmethod
    def evaluate(self, t: int, tasks: list[str], progress: JobContext) -> dict[str, TaskEval]:
        """Answer and judge the test items of every task in ``tasks`` after learning task ``t``."""


def summarize_matrix(M: np.ndarray) -> dict[str, float]:
    """MFT, MFN, MAA, BWT and forgetting of one T×T stage matrix (lower triangle used)."""
    M = np.asarray(M, dtype=float)
    T = M.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {
            "MFT": float(np.nanmean(np.diag(M))),
            "MFN": float(np.nanmean(M[T - 1])),
            "MAA": float(np.nanmean([np.nanmean(M[t, : t + 1]) for t in range(T)])),
            "BWT": backward_transfer(M) if T > 1 else math.nan,
            "forgetting": forgetting(M) if T > 1 else math.nan,
        }


@dataclass
class TIRun:
    """One learner on one task sequence and seed."""

    seed: int
    tasks: list[str]
    matrices: dict[str, list[list[float]]]
    diagnostics: list[dict[str, float]] = field(default_factory=list)
    examples: list[dict[str, list[dict[str, Any]]]] = field(default_factory=list)  # per stage, per task
    task_seconds: list[float] = field(default_factory=list)

    def matrix(self, kind: str = "accuracy") -> np.ndarray:
        return np.asarray(self.matrices[kind], dtype=float)

    def summary(self, kind: str = "accuracy") -> dict[str, float]:
        return summarize_matrix(self.matrix(kind))


def run_sequence(
    learner: TaskIncrementalLearner,
    tasks: list[str],
    progress: JobContext | None = None,
    *,
    seed: int = 0,
    label: str = "",
) -> TIRun:
    """Learn ``tasks`` in order; after each, evaluate every task seen so far (a row of each matrix)."""
    progress = progress or null_context()
    T = len(tasks)
    mats = {k: np.full((T, T), np.nan) for k in MATRICES}
    run = TIRun(seed=seed, tasks=list(tasks), matrices={})
    for t, name in enumerate(tasks):
        t0 = time.perf_counter()
        diag = learner.learn_task(t, name, progress.sub(t / T, (t + 0.8) / T))
        run.task_seconds.append(time.perf_counter() - t0)
        evals = learner.evaluate(t, list(tasks[: t + 1]), progress.sub((t + 0.8) / T, (t + 1) / T))
        for j, other in enumerate(tasks[: t + 1]):
            e = evals[other]
            mats["accuracy"][t, j], mats["compliance"][t, j], mats["essential"][t, j] = (
                e.accuracy,
                e.compliance,
                e.essential,
            )
        run.diagnostics.append({k: float(v) for k, v in (diag or {}).items()})
        run.examples.append({k: v.examples for k, v in evals.items()})
        row = mats["accuracy"][t, : t + 1]
        progress((t + 1) / T, f"{label}after {name}: mean acc {np.nanmean(row):.3f}")
    run.matrices = {k: m.tolist() for k, m in mats.items()}
    return run


@dataclass
class TIExperiment:
    """Several seeds of one arm."""

    arm: str
    tasks: list[str]
    runs: list[TIRun] = field(default_factory=list)

    def aggregate(self, kind: str = "accuracy") -> dict[str, tuple[float, float]]:
        """``{metric: (mean, std)}`` over seeds."""
        per = [r.summary(kind) for r in self.runs]
        return {m: mean_std([p[m] for p in per]) for m in per[0]} if per else {}

    def mean_matrix(self, kind: str = "accuracy") -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(np.stack([r.matrix(kind) for r in self.runs]), axis=0)

    def to_dict(self) -> dict[str, Any]:
        return {"arm": self.arm, "tasks": self.tasks, "runs": [asdict(r) for r in self.runs]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TIExperiment:
        return cls(arm=d["arm"], tasks=list(d["tasks"]), runs=[TIRun(**r) for r in d["runs"]])
