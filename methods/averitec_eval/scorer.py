"""The AVeriTeC scorer (spec §4): Hungarian-matched METEOR over evidence, veracity, AVeriTeC score.

Inputs are the official formats. A prediction is ``{label | pred_label, questions:
[{question, answers: [{answer, answer_type, boolean_explanation}]}] | evidence:
[{question, answer, url}], string_evidence: [str], justification}``; a reference
is a ``dev.json`` claim.

1. Evidence strings: ``question + " " + answer`` per answer (Boolean answers get
   ``". " + boolean_explanation``; a gold question with no answer gives
   ``question + " No answer could be found."``); ``string_evidence`` items are
   appended as they are. Predictions keep their first 10 strings and skip null answers.
2. S[i][j] = METEOR(pred_i vs gold_j).
3. Utility = Σ of the Hungarian assignment (``linear_sum_assignment(S, maximize=True)``)
   / number of gold strings.
4. Question-only: the same over questions.
5. AVeriTeC score at λ: mean over claims of [label correct and Q+A utility > λ].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

VERDICTS = ("Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking")
LEVELS = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
MAX_QUESTIONS = 10
Metric = Callable[[str, str], float]


def _metric() -> Metric:
    from methods.averitec_eval.meteor import pairwise_meteor

    return pairwise_meteor


def pred_label(pred: dict[str, Any]) -> str:
    return str(pred.get("label", pred.get("pred_label", "")))


def _qa_list(example: dict[str, Any]) -> list[dict[str, Any]]:
    """Questions with answer lists, from ``questions`` or the shared-task ``evidence`` format."""
    if "questions" in example and example["questions"] is not None:
        out = []
        for q in example["questions"]:
            answers = q.get("answers", [])
            out.append(
                {"question": q.get("question", ""), "answers": answers if isinstance(answers, list) else [answers]}
            )
        return out
    if example.get("evidence"):
        return [
            {"question": e.get("question", ""), "answers": [{"answer": e.get("answer")}]} for e in example["evidence"]
        ]
    return []


def evidence_strings(example: dict[str, Any], *, is_gold: bool) -> list[str]:
    """Step 1: comparison strings of a reference (``is_gold``) or a prediction (first 10)."""
    out: list[str] = []
    for q in _qa_list(example):
        answers = q["answers"]
        for a in answers:
            text = a.get("answer") if isinstance(a, dict) else a
            if text is None:
                continue
            s = f"{q['question']} {text}"
            if isinstance(a, dict) and a.get("answer_type") == "Boolean":
                s += ". " + str(a.get("boolean_explanation", ""))
            out.append(s)
        if not answers:
            out.append(f"{q['question']} No answer could be found.")
    out.extend(str(s) for s in example.get("string_evidence") or [])
    return out if is_gold else out[:MAX_QUESTIONS]


def questions_of(example: dict[str, Any], *, is_gold: bool) -> list[str]:
    qs = [q["question"] for q in _qa_list(example)]
    if not is_gold and not qs:  # no questions: the string evidence stands in (official behaviour)
        return evidence_strings(example, is_gold=False)
    return qs if is_gold else qs[:MAX_QUESTIONS]


def hungarian_utility(pred: Sequence[str], gold: Sequence[str], metric: Metric | None = None) -> float:
    """Steps 2-3: sum of the optimal one-to-one METEOR assignment, divided by the number of gold strings."""
    from scipy.optimize import linear_sum_assignment

    if not gold:
        return 0.0
    if not pred:
        return 0.0
    metric = metric or _metric()
    scores = np.array([[metric(p, g) for g in gold] for p in pred], dtype=float)
    rows, cols = linear_sum_assignment(scores, maximize=True)
    return float(scores[rows, cols].sum() / len(gold))


def f1_per_class(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    from sklearn.metrics import f1_score

    per = f1_score(list(gold), list(pred), labels=list(labels), average=None, zero_division=0)
    out = {lbl: float(v) for lbl, v in zip(labels, per)}
    out["macro"] = float(np.mean(per)) if len(per) else 0.0
    return out


@dataclass
class AveritecScores:
    """Everything the official script prints."""

    n: int
    question_only: float
    question_answer: float
    veracity: dict[str, float]
    justification: float
    averitec: dict[float, float]
    justification_at: dict[float, float]
    by_type: dict[str, float] = field(default_factory=dict)
    per_claim: list[dict[str, Any]] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"claims: {self.n}",
            f"Question-only score (HU-meteor): {self.question_only:.4f}",
            f"Question-answer score (HU-meteor): {self.question_answer:.4f}",
            "Veracity F1 scores:",
        ]
        out += [f"  * {k}: {v:.4f}" for k, v in self.veracity.items()]
        out.append(f"Justification score (meteor): {self.justification:.4f}")
        out.append("AVeriTeC scores:")
        for lvl in LEVELS:
            out.append(f"  * Veracity scores (meteor @ {lvl}): {self.averitec[lvl]:.4f}")
            out.append(f"  * Justification scores (meteor @ {lvl}): {self.justification_at[lvl]:.4f}")
        if self.by_type:
            out.append("AVeriTeC score @ 0.25 by claim type:")
            out += [f"  * {t}: {v:.4f}" for t, v in sorted(self.by_type.items())]
        return out


def score(
    predictions: list[dict[str, Any]], references: list[dict[str, Any]], metric: Metric | None = None
) -> AveritecScores:
    """Score predictions against references (same order, same length)."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    if not references:
        raise ValueError("nothing to score")
    metric = metric or _metric()
    q_utils, qa_utils, j_scores, rows = [], [], [], []
    for pred, gold in zip(predictions, references):
        q = hungarian_utility(questions_of(pred, is_gold=False), questions_of(gold, is_gold=True), metric)
        qa = hungarian_utility(evidence_strings(pred, is_gold=False), evidence_strings(gold, is_gold=True), metric)
        just = pred.get("justification")
        if just is None:
            just = " ".join(evidence_strings(pred, is_gold=False))
        j = metric(str(just), str(gold.get("justification", ""))) if gold.get("justification") else 0.0
        correct = pred_label(pred) == gold.get("label")
        q_utils.append(q)
        qa_utils.append(qa)
        j_scores.append(j)
        rows.append(
            {
                "q_only": q,
                "qa": qa,
                "justification": j,
                "correct": correct,
                "types": list(gold.get("claim_types") or []),
            }
        )
    gold_labels = [g.get("label") for g in references]
    labels = [pred_label(p) for p in predictions]
    veracity = f1_per_class(gold_labels, labels, VERDICTS)
    veracity["acc"] = float(np.mean([a == b for a, b in zip(labels, gold_labels)]))
    averitec = {lvl: float(np.mean([r["correct"] and r["qa"] > lvl for r in rows])) for lvl in LEVELS}
    j_at = {lvl: float(np.mean([r["justification"] if r["qa"] > lvl else 0.0 for r in rows])) for lvl in LEVELS}
    by_type: dict[str, list[float]] = {}
    for r in rows:
        for t in r["types"]:
            by_type.setdefault(t, []).append(float(r["correct"] and r["qa"] > 0.25))
    return AveritecScores(
        n=len(rows),
        question_only=float(np.mean(q_utils)),
        question_answer=float(np.mean(qa_utils)),
        veracity=veracity,
        justification=float(np.mean(j_scores)),
        averitec=averitec,
        justification_at=j_at,
        by_type={t: float(np.mean(v)) for t, v in by_type.items()},
        per_claim=rows,
    )
