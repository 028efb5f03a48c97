"""Loaders for the three LMS3 datasets (spec §5) as :class:`Problem` records.

Only the problem text is ever embedded; the answer text is what a demonstration
shows after ``A:`` and what the gold-NLL metric scores: GSM8K ``answer`` (full
rationale), MAWPS ``answer`` as the data writes it (``504.0``), MATH ``solution``.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.config import get_settings

log = logging.getLogger(__name__)

MATH_SUBJECTS = (
    "algebra",
    "counting_and_probability",
    "geometry",
    "intermediate_algebra",
    "number_theory",
    "prealgebra",
    "precalculus",
)
_FILES = {
    "gsm8k": ("gsm8k", "train.jsonl", "test.jsonl"),
    "mawps": ("mawps_lms3", "train.jsonl", "dev.jsonl"),
    "math": ("math_lms3", "train.jsonl", "test.jsonl"),
}


@dataclass(frozen=True)
class Problem:
    """One math problem: what is embedded (``text``) and what follows ``A:`` (``answer``)."""

    dataset: str
    index: int  # line number in its split
    text: str
    answer: str
    subject: str = ""  # MATH only
    file_id: str = ""  # MATH file name (record ids)
    gold: str = ""  # the final answer for accuracy

    @property
    def uid(self) -> str:
        return f"{self.dataset}-{self.index}"


def _gsm8k(row: dict, i: int) -> Problem:
    m = re.search(r"####\s*(.+)\s*$", row["answer"])
    return Problem("gsm8k", i, row["question"], row["answer"], gold=(m.group(1).replace(",", "").strip() if m else ""))


def _mawps(row: dict, i: int) -> Problem:
    # str(float) writes 504.0 and 4.333333333333333 exactly as the reference's str() does.
    return Problem("mawps", i, row["question"], str(float(row["answer"])), gold=str(float(row["answer"])))


def _math(row: dict, i: int) -> Problem:
    return Problem("math", i, row["problem"], row["solution"], subject=row["subject_dir"], file_id=str(row["id"]))


_PARSERS = {"gsm8k": _gsm8k, "mawps": _mawps, "math": _math}


def dataset_dir(root: Path | None = None) -> Path:
    return Path(root) if root is not None else Path(get_settings().data_dir)


@functools.lru_cache(maxsize=12)
def load_split(dataset: str, split: str, root: str | None = None) -> tuple[Problem, ...]:
    """All problems of ``split`` (``"pool"`` = train, ``"queries"`` = test/dev)."""
    if dataset not in _FILES:
        raise ValueError(f"unknown dataset {dataset!r}; one of {sorted(_FILES)}")
    folder, train, test = _FILES[dataset]
    name = {"pool": train, "queries": test}.get(split)
    if name is None:
        raise ValueError("split must be 'pool' or 'queries'")
    path = dataset_dir(Path(root) if root else None) / folder / name
    if not path.exists():
        raise FileNotFoundError(f"{dataset} data not found at {path}")
    parse = _PARSERS[dataset]
    with path.open(encoding="utf-8") as fh:
        return tuple(parse(json.loads(line), i) for i, line in enumerate(fh) if line.strip())


def pool_subset(problems: tuple[Problem, ...], size: int | None, seed: int = 0) -> list[Problem]:
    """A seeded random subset of ``size`` items (in pool order), per subject for MATH.

    ``size=None`` keeps the whole pool. MATH pools are ``size`` items per subject.
    """
    if size is None:
        return list(problems)
    rng = np.random.default_rng(seed)
    if problems and problems[0].dataset == "math":
        out: list[Problem] = []
        for subj in MATH_SUBJECTS:
            group = [p for p in problems if p.subject == subj]
            keep = sorted(rng.choice(len(group), size=min(size, len(group)), replace=False).tolist())
            out += [group[i] for i in keep]
        return out
    keep = sorted(rng.choice(len(problems), size=min(size, len(problems)), replace=False).tolist())
    return [problems[i] for i in keep]


def query_subset(problems: tuple[Problem, ...], size: int) -> list[Problem]:
    """The first ``size`` queries (per subject for MATH), as in spec §6.1."""
    if problems and problems[0].dataset == "math":
        out: list[Problem] = []
        for subj in MATH_SUBJECTS:
            out += [p for p in problems if p.subject == subj][:size]
        return out
    return list(problems[:size])


def pool_key(dataset: str, size: int | None, seed: int) -> str:
    """A short name for a pool definition, used in collection names (``gsm8k-n2000s0``)."""
    return f"{dataset}-full" if size is None else f"{dataset}-n{size}s{seed}"


@dataclass(frozen=True)
class PoolSpec:
    """A pool definition: a dataset's train split, or a seeded subset of it (per subject for MATH)."""

    dataset: str
    size: int | None = None
    seed: int = 0

    @property
    def name(self) -> str:
        return pool_key(self.dataset, self.size, self.seed)

    def problems(self) -> list[Problem]:
        return pool_subset(load_split(self.dataset, "pool"), self.size, self.seed)
