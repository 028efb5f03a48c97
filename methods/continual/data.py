"""Class-incremental task streams: a seeded class order cut into tasks of equal size.

A :class:`TaskStream` holds a labelled train/test split, a class order and the
number of classes per task. Labels are remapped to *stream labels*: the class at
position ``k`` of the class order gets label ``k``, so task ``t`` owns the labels
``t*m .. (t+1)*m - 1`` (``m`` classes per task) and a learner's output dimension
simply grows with each task. ``original_class`` maps a stream label back.

Datasets are looked up by name in :data:`DATASETS`; a later continual method adds
its own with :func:`register_dataset` (a function returning a :class:`LabelledSplit`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger(__name__)

DIGITS_SPLIT_SEED = 1993


@dataclass(frozen=True)
class LabelledSplit:
    """Arrays of one dataset: inputs (N, ...) float32 and integer labels (N,)."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    name: str = ""

    @property
    def n_classes(self) -> int:
        return int(max(self.y_train.max(), self.y_test.max())) + 1


@dataclass(frozen=True)
class Task:
    """One step of the stream: the data a learner may see while learning it.

    ``x_train``/``y_train`` hold only this task's classes (stream labels). The test
    arrays are the harness's; a learner never receives them through ``learn_task``.
    """

    index: int
    classes: tuple[int, ...]
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def n_seen(self) -> int:
        """Number of classes seen once this task is learned (labels 0..n_seen-1)."""
        return max(self.classes) + 1


@dataclass(frozen=True)
class TaskStream:
    """A class-incremental sequence of :class:`Task`."""

    tasks: tuple[Task, ...]
    class_order: tuple[int, ...]
    classes_per_task: int
    input_shape: tuple[int, ...]
    dataset: str = ""
    samples_per_class: int | None = None
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self):
        return iter(self.tasks)

    def original_class(self, label: int) -> int:
        return self.class_order[label]

    def test_upto(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Test inputs and labels of every class seen after task ``t`` (0-based)."""
        xs = [task.x_test for task in self.tasks[: t + 1]]
        ys = [task.y_test for task in self.tasks[: t + 1]]
        return np.concatenate(xs), np.concatenate(ys)


def seeded_class_order(n_classes: int, seed: int) -> tuple[int, ...]:
    """The class order of a run: ``np.random.RandomState(seed).permutation(n_classes)``."""
    return tuple(int(c) for c in np.random.RandomState(seed).permutation(n_classes))


def _subsample_per_class(y: np.ndarray, k: int, rng: np.random.RandomState) -> np.ndarray:
    """Indices keeping at most ``k`` samples of each class (seeded, order preserved)."""
    keep = []
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        if len(idx) > k:
            idx = np.sort(rng.choice(idx, size=k, replace=False))
        keep.append(idx)
    return np.sort(np.concatenate(keep))


def make_stream(
    split: LabelledSplit,
    *,
    classes_per_task: int,
    class_order: tuple[int, ...] | None = None,
    seed: int = DIGITS_SPLIT_SEED,
    samples_per_class: int | None = None,
    n_tasks: int | None = None,
) -> TaskStream:
    """Cut ``split`` into tasks of ``classes_per_task`` classes following a seeded class order.

    ``class_order`` defaults to :func:`seeded_class_order` (``seed``); ``samples_per_class``
    keeps at most that many *training* samples per class (test sets stay whole);
    ``n_tasks`` truncates the stream (default: every class).
    """
    n_classes = split.n_classes
    order = tuple(class_order) if class_order is not None else seeded_class_order(n_classes, seed)
    if sorted(order) != list(range(n_classes)):
        raise ValueError(f"class order must be a permutation of 0..{n_classes - 1}")
    if classes_per_task < 1 or n_classes % classes_per_task:
        raise ValueError(f"{n_classes} classes cannot be cut into tasks of {classes_per_task}")
    total = n_classes // classes_per_task
    n_tasks = total if n_tasks is None else n_tasks
    if not 1 <= n_tasks <= total:
        raise ValueError(f"n_tasks must be within 1..{total}")
    remap = np.empty(n_classes, dtype=np.int64)
    remap[list(order)] = np.arange(n_classes)
    x_tr, y_tr = split.x_train, remap[split.y_train]
    if samples_per_class is not None:
        keep = _subsample_per_class(y_tr, samples_per_class, np.random.RandomState(seed))
        x_tr, y_tr = x_tr[keep], y_tr[keep]
    y_te = remap[split.y_test]
    tasks = []
    for t in range(n_tasks):
        classes = tuple(range(t * classes_per_task, (t + 1) * classes_per_task))
        m_tr = np.isin(y_tr, classes)
        m_te = np.isin(y_te, classes)
        tasks.append(
            Task(
                index=t,
                classes=classes,
                x_train=x_tr[m_tr],
                y_train=y_tr[m_tr],
                x_test=split.x_test[m_te],
                y_test=y_te[m_te],
            )
        )
    return TaskStream(
        tasks=tuple(tasks),
        class_order=order,
        classes_per_task=classes_per_task,
        input_shape=tuple(split.x_train.shape[1:]),
        dataset=split.name,
        samples_per_class=samples_per_class,
    )


def load_digits_split(seed: int = DIGITS_SPLIT_SEED, test_size: float = 0.3) -> LabelledSplit:
    """scikit-learn's bundled digits: 1797 images 1x8x8 scaled to [0, 1] (÷16), stratified 70/30 split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    ds = load_digits()
    x = (ds.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = ds.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=test_size, stratify=y, random_state=seed)
    return LabelledSplit(x_tr, y_tr, x_te, y_te, name="digits")


DatasetFn = Callable[[], LabelledSplit]
DATASETS: dict[str, DatasetFn] = {"digits": load_digits_split}


def register_dataset(name: str, fn: DatasetFn) -> None:
    """Make ``fn`` available to the harness (and the ``continual.run`` job) as ``name``."""
    DATASETS[name] = fn


def load_dataset(name: str) -> LabelledSplit:
    try:
        return DATASETS[name]()
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}") from None
