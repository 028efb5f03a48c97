"""Issue #26's AVeriTeC protocol: majority-class baseline, bootstrap CIs, per-claim knowledge store, presets."""

from __future__ import annotations

import pytest

from agents.defame.config import PRESETS, DefameConfig, DefameContext, DefameSettings
from agents.defame.evaluate import ClaimOutcome, _acc_f1, bootstrap_ci, paired_bootstrap, summarise
from agents.defame.parsing import Action
from agents.defame.report import metric_rows, reading
from agents.defame.tools.registry import run_action


def test_acc_f1_matches_label_metrics_and_ci_brackets_the_point():
    from methods.averitec_eval.metrics import label_metrics

    gold = ["Refuted"] * 6 + ["Supported"] * 3 + ["Not Enough Evidence"]
    pred = ["Refuted"] * 4 + ["Supported"] * 2 + ["Supported", "Refuted", "REFUSED", "Not Enough Evidence"]
    m = label_metrics(gold, pred, refused="REFUSED")
    acc, f1 = _acc_f1(gold, pred, "REFUSED")
    assert acc == pytest.approx(m["accuracy"]) and f1 == pytest.approx(m["macro_f1"])
    ci = bootstrap_ci(gold, pred, refused="REFUSED")
    assert ci["accuracy"][0] <= acc <= ci["accuracy"][1] and ci["macro_f1"][0] <= f1 <= ci["macro_f1"][1]
    assert ci == bootstrap_ci(gold, pred, refused="REFUSED"), "seeded"
    assert bootstrap_ci(gold, gold, refused="REFUSED")["accuracy"] == [1.0, 1.0]


def test_summary_has_the_majority_class_and_on_claim_search_rate():
    outcomes = [
        ClaimOutcome(id=str(i), gold=g, defame=p, baseline="Refuted", searches=s)
        for i, (g, p, s) in enumerate(
            [
                ("Refuted", "Refuted", [["0", "5"]]),
                ("Refuted", "Supported", [["9"], ["1"]]),
                ("Refuted", "Refuted", []),
                ("Supported", "Supported", [["3"]]),
            ]
        )
    ]
    s = summarise(outcomes, DefameConfig(benchmark="averitec"))
    assert s["majority"]["label"] == "Refuted" and s["majority"]["metrics"]["accuracy"] == 0.75
    assert s["majority"]["metrics"]["macro_f1"] == pytest.approx((2 * 3 / (2 * 3 + 1) + 0) / 2)
    assert s["defame"]["searches"] == 4 and s["defame"]["on_claim_search_rate"] == pytest.approx(3 / 4)
    rows = metric_rows(s, "AVeriTeC")
    assert [r[1] for r in rows] == ["DEFAME", "no-evidence baseline", "majority class (always `Refuted`)"]
    assert rows[0][5].startswith("[") and rows[2][9] == "0"
    text = reading(s, "local/x")
    assert "majority class" in text and "macro-f1" in text and "75.0% of 4 searches" in text


def test_paired_bootstrap_measures_a_difference_on_the_same_claims():
    gold = ["Refuted"] * 20 + ["Supported"] * 10
    always = ["Refuted"] * 30
    right = list(gold)
    right[0] = "Supported"  # one mistake
    p = paired_bootstrap(gold, right, always, refused="REFUSED")
    assert p["n"] == 30 and p["accuracy"][0] == pytest.approx(29 / 30 - 20 / 30)
    diff, lo, hi = p["accuracy"]
    assert 0 < lo <= diff <= hi, "nine more claims right out of 30: measured"
    assert p["macro_f1"][1] > 0
    assert p == paired_bootstrap(gold, right, always, refused="REFUSED"), "seeded"
    same = paired_bootstrap(gold, always, always, refused="REFUSED")
    assert same["accuracy"] == [0.0, 0.0, 0.0], "a system against itself differs by exactly 0 in every resample"
    # one claim better on 30 is not told apart from 0
    one = list(always)
    one[20] = "Supported"
    diff, lo, hi = paired_bootstrap(gold, one, always, refused="REFUSED")["accuracy"]
    assert diff == pytest.approx(1 / 30) and lo <= 0 < hi


def test_reading_states_paired_differences_and_the_target():
    def outcomes(defame):
        gold = ["Refuted"] * 20 + ["Supported"] * 10
        return [
            ClaimOutcome(id=str(i), gold=g, defame=p, baseline="Refuted") for i, (g, p) in enumerate(zip(gold, defame))
        ]

    good = summarise(outcomes(["Refuted"] * 20 + ["Supported"] * 9 + ["Refuted"]), DefameConfig(benchmark="averitec"))
    assert set(good["paired"]) == {"majority", "baseline"}
    text = reading(good, "local/x")
    assert "paired bootstrap over the same 30 claims (the interval excludes 0: a measured difference)" in text
    assert "target" in text and "**met**, each difference measured" in text
    bad = summarise(outcomes(["Not Enough Evidence"] * 30), DefameConfig(benchmark="averitec"))
    text = reading(bad, "local/x")
    assert "**not met** (not above on accuracy vs the baseline" in text
    assert "-66.7 points" in text


def test_per_claim_knowledge_store_searches_only_the_claims_documents(ephemeral_store):
    ephemeral_store.add(
        "kb-claims",
        ids=["a", "b", "c"],
        documents=["The tower is in Paris.", "The tower is in Berlin.", "Uploaded: the tower is tall."],
        metadatas=[
            {"url": "https://paris.example.org/", "gold_for": "7"},
            {"url": "https://berlin.example.com/", "gold_for": "8"},
            {"url": "https://upload.example.net/", "claim_id": "7"},
        ],
    )
    ctx = DefameContext(config=DefameConfig(corpus="kb-claims"), store=ephemeral_store, settings=DefameSettings())
    claim = {"text": "Where is the tower?", "images": {}, "claim_id": "7"}
    res = run_action(Action("web_search", "tower location"), claim, {}, ctx, set())
    assert sorted(s["url"] for s in res["sources"]) == ["https://paris.example.org/", "https://upload.example.net/"]
    shared = run_action(Action("web_search", "tower location"), {**claim, "claim_id": None}, {}, ctx, set())
    assert len(shared["sources"]) == 3


def test_reproducer_presets():
    from agents.defame.jobs import DefameOptions

    assert DefameOptions().limit == 30
    opts = DefameOptions(preset="issue")
    assert opts.limit == 100 and opts.model is None
    big = DefameOptions(preset="issue-1.5b")
    assert big.model == "local/qwen2.5-coder-1.5b-instruct" and big.limit >= 30
    assert DefameOptions(preset="issue", limit=120).limit == 120
    assert "preset=issue" in opts.cli_options()
    assert set(PRESETS) == {"small", "tiny", "issue", "issue-1.5b", "summary"}
    assert DefameOptions(preset="summary").from_runs and not DefameOptions().from_runs
