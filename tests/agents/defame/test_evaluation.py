"""Evaluation: the reproducer's pipeline with a scripted LLM, the batch job's loaders, and the real local model
end to end on 2 AVeriTeC claims over an oracle corpus (tiny budget, 1 round)."""

from __future__ import annotations

import json

import pytest

from agents.defame.config import DefameConfig, StageBudget
from agents.defame.corpus import averitec_documents
from agents.defame.datasets import load_averitec, load_mocheg, mocheg_documents
from agents.defame.evaluate import averitec_predictions, summarise
from agents.defame.experiment import run_items
from agents.defame.labels import Label


def _small_oracle(store, data_dir, n=8, collection="defame-test-oracle"):
    claims = json.loads((data_dir / "averitec" / "dev.json").read_text())
    docs = averitec_documents(claims, ids=range(n))
    store.add(
        collection,
        ids=[d["id"] for d in docs],
        documents=[d["text"] for d in docs],
        metadatas=[{"url": d["url"], "title": d["title"], "gold_for": d["gold_for"]} for d in docs],
    )
    return claims, collection


def test_oracle_corpus_documents(data_dir):
    claims = json.loads((data_dir / "averitec" / "dev.json").read_text())
    docs = averitec_documents(claims)
    assert len(docs) > 900 and all(d["text"] for d in docs)
    assert {d["gold_for"] for d in docs} >= {"0", "1", "399"}
    boolean = next(d for d in docs if ". " in d["text"] and d["text"].split(". ")[0] in ("Yes", "No"))
    assert boolean["text"].startswith(("Yes. ", "No. "))


def test_loaders(data_dir):
    av = load_averitec(data_dir / "averitec" / "dev.json", limit=3)
    assert [i.id for i in av] == ["0", "1", "2"] and av[0].claim["date"] == "2020-10-31"
    mo = load_mocheg(data_dir / "mocheg" / "Corpus2_for_controllable_generation_dry_run.csv")
    assert len(mo) == 48 and {i.gold for i in mo} == {"NEI", "supported"}
    assert mo[0].claim["text"].startswith("A photograph shared to Reddit")
    assert len(mocheg_documents(mo[:2])) >= 2


def test_dataset_run_metrics_and_official_predictions(stage_llm, ephemeral_store, data_dir):
    claims, collection = _small_oracle(ephemeral_store, data_dir)
    model, script = stage_llm(
        {
            "plan": ['```\nweb_search("who wrote the letter")\n```'],
            "summarize": ["The letter came from a satire site."],
            "merge": ["Satire [x](u)."],
            "develop": ["Satire."],
            "judge": ["`refuted`"],
            "justify": ["It was satire."],
            "baseline": ["No idea.", "Probably `supported`"],
        }
    )
    items = load_averitec(data_dir / "averitec" / "dev.json", limit=2)
    cfg = DefameConfig(model=model, benchmark="averitec", corpus=collection)
    outcomes = run_items(items, cfg, store=ephemeral_store, checkpointer=None)
    s = summarise(outcomes, cfg)
    assert [o.defame for o in outcomes] == ["Refuted", "Refuted"]
    assert s["defame"]["metrics"]["accuracy"] == pytest.approx(sum(o.gold == "Refuted" for o in outcomes) / 2)
    assert s["defame"]["parse"]["judge"]["rate"] == 1.0 and s["defame"]["parse"]["plan"]["rate"] == 1.0
    assert s["baseline"]["parse"]["baseline"]["first_try_rate"] == 0.5  # 1st baseline answer had no label
    assert s["defame"]["retrieved_sources"] > 0 and 0 < s["defame"]["gold_source_share"] <= 1
    preds = averitec_predictions(outcomes)
    assert preds[0]["label"] == "Refuted" and preds[0]["questions"][0]["question"] == "who wrote the letter"
    assert preds[0]["questions"][0]["answers"][0]["answer"].startswith("Satire")
    from methods.averitec_eval.scorer import score

    sc = score(preds, [claims[0], claims[1]])
    assert 0.0 < sc.question_answer < 1.0 and sc.veracity["acc"] == s["defame"]["metrics"]["accuracy_all"]


def test_real_local_model_end_to_end_two_claims(ephemeral_store, data_dir):
    """SmolLM2-135M through the gateway: every claim ends with a complete report and a label (REFUSED counted)."""
    _, collection = _small_oracle(ephemeral_store, data_dir, n=6)
    items = load_averitec(data_dir / "averitec" / "dev.json", limit=2)
    cfg = DefameConfig(
        benchmark="averitec",
        corpus=collection,
        max_iterations=1,
        limit_per_search=1,
        retries=1,
        max_prompt_chars=1200,
        max_source_chars=200,
        budget=StageBudget(plan=24, summarize=6, merge=6, develop=6, judge=24, justify=6),
    )
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # two shared cores: OpenMP threads spinning against each other cost 10x
    try:
        outcomes = run_items(items, cfg, store=ephemeral_store, baseline=False, checkpointer=None)
    finally:
        torch.set_num_threads(threads)
    for o in outcomes:
        r = o.result
        assert r["verdict"] in {lbl.value for lbl in Label}
        assert "## Claim" in r["markdown"] and "## Final Judgement" in r["markdown"]
        stages = {c["stage"] for c in r["calls"]}
        assert {"plan", "judge"} <= stages
        assert all(c["prompt_tokens"] > 0 for c in r["calls"])
        if r["verdict"] != Label.REFUSED.value:
            assert "### Verdict:" in r["markdown"] and "justify" in stages


