"""All six task metrics of one run (spec §3.3) from per-case parsed answers.

A case row is ``{"case_id", "truth": {...}, "parsed": {"n1": (level, p) | None, "n2": [ids] | None,
"n2_5": {"any": bool, "rois": [ids]}, "n3": s | None, "n4": 0/1 | None}, "caption": str}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.stats import bootstrap_ci
from methods.clinical_got.metrics import accuracy, mae, outcome_metrics, rouge, set_metrics


def task_metrics(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"task1": {...}, "task2": {...}, "task2_5": {...}, "task3": {...}, "task4": {...}, "task5": {...}}``."""
    truth = [r["truth"] for r in rows]
    parsed = [r.get("parsed") or {} for r in rows]
    n1 = [p.get("n1") for p in parsed]
    grade_acc = accuracy([x[0] if x else None for x in n1], [t["grade"] for t in truth])
    err, n_parsed = mae(
        [100 * x[1] if x and x[1] is not None else None for x in n1], [100 * t["lesion_p"] for t in truth]
    )
    task2 = set_metrics([p.get("n2") for p in parsed], [t["injured"] for t in truth])
    n25 = [p.get("n2_5") or {} for p in parsed]
    task25 = set_metrics([x.get("rois") for x in n25], [t["uncommon"] for t in truth])
    task25["yes_no_accuracy"] = accuracy([x.get("any") for x in n25], [t["rare_any"] for t in truth])
    task3 = {"accuracy": accuracy([p.get("n3") for p in parsed], [t["score"] for t in truth])}
    n4 = [p.get("n4") for p in parsed]
    task4 = outcome_metrics(n4, [t["outcome"] for t in truth])
    task4["accuracy_ci"] = list(
        bootstrap_ci([float(a is not None and a == t["outcome"]) for a, t in zip(n4, truth)]).bounds
    )
    task5 = rouge([r.get("caption") or "" for r in rows], [t["caption"] for t in truth])
    return {
        "n_cases": len(rows),
        "task1": {"accuracy": grade_acc, "mae_pct": err, "parsed": n_parsed},
        "task2": task2,
        "task2_5": task25,
        "task3": task3,
        "task4": task4,
        "task5": task5,
    }


def majority_outcome_accuracy(rows: Sequence[dict[str, Any]]) -> float:
    """Accuracy of always answering the majority outcome class of these cases."""
    gold = [r["truth"]["outcome"] for r in rows]
    return max(gold.count(0), gold.count(1)) / len(gold) if gold else float("nan")


def bayes_accuracy(rows: Sequence[dict[str, Any]]) -> float:
    """Accuracy of the Bayes decision (adverse iff P(adverse | true score, regions) > 0.5) on these cases."""
    if not rows:
        return float("nan")
    return sum(int(r["truth"]["p_adverse"] > 0.5) == r["truth"]["outcome"] for r in rows) / len(rows)
