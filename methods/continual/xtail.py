"""The X-TAIL protocol (cross-domain task-agnostic incremental learning; Xu et al., RAIL 2024).

Domains (datasets) arrive one after another, each with its own classes. After each training step
every domain's test set is classified over the **union of all domains' label spaces** — classes of
domains not learned yet included, no task id given — so a row of the accuracy matrix holds both
retained accuracy (domains learned before) and zero-shot transfer (domains still to come).

* :class:`XTailTask` — one domain: class names, global label ids, train/test images and their
  frozen features (methods that never touch the image encoder use ``features``).
* :class:`XTailStream` — the domains in order plus the union class-name list.
* :class:`XTailLearner` — ``learn_task(task, progress)`` and ``scores(inputs, head) -> (n, C_all)``;
  the harness takes the argmax over the union (``label_space="union"``, X-TAIL) or over the test
  domain's own classes (``"per_task"``, MTIL's inference).
* :func:`xtail_metrics` — Transfer / Average / Last from the K×K matrix ``A[t, d]``:
  Transfer(d) = mean_{t<d} A[t, d] (d ≥ 2), Average(d) = mean_t A[t, d], Last(d) = A[K, d], each
  averaged over domains (spec lada.md §3.5; RAIL's ``primal_RAIL.py`` computes the same).

Learners register with :func:`methods.continual.learner.register_learner` like DPCR's; their
factory receives an :class:`XTailStream` as ``stream``.

Devices: a stream's frozen features live where its backbone is (:attr:`XTailStream.device`);
images and labels stay on the CPU. Learners compute there (in the stream's ``amp``), ``scores``
may return tensors on that device, and the harness reads back only the accuracies.
"""

from __future__ import annotations

import math
import time
import warnings
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from core.jobs import JobContext, null_context
from methods.continual.learner import ContinualLearner, get_learner
from methods.continual.metrics import mean_std

LabelSpace = Literal["union", "per_task"]


@dataclass(frozen=True)
class Inputs:
    """A batch to classify: images (n, 3, H, W) in [0, 1] and their frozen L2-normalised features (n, d)."""

    images: torch.Tensor
    features: torch.Tensor

    def __len__(self) -> int:
        return len(self.features)


@dataclass(frozen=True)
class XTailTask:
    """One domain of the stream. Labels are global ids in the union label space."""

    index: int
    name: str
    classes: tuple[int, ...]
    classnames: tuple[str, ...]
    train: Inputs
    y_train: torch.Tensor
    test: Inputs
    y_test: torch.Tensor


@dataclass(frozen=True)
class XTailStream:
    """Domains in training order; ``classnames[c]`` names global label ``c``."""

    tasks: tuple[XTailTask, ...]
    classnames: tuple[str, ...]
    seed: int = 0
    backbone: Any = None  # the frozen encoder that produced ``Inputs.features`` (VLM streams)
    meta: dict = field(default_factory=dict)
    amp: str = "off"  # mixed precision of the learners' training (core.train.fit's ``amp``)

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self):
        return iter(self.tasks)

    @property
    def n_classes(self) -> int:
        return len(self.classnames)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tasks]

    @property
    def device(self) -> torch.device:
        """Where learners compute: the backbone's device (else the first task's features', else the CPU)."""
        params = getattr(self.backbone, "parameters", None)
        if params is not None:
            for p in params():
                return p.device
        if self.tasks:
            return self.tasks[0].train.features.device
        return torch.device("cpu")


class XTailLearner(ContinualLearner):
    """A learner scored on the union label space; ``predict`` is the union argmax of ``scores``."""

    @abstractmethod
    def learn_task(self, task: XTailTask, progress: JobContext) -> None:  # type: ignore[override]
        """Learn one domain from its training split."""

    @abstractmethod
    def scores(self, x: Inputs, head: str | None = None) -> torch.Tensor:
        """(n, C_all) class scores over the union of every domain's classes (seen and unseen)."""

    def predict(self, x: Inputs, head: str | None = None) -> np.ndarray:  # type: ignore[override]
        return self.scores(x, head).argmax(1).cpu().numpy()


def domain_accuracy(scores: torch.Tensor, y: torch.Tensor, classes: Sequence[int], label_space: LabelSpace) -> float:
    """Top-1 accuracy; ``per_task`` restricts the argmax to ``classes`` (the test domain's own).

    Computed where ``scores`` are (``y`` is moved there); only the accuracy comes back.
    """
    if label_space == "per_task":
        cls = torch.as_tensor(list(classes), device=scores.device)
        pred = cls[scores[:, cls].argmax(1)]
    else:
        pred = scores.argmax(1)
    return float((pred == y.to(pred.device)).float().mean())


def xtail_metrics(matrix: np.ndarray) -> dict[str, float]:
    """Transfer, Average and Last (fractions) from ``A[t, d]`` (K×K, every cell measured)."""
    A = np.asarray(matrix, dtype=float)
    K = A.shape[0]
    if A.shape != (K, K) or np.isnan(A).any():
        raise ValueError("X-TAIL metrics need a full K×K accuracy matrix")
    transfer = [A[:d, d].mean() for d in range(1, K)]
    return {
        "transfer": float(np.mean(transfer)) if transfer else math.nan,
        "average": float(A.mean(axis=0).mean()),
        "last": float(A[K - 1].mean()),
    }


