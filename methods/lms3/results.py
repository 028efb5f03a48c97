"""What the LMS3 experiment measures per dataset, the arms it compares, and its JSON form.

:class:`DatasetResult` is filled by :mod:`methods.lms3.experiment` and read by
:mod:`methods.lms3.report`; :func:`to_raw` is its JSON form (``raw.json`` of a results doc) and
:func:`from_raw` reads one back, so headlines can be recomputed from a stored run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from methods.lms3.selectors import ARMS

MAIN_KEY = ("reference", "final_norm_output")
# Extra NLL arms: (selector arm, orientation of P, normalisation of Sim). The ``*_unit`` and
# ``*_centred`` arms are NOT the reference method: they remove the pool-norm effect (scores.py).
EXTRA_ARMS: dict[str, tuple[str, str, str]] = {
    "lms3_attention": ("lms3", "attention", "none"),
    "score_unit": ("score_no_reject", "reference", "unit"),
    "lms3_unit": ("lms3", "reference", "unit"),
    "lms3_centred": ("lms3", "reference", "centred"),
}
NLL_ARMS = (*ARMS, *EXTRA_ARMS)
ACC_ARMS = ("zero_shot", "random", "cosine", "score_no_reject", "lms3")
THEORY_SCORES = ("sim", "stab", "score", "cosine", "score_unit", "score_centred")


@dataclass
class DatasetResult:
    """Everything measured on one dataset."""

    dataset: str
    pool_name: str
    pool_size: int
    lambdas: dict[str, int]  # per subject for MATH, else {"": λ}
    n_queries: int
    min_lambda: int = 0
    selection_stats: list[dict[str, Any]] = field(default_factory=list)
    norm_stats: list[dict[str, Any]] = field(default_factory=list)  # reference vs pool-norm-free Sim
    nll: dict[str, list[float]] = field(default_factory=dict)
    with_demo: dict[str, list[bool]] = field(default_factory=dict)
    accuracy: dict[str, tuple[int, int]] = field(default_factory=dict)
    correct: dict[str, list[bool]] = field(default_factory=dict)  # per accuracy query, per arm
    theory: dict[str, list[float]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)
    work: dict[str, int] = field(default_factory=dict)  # computed vs reused from the cache


def to_raw(r: DatasetResult) -> dict[str, Any]:
    """The JSON form of one dataset's measurements (every per-query value)."""
    return {
        "dataset": r.dataset,
        "pool": r.pool_name,
        "pool_size": r.pool_size,
        "lambdas": r.lambdas,
        "n_queries": r.n_queries,
        "min_lambda": r.min_lambda,
        "nll": r.nll,
        "with_demo": r.with_demo,
        "accuracy": r.accuracy,
        "correct": r.correct,
        "theory": r.theory,
        "selection_stats": r.selection_stats,
        "norm_stats": r.norm_stats,
        "seconds": r.seconds,
        "work": r.work,
        "examples": r.examples,
    }


def from_raw(d: dict[str, Any]) -> DatasetResult:
    """A :class:`DatasetResult` from :func:`to_raw`'s form.

    Files written before ``n_queries``, ``min_lambda``, ``correct`` and ``examples`` were stored
    read as: the selection queries of the first selection-statistics row, min_lambda 0, no
    per-query accuracy, no example prompt.
    """
    stats = d.get("selection_stats") or [{}]
    return DatasetResult(
        dataset=d["dataset"],
        pool_name=d["pool"],
        pool_size=int(d["pool_size"]),
        lambdas=dict(d["lambdas"]),
        n_queries=int(d.get("n_queries", stats[0].get("queries", 0))),
        min_lambda=int(d.get("min_lambda", 0)),
        selection_stats=list(d.get("selection_stats", [])),
        norm_stats=list(d.get("norm_stats", [])),
        nll={k: list(v) for k, v in d.get("nll", {}).items()},
        with_demo={k: list(v) for k, v in d.get("with_demo", {}).items()},
        accuracy={k: (int(v[0]), int(v[1])) for k, v in d.get("accuracy", {}).items()},
        correct={k: list(v) for k, v in d.get("correct", {}).items()},
        theory={k: list(v) for k, v in d.get("theory", {}).items()},
        seconds=dict(d.get("seconds", {})),
        examples=list(d.get("examples", [])),
        work=dict(d.get("work", {})),
    )
