"""The benchmark's metrics (spec §3.3), computed exactly like the reference's eval scripts.

* task 1: grade accuracy (unparsable = wrong) and MAE of the lesion percentage (percentage points,
  over parsed answers);
* task 2 / 2.5: global (micro) precision, recall, F1 and Jaccard over all cases' ROI sets;
  2.5 also yes/no accuracy ("any lesion in an uncommon region");
* task 3: score accuracy;
* task 4: accuracy over all labelled cases (a missing answer is wrong), per-class recall and balanced
  ("inter-class") accuracy = mean of the per-class recalls;
* task 5: ROUGE-1/2/L precision, recall and F (``rouge_score`` with stemming), averaged over cases.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import numpy as np


def accuracy(pred: Sequence[object | None], gold: Sequence[object]) -> float:
    """Share of exact matches; ``None`` predictions count as wrong."""
    if not gold:
        return float("nan")
    return sum(p is not None and p == g for p, g in zip(pred, gold, strict=True)) / len(gold)


def mae(pred: Sequence[float | None], gold: Sequence[float]) -> tuple[float, int]:
    """Mean absolute error over parsed predictions, and how many were parsed."""
    pairs = [(p, g) for p, g in zip(pred, gold, strict=True) if p is not None]
    if not pairs:
        return float("nan"), 0
    return float(np.mean([abs(p - g) for p, g in pairs])), len(pairs)


def set_metrics(pred: Iterable[Iterable[int] | None], gold: Iterable[Iterable[int]]) -> dict[str, float]:
    """Micro-averaged precision / recall / F1 / Jaccard over all cases (``None`` = empty prediction)."""
    tp = fp = fn = 0
    for p, g in zip(pred, gold, strict=True):
        ps, gs = set(p or ()), set(g)
        tp += len(ps & gs)
        fp += len(ps - gs)
        fn += len(gs - ps)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    jaccard = tp / (tp + fp + fn) if tp + fp + fn else 1.0
    return {"precision": precision, "recall": recall, "f1": f1, "jaccard": jaccard, "tp": tp, "fp": fp, "fn": fn}


def outcome_metrics(pred: Sequence[int | None], gold: Sequence[int]) -> dict[str, float]:
    """Accuracy (missing = wrong, in the denominator), recall per class and their mean (balanced accuracy)."""
    out: dict[str, float] = {"accuracy": accuracy(pred, gold), "n": len(gold)}
    out["missing"] = sum(p is None for p in pred)
    recalls = []
    for cls in (0, 1):
        idx = [i for i, g in enumerate(gold) if g == cls]
        r = sum(pred[i] == cls for i in idx) / len(idx) if idx else float("nan")
        out[f"recall_{cls}"] = r
        if idx:
            recalls.append(r)
    out["balanced_accuracy"] = float(np.mean(recalls)) if recalls else float("nan")
    return out


@functools.cache
def _scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def rouge(preds: Sequence[str], golds: Sequence[str]) -> dict[str, float]:
    """Mean ROUGE-1/2/L precision, recall and F over the cases (``rouge1_f``, ``rougeL_p``…)."""
    acc: dict[str, list[float]] = {}
    for p, g in zip(preds, golds, strict=True):
        for name, s in _scorer().score(g, p or "").items():
            for part, v in (("p", s.precision), ("r", s.recall), ("f", s.fmeasure)):
                acc.setdefault(f"{name}_{part}", []).append(v)
    return {k: float(np.mean(v)) for k, v in acc.items()}