METRICS = ("transfer", "average", "last")


@dataclass
class XTailRun:
    """One learner over one stream: a K×K matrix per head and label space, diagnostics per task."""

    seed: int
    domains: list[str]
    matrices: dict[str, list[list[float]]]
    per_task_matrices: dict[str, list[list[float]]] = field(default_factory=dict)
    diagnostics: list[dict[str, float]] = field(default_factory=list)
    task_seconds: list[float] = field(default_factory=list)

    def summary(self, head: str, label_space: LabelSpace = "union") -> dict[str, float]:
        mats = self.matrices if label_space == "union" else self.per_task_matrices
        return xtail_metrics(np.asarray(mats[head]))


def run_xtail_sequence(
    learner: XTailLearner,
    stream: XTailStream,
    progress: JobContext | None = None,
    *,
    seed: int = 0,
    label: str = "",
    on_task: Callable[[int, XTailLearner], None] | None = None,
) -> XTailRun:
    """Learn each domain in order; after each, score every domain's test set over the union label space."""
    progress = progress or null_context()
    K = len(stream)
    union = {h: np.full((K, K), np.nan) for h in learner.heads}
    per_task = {h: np.full((K, K), np.nan) for h in learner.heads}
    run = XTailRun(seed=seed, domains=stream.names, matrices={})
    for t, task in enumerate(stream):
        t0 = time.perf_counter()
        learner.learn_task(task, progress.sub(t / K, (t + 0.9) / K))
        run.task_seconds.append(time.perf_counter() - t0)
        if on_task is not None:
            on_task(t, learner)
        for h in learner.heads:
            for d, test_task in enumerate(stream):
                s = learner.scores(test_task.test, h)
                if s.shape != (len(test_task.y_test), stream.n_classes):
                    raise ValueError(f"head {h!r} returned scores {tuple(s.shape)}, expected (n, {stream.n_classes})")
                union[h][t, d] = domain_accuracy(s, test_task.y_test, test_task.classes, "union")
                per_task[h][t, d] = domain_accuracy(s, test_task.y_test, test_task.classes, "per_task")
        run.diagnostics.append({k: float(v) for k, v in learner.diagnostics().items()})
        h0 = learner.heads[0]
        progress(
            (t + 1) / K,
            f"{label}task {t + 1}/{K} ({task.name}) done: {h0} learned-domain acc {np.mean(union[h0][t, : t + 1]):.3f}",
        )
    run.matrices = {h: m.tolist() for h, m in union.items()}
    run.per_task_matrices = {h: m.tolist() for h, m in per_task.items()}
    return run


@dataclass
class XTailExperiment:
    """Several seeds of one registered method on one X-TAIL stream definition."""

    method: str
    heads: list[str]
    domains: list[str]
    options: dict[str, Any]
    runs: list[XTailRun] = field(default_factory=list)

    def per_seed(self, head: str, metric: str, label_space: LabelSpace = "union") -> list[float]:
        return [r.summary(head, label_space)[metric] for r in self.runs]

    def aggregate(self, label_space: LabelSpace = "union") -> dict[str, dict[str, tuple[float, float]]]:
        """``{head: {metric: (mean, std)}}`` over seeds."""
        return {h: {m: mean_std(self.per_seed(h, m, label_space)) for m in METRICS} for h in self.heads}

    def mean_matrix(self, head: str, label_space: LabelSpace = "union") -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            key = "matrices" if label_space == "union" else "per_task_matrices"
            return np.nanmean(np.stack([np.asarray(getattr(r, key)[head]) for r in self.runs]), axis=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "heads": self.heads,
            "domains": self.domains,
            "options": self.options,
            "runs": [asdict(r) for r in self.runs],
            "aggregate": {h: {m: list(v) for m, v in ms.items()} for h, ms in self.aggregate().items()},
            "aggregate_per_task": {
                h: {m: list(v) for m, v in ms.items()} for h, ms in self.aggregate("per_task").items()
            },
        }


def run_xtail_experiment(
    method: str,
    *,
    seeds: Sequence[int],
    make_stream: Callable[[int], XTailStream],
    options: dict[str, Any] | None = None,
    progress: JobContext | None = None,
    threads: int | None = 1,
) -> XTailExperiment:
    """Run registered learner ``method`` once per seed on ``make_stream(seed)``; keep every run."""
    from methods.continual.harness import torch_threads

    progress = progress or null_context()
    spec = get_learner(method)
    opts = spec.validate_options(options)
    exp = XTailExperiment(method=method, heads=list(spec.heads), domains=[], options=opts.model_dump(mode="json"))
    for i, seed in enumerate(seeds):
        stream = make_stream(seed)
        exp.domains = stream.names
        with torch_threads(threads):
            learner = spec.build(opts, seed=seed, stream=stream)  # type: ignore[arg-type]
            if not isinstance(learner, XTailLearner):
                raise TypeError(f"{method} is not an X-TAIL learner")
            exp.heads = list(learner.heads)
            sub = progress.sub(i / len(seeds), (i + 1) / len(seeds))
            exp.runs.append(run_xtail_sequence(learner, stream, sub, seed=seed, label=f"{method} seed {seed}: "))
    return exp