def test_batch_job_over_a_dataset_file_reports_progress(stage_llm, settings, monkeypatch, data_dir):
    """``defame.batch`` through the job runner: every claim of the MOCHEG sample file (``data_dir``: skips
    without the benchmark slices), with progress."""
    from core.jobs.lifecycle import run_inline
    from core.vectorstore import get_vectorstore

    get_vectorstore().add(
        "defame-test-batch",
        ids=["m1"],
        documents=["A rainbow grasshopper lives in prairies."],
        metadatas=[{"url": "https://bugs.example.org/g", "title": "bugs"}],
    )
    model, _ = stage_llm(
        {
            "plan": ['```\nweb_search("rainbow grasshopper")\n```'],
            "summarize": ["It is real."],
            "develop": ["Real insect."],
            "judge": ["`supported`"],
            "justify": ["Bug guides show it."],
            "baseline": ["`not enough information`"],
        }
    )
    messages: list[str] = []
    job_id, outcome = run_inline(
        "defame.batch",
        {"dataset": "mocheg", "limit": 2, "corpus": "defame-test-batch", "model": model},
        sink=lambda f, m: messages.append(m),
    )
    assert outcome.status == "succeeded", outcome.error
    assert any("mocheg claim 2/2" in m for m in messages)
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        body = crud.get_report_for_job(s, job_id=job_id).body
    preds = next(t for t in body["tables"] if t["title"] == "Predictions")["rows"]
    assert [r[2] for r in preds] == ["supported", "supported"] and [r[3] for r in preds] == ["NEI", "NEI"]
    from core.jobs import InvalidParams

    with pytest.raises(InvalidParams, match="files must come from"):
        run_inline("defame.batch", {"dataset": "mocheg", "path": "/etc/passwd"})


def test_run_items_workers_overlap_claims_and_keep_item_order(monkeypatch, data_dir):
    """workers=3: claims run at the same time (so a local engine can batch their calls), outcomes stay in order."""
    import threading
    import time as _time
    from types import SimpleNamespace

    import agents.defame.experiment as ev

    live, peak, lock = [0], [0], threading.Lock()
    labels = [Label.SUPPORTED, Label.REFUTED, Label.NEI, Label.CONFLICTING, Label.REFUTED]

    def fake_check(claim, config, *, store=None, checkpointer=None):
        i = int(claim["text"].split()[-1])
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        _time.sleep(0.05 * (5 - i))  # later claims finish first
        with lock:
            live[0] -= 1
        return SimpleNamespace(
            label=labels[i], seconds=0.01, state={"iteration": 1, "calls": [], "record": []}, to_json=lambda: {}
        )

    monkeypatch.setattr(ev, "check_claim", fake_check)
    items = load_averitec(data_dir / "averitec" / "dev.json", limit=5)
    for i, item in enumerate(items):
        item.claim["text"] = f"claim {i}"
    seen: list[int] = []
    cfg = DefameConfig(model="scripted/x", benchmark="averitec", corpus="unused")
    out = run_items(items, cfg, baseline=False, workers=3, on_claim=lambda k, n, oc: seen.append(k))
    assert [o.id for o in out] == ["0", "1", "2", "3", "4"]
    bench_labels = [o.defame for o in out]
    serial = run_items(items, cfg, baseline=False, workers=1)
    assert bench_labels == [o.defame for o in serial]
    assert peak[0] == 3 and seen == [1, 2, 3, 4, 5]


def test_summary_keep_rates_split_own_evidence_from_other_claims():
    """The summariser's kept flags are split by whether the source is this claim's own gold answer."""
    from agents.defame.evaluate import ClaimOutcome

    def call(url, kept):
        return {"stage": "summarize", "source": url, "kept": kept, "prompt_tokens": 10, "completion_tokens": 5}

    outcomes = [
        ClaimOutcome(
            id="0",
            gold="Refuted",
            defame="Refuted",
            defame_calls=[call("https://a/own", True), call("https://b/other", False), call("https://c/other", True)],
            retrieved=[
                {"url": "https://a/own", "gold_for": "0"},
                {"url": "https://b/other", "gold_for": "7"},
                {"url": "https://c/other", "gold_for": "9"},
            ],
        ),
        ClaimOutcome(
            id="1",
            gold="Supported",
            defame="Refuted",
            defame_calls=[call("https://d/own", False), {"stage": "judge", "prompt_tokens": 1, "completion_tokens": 1}],
            retrieved=[{"url": "https://d/own", "gold_for": "1"}],
        ),
    ]
    d = summarise(outcomes, DefameConfig(benchmark="averitec"))["defame"]
    assert (d["summaries_own"], d["summaries_other"]) == (2, 2)
    assert d["kept_own_rate"] == pytest.approx(0.5) and d["kept_other_rate"] == pytest.approx(0.5)
