"""Seed-level statistics of the DPCR reproduction: each arm at its own γ, CIs and CIP energy.

* :func:`run_with_final_predictions` runs the harness protocol seed by seed (as
  :func:`methods.continual.harness.run_experiment`) and also keeps, per seed, every head's
  correctness on the final test set (all 10 classes), which the γ selection below needs.
* :func:`own_gamma` compares the ridge arms each at its own best γ with a *multi-class hold-out*:
  the final test set is split per class into two seeded halves; γ is picked on one half by accuracy
  over all seen classes and scored on the other, and the two directions are averaged (2-fold
  cross-fit). No number is scored on the half it was selected on. This is an evaluation device for
  a fair comparison between arms, not part of the exemplar-free learner (which keeps the spec's
  task-1 hold-out rule).
* :func:`t_interval` gives the mean and a Student-t 95 % CI over seeds; :func:`paired` the same for
  per-seed differences between two arms (paired: the arms share one training trajectory per seed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core import stats
from core.jobs import JobContext, null_context
from methods.continual.data import load_dataset, make_stream
from methods.continual.harness import ExperimentResult, run_sequence, torch_threads
from methods.continual.learner import get_learner


@dataclass
class FinalPredictions:
    """Per seed: final-task test labels and each head's correctness on them."""

    labels: list[np.ndarray] = field(default_factory=list)
    correct: list[dict[str, np.ndarray]] = field(default_factory=list)


def run_with_final_predictions(
    method: str,
    *,
    seeds: list[int],
    options: dict[str, Any],
    dataset: str = "digits",
    classes_per_task: int = 2,
    samples_per_class: int | None = None,
    threads: int | None = 1,
    progress: JobContext | None = None,
    device: Any = None,
    amp: str = "off",
) -> tuple[ExperimentResult, FinalPredictions]:
    """The harness protocol (same streams, learners and accuracy matrices) plus final predictions."""
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
    final = FinalPredictions()
    for i, seed in enumerate(seeds):
        stream = make_stream(split, classes_per_task=classes_per_task, seed=seed, samples_per_class=samples_per_class)
        learner = spec.build(opts, seed=seed, stream=stream, device=device, amp=amp)
        exp.heads = list(learner.heads)
        sub = progress.sub(i / len(seeds), (i + 1) / len(seeds))
        with torch_threads(threads):
            exp.runs.append(run_sequence(learner, stream, sub, seed=seed, label=f"seed {i + 1}/{len(seeds)} ({seed}) "))
            x, y = stream.test_upto(len(stream) - 1)
            final.labels.append(np.asarray(y))
            final.correct.append({h: np.asarray(learner.predict(x, head=h)) == y for h in learner.heads})
    return exp, final


@dataclass(frozen=True)
class Interval:
    """Mean over seeds with a two-sided Student-t 95 % confidence interval."""

    mean: float
    lo: float
    hi: float
    n: int

    def fmt(self, scale: float = 100.0, digits: int = 1, sign: bool = False) -> str:
        if math.isnan(self.mean):
            return "n/a"
        f = f"{{:{'+' if sign else ''}.{digits}f}}"
        return f"{f.format(self.mean * scale)} [{f.format(self.lo * scale)}, {f.format(self.hi * scale)}]"

    @property
    def excludes_zero(self) -> bool:
        return self.n > 1 and (self.lo > 0 or self.hi < 0)


def t_interval(values: Sequence[float], level: float = 0.95) -> Interval:
    """Mean and t-interval (ddof = 1) of ``values``, NaN ignored; a single value gives a point interval
    (:func:`core.stats.t_interval`)."""
    ci = stats.t_interval(values, level)
    return Interval(ci.estimate, ci.low, ci.high, ci.n)


def paired(a: Sequence[float], b: Sequence[float]) -> Interval:
    """t-interval of the per-seed differences ``a − b``."""
    return t_interval([x - y for x, y in zip(a, b)])


@dataclass
class OwnGamma:
    """One arm at its own γ: per seed the γ picked on each half and the cross-fitted accuracy."""

    arm: str
    picks: list[tuple[float, float]]
    accuracy: list[float]  # per seed, mean of the two held-out halves


def _halves(labels: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded per-class split of the test indices into two halves (sizes differ by ≤ 1 per class)."""
    rng = np.random.default_rng([seed, 2])
    a, b = [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        a.append(idx[: len(idx) // 2])
        b.append(idx[len(idx) // 2 :])
    return np.concatenate(a), np.concatenate(b)


def sweep_heads(heads: Sequence[str], arm: str) -> dict[float, str]:
    """``{γ: head}`` of ``arm``'s γ-sweep heads (``<arm>_g<γ>``)."""
    out = {}
    for h in heads:
        rest = h.removeprefix(arm + "_g")
        if rest != h:
            try:
                out[float(rest)] = h
            except ValueError:
                continue
    return dict(sorted(out.items()))


def own_gamma(final: FinalPredictions, heads: Sequence[str], arm: str, seeds: Sequence[int]) -> OwnGamma | None:
    """Cross-fitted accuracy of ``arm`` at the γ its own held-out half prefers (None without a sweep)."""
    grid = sweep_heads(heads, arm)
    if not grid:
        return None
    picks, accs = [], []
    for labels, correct, seed in zip(final.labels, final.correct, seeds):
        h1, h2 = _halves(labels, seed)
        pair, acc = [], []
        for sel, ev in ((h1, h2), (h2, h1)):
            # highest selection accuracy; ties → the larger γ (the more stable fit)
            g = max(grid, key=lambda gg: (float(correct[grid[gg]][sel].mean()), gg))
            pair.append(g)
            acc.append(float(correct[grid[g]][ev].mean()))
        picks.append((pair[0], pair[1]))
        accs.append(float(np.mean(acc)))
    return OwnGamma(arm, picks, accs)


def energy_table(exp: ExperimentResult, arm: str, kind: str = "cip_energy") -> tuple[list[int], list[list[float]]]:
    """Seed-mean share removed by ``arm``'s class projector, rows = tasks 2..T, columns = old classes.

    Returns (class labels, rows) with NaN where a class was not yet old.
    """
    n_tasks = len(exp.runs[0].sizes) if exp.runs else 0
    labels = sorted(
        {
            int(k.rsplit(".c", 1)[1])
            for r in exp.runs
            for d in r.diagnostics
            for k in d
            if k.startswith(f"{kind}.{arm}.c")
        }
    )
    rows = []
    for t in range(1, n_tasks):
        row = []
        for c in labels:
            v = [r.diagnostics[t].get(f"{kind}.{arm}.c{c}", math.nan) for r in exp.runs if len(r.diagnostics) > t]
            v = [x for x in v if not math.isnan(x)]
            row.append(float(np.mean(v)) if v else math.nan)
        rows.append(row)
    return labels, rows
