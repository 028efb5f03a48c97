"""Scores of the low/mid levels (spec §3.3): per-run accuracies, the MR weighting, chance normalisation.

``norm = (acc − r) / (1 − r)`` and ``SE_norm = SE / (1 − r)`` with r = 0.2 (MedQA MCQ, MR),
0.25 (MedMCQA MCQ, MR), 0.5 (SV, AE); mean over the repeats ± SE (SD ddof=1 / √repeats).
Low = normalised MCQ; mid = the mean of normalised SV, AE and MR.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from core.stats import mean_sd
from methods.medcog.data import Dataset, Task, variants
from methods.medcog.extract import (
    alice_answer,
    extract_ae,
    extract_mcq,
    extract_mr,
    extract_sv,
    options_of,
    parsable,
)

MR_WEIGHTS: dict[str, tuple[float, float]] = {"medqa": (0.2, 0.8), "medmcqa": (0.25, 0.75)}
LEVEL_TASKS = {"low": ("MCQ",), "mid": ("SV", "AE", "MR")}


def chance(dataset: Dataset, task: Task) -> float:
    """The chance accuracy ``r`` of a task."""
    if task in ("SV", "AE"):
        return 0.5
    return {"medqa": 0.2, "medmcqa": 0.25}[dataset]


def normalise(acc: float, r: float) -> float:
    return (acc - r) / (1.0 - r)


def mr_item_score(dataset: Dataset, right_pred: tuple, wrong_pred: tuple, gold: str) -> float:
    """w1·[Alice-right judged correct] + w2·[Alice-wrong judged incorrect and corrected to the gold]."""
    w1, w2 = MR_WEIGHTS[dataset]
    return w1 * float(right_pred[0] == "T") + w2 * float(wrong_pred[0] == "F" and wrong_pred[1] == gold)


def item_scores(dataset: Dataset, task: Task, item: tuple, outputs: list[str], rng: random.Random) -> list[float]:
    """Correctness of one repeat's outputs for an item (one entry per variant; MR: one weighted entry)."""
    vs = variants(task, item)
    if task == "MCQ":
        return [float(extract_mcq(outputs[0], options_of(vs[0].prompt), rng) == vs[0].gold)]
    if task == "SV":
        return [float(extract_sv(o) == v.gold) for o, v in zip(outputs, vs, strict=True)]
    if task == "AE":
        return [float(extract_ae(o, rng) == v.gold) for o, v in zip(outputs, vs, strict=True)]
    right = extract_mr(outputs[0], alice_answer(vs[0].prompt), rng)
    wrong = extract_mr(outputs[1], alice_answer(vs[1].prompt), rng)
    return [mr_item_score(dataset, right, wrong, vs[1].gold[1])]


@dataclass
class TaskScore:
    dataset: str
    task: str
    chance: float
    run_acc: list[float]
    acc: float
    acc_se: float
    norm: float
    norm_se: float
    n_items: int
    unparsed: float = 0.0  # share of outputs the rules could not read (padded randomly, or wrong for SV)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def score_task(
    dataset: Dataset, task: Task, items: list[tuple], outputs: dict[int, list[list[str]]], *, seed: int = 48
) -> TaskScore:
    """Accuracy per repeat over all items (and variants), then mean ± SE, raw and normalised.

    ``outputs[idx][repeat]`` holds the outputs of one repeat for that item, one per variant.
    Random padding uses ``random.Random(seed)`` (the reference scorers seed 48).
    """
    rng = random.Random(seed)
    repeats = len(next(iter(outputs.values())))
    per_run = []
    for r in range(repeats):
        scores = [s for it in items for s in item_scores(dataset, task, it, outputs[it[0]][r], rng)]
        per_run.append(float(np.mean(scores)))
    ms = mean_sd(per_run)  # sample sd; .se = sd / √n
    c = chance(dataset, task)
    texts = [o for it in items for run in outputs[it[0]] for o in run]
    unparsed = sum(not parsable(task, o) for o in texts) / max(1, len(texts))
    return TaskScore(
        dataset=dataset,
        task=task,
        chance=c,
        run_acc=per_run,
        acc=ms.mean,
        acc_se=ms.se,
        norm=normalise(ms.mean, c),
        norm_se=ms.se / (1.0 - c),
        n_items=len(items),
        unparsed=unparsed,
    )


def level_scores(scores: list[TaskScore]) -> dict[str, dict[str, float]]:
    """``{dataset/level: {norm, se}}``: the mean of a level's tasks' normalised scores; SE combined as
    independent (√Σse² / n_tasks)."""
    out: dict[str, dict[str, float]] = {}
    for ds in sorted({s.dataset for s in scores}):
        for level, tasks in LEVEL_TASKS.items():
            got = [s for s in scores if s.dataset == ds and s.task in tasks]
            if len(got) != len(tasks):
                continue
            out[f"{ds}/{level}"] = {
                "norm": float(np.mean([s.norm for s in got])),
                "se": float(np.sqrt(sum(s.norm_se**2 for s in got)) / len(got)),
            }
    return out
