"""Scores of the low/mid levels (spec §3.3): per-run accuracies, the MR weighting, chance normalisation.

``norm = (acc − r) / (1 − r)`` and ``SE_norm = SE / (1 − r)`` with r = 0.2 (MedQA MCQ, MR),
0.25 (MedMCQA MCQ, MR), 0.5 (SV, AE); mean over the repeats ± SE (SD ddof=1 / √repeats).
Low = normalised MCQ; mid = the mean of normalised SV, AE and MR.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

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
    return item_scores_parsed(dataset, task, item, outputs, rng)[0]


class _Recorder:
    """Wraps the padding ``rng``: the same draws, and ``used`` tells whether an extraction fell back to a guess."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, False

    def choice(self, seq):  # the only draw the extractors make
        self.used = True
        return self.rng.choice(seq)


def item_scores_parsed(
    dataset: Dataset, task: Task, item: tuple, outputs: list[str], rng: random.Random
) -> tuple[list[float], list[bool], list[bool]]:
    """:func:`item_scores`, then per entry whether the rules read the output(s) behind it rather than padding them
    with a random guess (SV: rather than counting them wrong; MR: both of its outputs), and the same per output.
    The ``rng`` draws are exactly :func:`item_scores`'s."""
    vs = variants(task, item)

    def read(fn, *args) -> tuple[object, bool]:
        rec = _Recorder(rng)
        return fn(*args, rec), not rec.used

    if task == "MCQ":
        got, ok = read(extract_mcq, outputs[0], options_of(vs[0].prompt))
        ok = ok and bool(outputs[0])  # an empty output is scored wrong without a guess: not read either
        return [float(got == vs[0].gold)], [ok], [ok]
    if task == "SV":
        got = [extract_sv(o) for o in outputs]
        oks = [g is not None for g in got]
        return [float(g == v.gold) for g, v in zip(got, vs, strict=True)], oks, oks
    if task == "AE":
        pairs = [read(extract_ae, o) for o in outputs]
        oks = [ok for _, ok in pairs]
        return [float(g == v.gold) for (g, _), v in zip(pairs, vs, strict=True)], oks, oks
    right, ok_r = read(extract_mr, outputs[0], alice_answer(vs[0].prompt))
    wrong, ok_w = read(extract_mr, outputs[1], alice_answer(vs[1].prompt))
    return [mr_item_score(dataset, right, wrong, vs[1].gold[1])], [ok_r and ok_w], [ok_r, ok_w]


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
    # per item (in ``items`` order): idx, the normalised score over all its outputs (random padding included, as
    # the reference scores), the normalised score over the outputs the rules read (None: none read) and the
    # share of its scored entries that were read
    per_item: list[dict] = field(default_factory=list)

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
    c = chance(dataset, task)
    per_run = []
    got: dict[int, list[tuple[float, bool]]] = {it[0]: [] for it in items}
    n_out = n_unread = 0
    for r in range(repeats):
        scores = []
        for it in items:
            vals, read, read_out = item_scores_parsed(dataset, task, it, outputs[it[0]][r], rng)
            scores += vals
            got[it[0]] += list(zip(vals, read, strict=True))
            n_out += len(read_out)
            n_unread += sum(not ok for ok in read_out)
        per_run.append(float(np.mean(scores)))
    ms = mean_sd(per_run)  # sample sd; .se = sd / √n
    per_item = []
    for it in items:
        entries = got[it[0]]
        read = [v for v, ok in entries if ok]
        per_item.append(
            {
                "idx": it[0],
                "norm": normalise(float(np.mean([v for v, _ in entries])), c),
                "norm_parsed": normalise(float(np.mean(read)), c) if read else None,
                "parsed": len(read) / len(entries),
            }
        )
    unparsed = n_unread / max(1, n_out)
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
        per_item=per_item,
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
