"""The low/mid-level task files of MultiCogEval (``shared/data/multicogeval``; README there).

Item formats (JSON arrays sharing ``idx`` across the four tasks of a dataset):
MCQ ``[idx, prompt, gold]``; SV ``[idx, true_stmt, false_stmt, "T", "F"]``;
AE ``[idx, gold_present, gold_replaced, y1, y2]`` (1/0 in MedQA, "T"/"F" in MedMCQA);
MR ``[idx, alice_right, alice_wrong, ["T", gold], ["F", gold]]``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.config import get_settings

Dataset = Literal["medqa", "medmcqa"]
Task = Literal["MCQ", "SV", "AE", "MR"]
TASKS: tuple[Task, ...] = ("MCQ", "SV", "AE", "MR")
DATASETS: tuple[Dataset, ...] = ("medqa", "medmcqa")
_FILES = {"medqa": ("medqa", "{task}_test.json"), "medmcqa": ("medmcqa_subset", "{task}_test_first300.json")}


@dataclass(frozen=True)
class Variant:
    """One prompt of an item: its text and gold label (``"A"``; ``"T"``/``"F"``; ``1``/``0``; ``["F", "E"]``)."""

    prompt: str
    gold: Any


def data_root(data_dir: str | Path | None = None) -> Path:
    return Path(data_dir or get_settings().data_dir) / "multicogeval"


@functools.lru_cache(maxsize=16)
def _load(root: str, dataset: str, task: str) -> tuple[tuple, ...]:
    folder, pattern = _FILES[dataset]
    path = Path(root) / folder / pattern.format(task=task)
    if not path.exists():
        raise FileNotFoundError(f"MultiCogEval file missing: {path} (see shared/data/multicogeval/README.md)")
    return tuple(tuple(x) for x in json.loads(path.read_text()))


def load_task(dataset: Dataset, task: Task, data_dir: str | Path | None = None) -> list[tuple]:
    """All items of one task file, in file order."""
    if dataset not in _FILES:
        raise ValueError(f"unknown dataset {dataset!r}; one of {DATASETS}")
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; one of {TASKS}")
    return list(_load(str(data_root(data_dir)), dataset, task))


def variants(task: Task, item: tuple) -> list[Variant]:
    """The prompts of an item: one for MCQ, two (the T and the F variant) for SV, AE and MR."""
    if task == "MCQ":
        return [Variant(item[1], item[2])]
    return [Variant(item[1], _label(task, item[3])), Variant(item[2], _label(task, item[4]))]


def _label(task: Task, y: Any) -> Any:
    if task == "AE":  # MedQA stores 1/0, MedMCQA "T"/"F": one convention, 1 = the gold is among the options
        return 1 if y in (1, "T", True) else 0
    if task == "MR":
        return list(y)
    return y


def select_items(dataset: Dataset, n_items: int, data_dir: str | Path | None = None) -> list[int]:
    """The first ``n_items`` idx present in all four task files (knowledge-coverage alignment)."""
    sets = [[it[0] for it in load_task(dataset, t, data_dir)] for t in TASKS]
    common = set(sets[0]).intersection(*sets[1:])
    return [i for i in sets[0] if i in common][:n_items]
