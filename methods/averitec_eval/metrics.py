"""Label metrics of a fact-checker (spec §4, DEFAME's ``compute_metrics``).

* Accuracy = correct / (N − refused): refusals leave the denominator.
* Per-class precision, recall, F1 and macro-F1 from scikit-learn over the union
  of labels appearing in gold or predictions. The refusal label itself is not a
  class: a refused claim counts as a miss of its gold class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

REFUSED = "error: refused to answer"


def label_metrics(gold: Sequence[str], pred: Sequence[str], *, refused: str = REFUSED) -> dict[str, Any]:
    """Accuracy (refusals excluded), macro-F1, per-class scores, refusal count, confusion matrix."""
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    if len(gold) != len(pred):
        raise ValueError("gold and predictions differ in length")
    n = len(gold)
    n_refused = sum(1 for p in pred if p == refused)
    answered = [(g, p) for g, p in zip(gold, pred) if p != refused]
    accuracy = sum(g == p for g, p in answered) / len(answered) if answered else 0.0
    labels = sorted({*gold, *pred} - {refused})
    if not labels:
        return {
            "n": n,
            "refused": n_refused,
            "accuracy": accuracy,
            "accuracy_all": 0.0,
            "macro_f1": 0.0,
            "per_class": {},
            "labels": [],
            "confusion": [],
        }
    p, r, f, s = precision_recall_fscore_support(list(gold), list(pred), labels=labels, zero_division=0)
    cm_labels = labels + ([refused] if n_refused else [])
    return {
        "n": n,
        "refused": n_refused,
        "accuracy": accuracy,
        "accuracy_all": sum(g == q for g, q in zip(gold, pred)) / n if n else 0.0,
        "macro_f1": float(sum(f) / len(f)),
        "per_class": {
            lbl: {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]), "support": int(s[i])}
            for i, lbl in enumerate(labels)
        },
        "labels": cm_labels,
        "confusion": confusion_matrix(list(gold), list(pred), labels=cm_labels).tolist(),
    }
