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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.defame.config import DefameConfig, DefameContext
from agents.defame.datasets import Item
from agents.defame.labels import Label, get_benchmark
from agents.defame.nodes.judge import baseline_verdict
from agents.defame.run import FactCheck, check_claim
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


def run_items(
    items: list[Item],
    config: DefameConfig,
    *,
    store: Any = None,
    baseline: bool = True,
    defame: bool = True,
    checkpointer: Any = "default",
    on_claim: Callable[[int, int, ClaimOutcome], None] | None = None,
    workers: int = 1,
) -> list[ClaimOutcome]:
    """Fact-check every item with DEFAME (and the baseline); returns one outcome per item, in item order.

    ``workers`` > 1 checks that many claims at once in threads: with a local llama.cpp model their
    LLM calls share one batched decode step (the engine's ``local_parallel`` slots), which raises
    throughput on a CPU; each claim still runs its own graph and checkpoint thread. Per-claim stage
    seconds are then wall times of overlapping claims.
    """
    bench = get_benchmark(config.benchmark)

    def one(item: Item) -> ClaimOutcome:
        oc = ClaimOutcome(id=item.id, gold=item.gold)
        if defame:
            fc: FactCheck = check_claim(item.claim, config, store=store, checkpointer=checkpointer)
            # Stage wall times live in the (checkpointed) state, so a resumed run still counts its first part.
            oc.defame_seconds = sum(t["seconds"] for t in fc.state.get("timings") or []) or fc.seconds
            oc.defame = bench.dataset_label(fc.label)
            oc.defame_calls = list(fc.state.get("calls") or [])
            oc.rounds = int(fc.state.get("iteration", 0))
            oc.retrieved = [
                s.get("meta", {}) | {"url": s.get("url")}
                for b in fc.state.get("record") or []
                if b.get("kind") == "evidence"
                for e in b["items"]
                for s in e.get("sources", [])
            ]
            oc.searches = [
                [str((src.get("meta") or {}).get("gold_for", "")) for src in e.get("sources", [])]
                for b in fc.state.get("record") or []
                if b.get("kind") == "evidence"
                for e in b["items"]
                if (e.get("action") or {}).get("name") == "web_search"
            ]
            oc.result = fc.to_json()
        if baseline:
            from core.llm import track_usage

            t0 = time.perf_counter()
            with track_usage():
                label, _, calls = baseline_verdict(item.claim, DefameContext(config=config, store=store))
            oc.baseline_seconds = time.perf_counter() - t0
            oc.baseline = bench.dataset_label(label)
            oc.baseline_calls = calls
        return oc

    if workers <= 1 or len(items) <= 1:
        out: list[ClaimOutcome] = []
        for i, item in enumerate(items):
            out.append(one(item))
            if on_claim is not None:
                on_claim(i + 1, len(items), out[-1])
        return out

    from concurrent.futures import ThreadPoolExecutor, as_completed

    results: dict[int, ClaimOutcome] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="defame-claim") as pool:
        futures = {pool.submit(one, item): i for i, item in enumerate(items)}
        try:
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                if on_claim is not None:
                    on_claim(len(results), len(items), results[futures[fut]])
        except BaseException:
            for f in futures:
                f.cancel()  # claims not started yet never start; finished ones are in their checkpoints
            raise
    return [results[i] for i in range(len(items))]


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
