"""Evaluate DEFAME and the no-evidence baseline on a benchmark (spec §4).

Both systems use the same model and the same claims. Per claim we keep the
predicted label (mapped to the dataset's strings), the LLM calls (stage,
tokens, whether the answer parsed, whether decoding was constrained) and the
wall time; :func:`summarise` turns that into accuracy / macro-F1 (refusals out
of the accuracy denominator), parse rates, calls per claim and claims per
minute. :func:`averitec_predictions` writes DEFAME's output in the official
AVeriTeC format, with each ``web_search`` query as a question and its evidence
summary as the answer (an extension: the paper's DEFAME emits no Q&A).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from agents.defame.config import DefameConfig
from agents.defame.labels import Label, get_benchmark
from core.stats import bootstrap_indices, percentile_interval

log = logging.getLogger(__name__)


@dataclass
class ClaimOutcome:
    id: str
    gold: str
    defame: str | None = None
    baseline: str | None = None
    defame_calls: list[dict[str, Any]] = field(default_factory=list)
    baseline_calls: list[dict[str, Any]] = field(default_factory=list)
    defame_seconds: float = 0.0
    baseline_seconds: float = 0.0
    rounds: int = 0
    retrieved: list[dict[str, Any]] = field(default_factory=list)
    searches: list[list[str]] = field(default_factory=list)  # per search action: the gold_for of each source
    result: dict[str, Any] | None = None


def _rate(calls: list[dict[str, Any]], stage: str, *, first_only: bool = False) -> tuple[int, int]:
    rows = [c for c in calls if c["stage"] == stage and (not first_only or c.get("attempt", 1) == 1)]
    return sum(1 for c in rows if c.get("parsed")), len(rows)


def summarise(outcomes: list[ClaimOutcome], config: DefameConfig) -> dict[str, Any]:
    """Metrics, parse rates, cost and throughput for both systems."""
    from methods.averitec_eval.metrics import label_metrics

    refused = get_benchmark(config.benchmark).dataset_label(Label.REFUSED)
    res: dict[str, Any] = {"n": len(outcomes)}
    for system in ("defame", "baseline"):
        done = [o for o in outcomes if getattr(o, system) is not None]
        if not done:
            continue
        calls = [c for o in done for c in getattr(o, f"{system}_calls")]
        secs = sum(getattr(o, f"{system}_seconds") for o in done)
        m = label_metrics([o.gold for o in done], [getattr(o, system) for o in done], refused=refused)
        parse = {}
        for stage in ("plan", "judge", "baseline"):
            ok, tot = _rate(calls, stage)
            ok1, tot1 = _rate(calls, stage, first_only=True)
            if tot:
                parse[stage] = {
                    "parsed": ok,
                    "calls": tot,
                    "rate": ok / tot,
                    "first_try_rate": ok1 / tot1 if tot1 else 0.0,
                }
        res[system] = {
            "metrics": m,
            "parse": parse,
            "llm_calls": len(calls),
            "calls_per_claim": len(calls) / len(done),
            "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
            "completion_tokens": sum(c["completion_tokens"] for c in calls),
            "constrained_calls": sum(1 for c in calls if c.get("constrained")),
            "seconds": secs,
            "claims_per_minute": 60.0 * len(done) / secs if secs > 0 else 0.0,
        }
    d = [o for o in outcomes if o.defame is not None]
    if d:
        res["defame"]["mean_rounds"] = sum(o.rounds for o in d) / len(d)
        gold_hits = [1 for o in d for r in o.retrieved if r.get("gold_for") == o.id]
        res["defame"]["retrieved_sources"] = sum(len(o.retrieved) for o in d)
        res["defame"]["gold_source_share"] = (
            len(gold_hits) / res["defame"]["retrieved_sources"] if res["defame"]["retrieved_sources"] else 0.0
        )
        searches = [(o.id, s) for o in d for s in o.searches]
        res["defame"]["searches"] = len(searches)
        res["defame"]["on_claim_search_rate"] = (
            sum(1 for cid, s in searches if cid in s) / len(searches) if searches else 0.0
        )
        # The summariser's verdict per source: kept (relevant) for the claim's own gold answers vs the rest.
        own, other = [], []
        for o in d:
            gold_of = {r.get("url"): str(r.get("gold_for", "")) for r in o.retrieved}
            for c in o.defame_calls:
                if c.get("stage") == "summarize" and "kept" in c and c.get("source") in gold_of:
                    (own if gold_of[c["source"]] == o.id else other).append(bool(c["kept"]))
        res["defame"]["summaries_own"] = len(own)
        res["defame"]["summaries_other"] = len(other)
        res["defame"]["kept_own_rate"] = sum(own) / len(own) if own else 0.0
        res["defame"]["kept_other_rate"] = sum(other) / len(other) if other else 0.0
    if outcomes:
        gold = [o.gold for o in outcomes]
        majority = max(sorted(set(gold)), key=gold.count)
        res["majority"] = {"label": majority, "metrics": label_metrics(gold, [majority] * len(gold), refused=refused)}
        res["majority"]["ci"] = bootstrap_ci(gold, [majority] * len(gold), refused=refused)
        for system in ("defame", "baseline"):
            if system in res:
                done = [o for o in outcomes if getattr(o, system) is not None]
                res[system]["ci"] = bootstrap_ci(
                    [o.gold for o in done], [getattr(o, system) for o in done], refused=refused
                )
        if "defame" in res:
            # DEFAME against each reference on the same claims: the comparison the target asks about
            res["paired"] = {}
            done = [o for o in outcomes if o.defame is not None]
            res["paired"]["majority"] = paired_bootstrap(
                [o.gold for o in done], [o.defame for o in done], [majority] * len(done), refused=refused
            )
            if "baseline" in res:
                both = [o for o in done if o.baseline is not None]
                res["paired"]["baseline"] = paired_bootstrap(
                    [o.gold for o in both], [o.defame for o in both], [o.baseline for o in both], refused=refused
                )
    return res


def _acc_f1(gold: list[str], pred: list[str], refused: str) -> tuple[float, float]:
    """Accuracy (refusals excluded) and macro-F1 over the labels present — as ``label_metrics`` computes them."""
    answered = [(g, p) for g, p in zip(gold, pred) if p != refused]
    acc = sum(g == p for g, p in answered) / len(answered) if answered else 0.0
    labels = sorted({*gold, *pred} - {refused})
    f1s = []
    for lbl in labels:
        tp = sum(1 for g, p in zip(gold, pred) if g == lbl and p == lbl)
        fp = sum(1 for g, p in zip(gold, pred) if g != lbl and p == lbl)
        fn = sum(1 for g, p in zip(gold, pred) if g == lbl and p != lbl)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return acc, (sum(f1s) / len(f1s) if f1s else 0.0)


def bootstrap_ci(
    gold: list[str], pred: list[str], *, refused: str, n_boot: int = 1000, seed: int = 0
) -> dict[str, list[float]]:
    """Percentile bootstrap 95% intervals of accuracy and macro-F1, resampling claims with replacement
    (:func:`core.stats.bootstrap_indices`, ``random.Random(seed)`` draws; rank percentiles)."""
    if not gold:
        return {"accuracy": [0.0, 0.0], "macro_f1": [0.0, 0.0]}
    accs, f1s = [], []
    for idx in bootstrap_indices(len(gold), n_boot=n_boot, seed=seed, scheme="python"):
        a, f = _acc_f1([gold[i] for i in idx], [pred[i] for i in idx], refused)
        accs.append(a)
        f1s.append(f)
    return {
        "accuracy": list(percentile_interval(accs, method="rank")),
        "macro_f1": list(percentile_interval(f1s, method="rank")),
    }


def paired_bootstrap(
    gold: list[str], pred_a: list[str], pred_b: list[str], *, refused: str, n_boot: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """Differences a − b in accuracy and macro-F1 on the same claims, with percentile bootstrap 95% intervals that
    resample claims once for both systems (paired); ``n`` claims. A difference is measured when its interval
    excludes 0."""
    out: dict[str, Any] = {"n": len(gold)}
    if not gold:
        return {**out, "accuracy": [0.0, 0.0, 0.0], "macro_f1": [0.0, 0.0, 0.0]}
    (acc_a, f1_a), (acc_b, f1_b) = _acc_f1(gold, pred_a, refused), _acc_f1(gold, pred_b, refused)
    d_acc, d_f1 = [], []
    for idx in bootstrap_indices(len(gold), n_boot=n_boot, seed=seed, scheme="python"):
        g = [gold[i] for i in idx]
        a_acc, a_f1 = _acc_f1(g, [pred_a[i] for i in idx], refused)
        b_acc, b_f1 = _acc_f1(g, [pred_b[i] for i in idx], refused)
        d_acc.append(a_acc - b_acc)
        d_f1.append(a_f1 - b_f1)
    out["accuracy"] = [acc_a - acc_b, *percentile_interval(d_acc, method="rank")]
    out["macro_f1"] = [f1_a - f1_b, *percentile_interval(d_f1, method="rank")]
    return out


def averitec_predictions(outcomes: list[ClaimOutcome]) -> list[dict[str, Any]]:
    """DEFAME's runs in the official AVeriTeC prediction format."""
    preds = []
    for o in outcomes:
        r = o.result or {}
        questions = []
        for ev in r.get("evidence", []):
            if not ev["action"].startswith("web_search("):
                continue
            query = ev["action"][len('web_search("') : -2]
            answers = [{"answer": ev["summary"], "answer_type": "Abstractive"}] if ev.get("summary") else []
            questions.append({"question": query, "answers": answers})
        preds.append(
            {
                "claim_id": int(o.id) if o.id.isdigit() else o.id,
                "claim": (r.get("claim") or {}).get("text"),
                "label": o.defame,
                "questions": questions,
                "justification": r.get("justification", ""),
            }
        )
    return preds
