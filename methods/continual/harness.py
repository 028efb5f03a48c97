"""The class-incremental protocol: learn task after task, evaluate every head on all seen classes.

:func:`run_sequence` drives one learner through one stream; :func:`run_experiment` repeats that
over seeds (each seed draws its own class order, initialisation and subsample) and keeps every
run's accuracy matrices, so means ± std and plots come from measured numbers only.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from core.jobs import JobContext, null_context
from methods.continual.data import DIGITS_SPLIT_SEED, TaskStream, load_dataset, make_stream
from methods.continual.learner import ContinualLearner, get_learner
from methods.continual.metrics import accuracy_matrix_row, mean_std, old_new_accuracy, seen_accuracy, summarize

log = logging.getLogger(__name__)


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run a block with ``n`` intra-op torch threads, restoring the previous count afterwards.

    Small convolutional models on a shared laptop run several times faster with one thread
    than with two threads fighting other processes (measured: 34 vs 300 ms per step).
    ``None`` leaves torch's setting alone.
    """
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class RunResult:
    """One learner on one stream: an accuracy matrix per head, plus per-task diagnostics."""

    seed: int
    class_order: list[int]
    sizes: list[int]
    matrices: dict[str, list[list[float]]]
    diagnostics: list[dict[str, float]] = field(default_factory=list)
    task_seconds: list[float] = field(default_factory=list)

    def matrix(self, head: str) -> np.ndarray:
        return np.asarray(self.matrices[head], dtype=float)

    def summary(self, head: str) -> dict[str, float]:
        return summarize(self.matrix(head), self.sizes)

    def curves(self, head: str) -> dict[str, list[float]]:
        """Seen / old / new accuracy after each task."""
        a = seen_accuracy(self.matrix(head), self.sizes)
        old, new = old_new_accuracy(self.matrix(head), self.sizes)
        return {"seen": a.tolist(), "old": old.tolist(), "new": new.tolist()}


def run_sequence(
    learner: ContinualLearner, stream: TaskStream, progress: JobContext | None = None, *, seed: int = 0, label: str = ""
) -> RunResult:
    """Learn every task of ``stream`` in order and evaluate every head after each task."""
    progress = progress or null_context()
    T = len(stream)
    task_of_label = np.repeat(np.arange(T), stream.classes_per_task)
    sizes = [int(len(task.y_test)) for task in stream]
    mats = {h: np.full((T, T), np.nan) for h in learner.heads}
    result = RunResult(seed=seed, class_order=list(stream.class_order), sizes=sizes, matrices={})
    for t, task in enumerate(stream):
        t0 = time.perf_counter()
        learner.learn_task(task, progress.sub(t / T, (t + 0.95) / T))
        result.task_seconds.append(time.perf_counter() - t0)
        x_seen, y_seen = stream.test_upto(t)
        for h in learner.heads:
            pred = np.asarray(learner.predict(x_seen, head=h), dtype=np.int64)
            if pred.shape != y_seen.shape:
                raise ValueError(f"head {h!r} returned shape {pred.shape}, expected {y_seen.shape}")
            mats[h][t] = accuracy_matrix_row(y_seen, pred, task_of_label, T)
        result.diagnostics.append({k: float(v) for k, v in learner.diagnostics().items()})
        head0 = learner.heads[0]
        acc = seen_accuracy(mats[head0][: t + 1, : t + 1], sizes[: t + 1])[-1]
        best = max(learner.heads, key=lambda h: seen_accuracy(mats[h][: t + 1, : t + 1], sizes[: t + 1])[-1])
        progress(
            (t + 1) / T,
            f"{label}task {t + 1}/{T} done: {head0} {acc:.3f}" + (f", best {best}" if len(learner.heads) > 1 else ""),
        )
        log.info(
            "%stask %d/%d: %s",
            label,
            t + 1,
            T,
            ", ".join(f"{h}={seen_accuracy(mats[h][: t + 1, : t + 1], sizes[: t + 1])[-1]:.3f}" for h in learner.heads),
        )
    result.matrices = {h: m.tolist() for h, m in mats.items()}
    return result


@dataclass
class ExperimentResult:
    """Several seeds of one method on one stream definition."""

    method: str
    heads: list[str]
    dataset: str
    classes_per_task: int
    samples_per_class: int | None
    options: dict[str, Any]
    runs: list[RunResult] = field(default_factory=list)

    def per_seed(self, head: str, metric: str) -> list[float]:
        return [r.summary(head)[metric] for r in self.runs]

    def aggregate(self) -> dict[str, dict[str, tuple[float, float]]]:
        """``{head: {metric: (mean, std)}}`` over seeds."""
        out: dict[str, dict[str, tuple[float, float]]] = {}
        for h in self.heads:
            metrics = self.runs[0].summary(h).keys()
            out[h] = {m: mean_std(self.per_seed(h, m)) for m in metrics}
        return out

    def mean_matrix(self, head: str) -> np.ndarray:
        """Seed-mean accuracy matrix (NaN above the diagonal)."""
        if not self.runs:
            return np.zeros((0, 0))
        with warnings.catch_warnings():  # all-NaN cells (not yet seen) stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(np.stack([r.matrix(head) for r in self.runs]), axis=0)

    def mean_curves(self, head: str) -> dict[str, list[float]]:
        """Seed-mean seen / old / new accuracy after each task."""
        curves = [r.curves(head) for r in self.runs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return {
                k: np.nanmean(np.array([c[k] for c in curves], dtype=float), axis=0).tolist()
                for k in ("seen", "old", "new")
            }

    def diagnostic(self, key: str) -> list[list[float]]:
        """Per seed, per task value of diagnostic ``key`` (NaN where a task did not report it)."""
        return [[d.get(key, float("nan")) for d in r.diagnostics] for r in self.runs]

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "heads": self.heads,
            "dataset": self.dataset,
            "classes_per_task": self.classes_per_task,
            "samples_per_class": self.samples_per_class,
            "options": self.options,
            "runs": [asdict(r) for r in self.runs],
            "aggregate": {h: {m: list(v) for m, v in ms.items()} for h, ms in self.aggregate().items()},
        }


def seed_list(n_seeds: int, first: int = DIGITS_SPLIT_SEED) -> list[int]:
    """``[first, first+1, ...]``: the first seed reproduces the spec's class order (1993)."""
    return [first + i for i in range(n_seeds)]


def run_experiment(
    method: str,
    *,
    seeds: list[int],
    options: dict[str, Any] | None = None,
    dataset: str = "digits",
    classes_per_task: int = 2,
    samples_per_class: int | None = None,
    n_tasks: int | None = None,
    threads: int | None = 1,
    progress: JobContext | None = None,
    device: Any = None,
    amp: str = "off",
) -> ExperimentResult:
    """Run registered method ``method`` once per seed on ``dataset`` and keep every run.

    Each seed sets the class order (``RandomState(seed).permutation``), the training-set
    subsample (``samples_per_class``) and the learner's initialisation. The train/test split
    itself is the dataset's fixed split, so test sets are comparable across seeds.
    ``threads`` sets torch's intra-op threads for the run (see :func:`torch_threads`).
    ``device``/``amp`` go to the learner's factory (see :meth:`LearnerSpec.build`).
    """
    progress = progress or null_context()
    spec = get_learner(method)
    opts = spec.validate_options(options)
    split = load_dataset(dataset)
    exp = ExperimentResult(
        method=method,
        heads=list(spec.heads),
        dataset=dataset,
        classes_per_task=classes_per_task,
        samples_per_class=samples_per_class,
        options=opts.model_dump(mode="json"),
    )
    for i, seed in enumerate(seeds):
        stream = make_stream(
            split, classes_per_task=classes_per_task, seed=seed, samples_per_class=samples_per_class, n_tasks=n_tasks
        )
        learner = spec.build(opts, seed=seed, stream=stream, device=device, amp=amp)
        if tuple(learner.heads) != tuple(spec.heads):
            exp.heads = list(learner.heads)
        sub = progress.sub(i / len(seeds), (i + 1) / len(seeds))
        with torch_threads(threads):
            exp.runs.append(run_sequence(learner, stream, sub, seed=seed, label=f"seed {i + 1}/{len(seeds)} ({seed}) "))
    return exp
