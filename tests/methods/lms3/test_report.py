"""The LMS3 report's headline claims (core.evidence) on synthetic per-query values: no model needed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.evidence import Evidence
from methods.lms3.config import PRESETS
from methods.lms3.report import build_report, evidence
from methods.lms3.results import NLL_ARMS, THEORY_SCORES, DatasetResult, from_raw, to_raw


def _result(lms3_shift: float, *, n: int = 40, rho: float = 0.0, rejected: bool = False, seed: int = 0):
    """A dataset whose LMS3 NLL is random's + ``lms3_shift`` (plus noise); theory ρ(Score) around ``rho``."""
    rng = np.random.default_rng(seed)
    zero = 2.0 + 0.3 * rng.standard_normal(n)
    rand = zero - 0.4 + 0.05 * rng.standard_normal(n)
    nll = {arm: list(rand + 0.05 * rng.standard_normal(n)) for arm in NLL_ARMS}
    nll["zero_shot"], nll["random"] = list(zero), list(rand)
    nll["lms3"] = list(zero) if rejected else list(rand + lms3_shift + 0.02 * rng.standard_normal(n))
    theory = {s: list(0.3 * rng.standard_normal(20)) for s in THEORY_SCORES}
    theory["score"] = list(rho + 0.1 * rng.standard_normal(20))
    theory["cosine"] = list(0.1 * rng.standard_normal(20))
    with_demo = {arm: [True] * n for arm in NLL_ARMS}
    with_demo["zero_shot"] = [False] * n
    with_demo["lms3"] = [not rejected] * n
    sel = [
        {"mode": "reference", "layer": "final_norm_output", "orientation": "reference", "queries": n,
         "distinct_score_top1": 1, "distinct_sim_top1": 1, "distinct_cosine_top1": n, "distinct_lms3": 1,
         "rejection_rate": float(rejected), "rejection_rate_min_lambda0": float(rejected),
         "share_explained_by_norm": 1.0, "median_norm_ratio": 13.0, "score_top1_is_stab_top1": 1.0,
         "stab_share_of_log_score_var": 0.2}
    ]  # fmt: skip
    return DatasetResult(
        "mawps", "mawps-n40s0", 40, {"": 1}, n, selection_stats=sel, nll=nll, with_demo=with_demo, theory=theory,
        seconds={"total": 1.0}, correct={"zero_shot": [False] * n, "random": [True, False] * (n // 2),
                                          "lms3": [True] * n},
    )  # fmt: skip


def _verdicts(ev: Evidence) -> dict[str, str]:
    return {h.claim.split(": ", 1)[1]: h.result["verdict"] for h in ev.headlines}


def test_lms3_below_random_holds_only_when_its_nll_is_lower():
    cfg = PRESETS["tiny"]
    better = _verdicts(evidence([_result(-0.2, rho=0.3)], cfg))
    assert better["LMS3 gold NLL below random 1-shot"] == "holds"
    assert better["theory check, mean Spearman ρ(Score, one-shot NLL) > 0"] == "holds"
    worse = _verdicts(evidence([_result(+0.2, rho=-0.3)], cfg))
    assert worse["LMS3 gold NLL below random 1-shot"] == "fails"
    assert worse["theory check, mean Spearman ρ(Score, one-shot NLL) > 0"] == "fails"


def test_a_selector_that_rejects_everything_is_not_better_than_zero_shot():
    """LMS3 = zero-shot on every query (the MAWPS outcome): the difference is exactly 0, never 'holds'."""
    v = _verdicts(evidence([_result(0.0, rejected=True)], PRESETS["tiny"]))
    assert v["LMS3 gold NLL below zero-shot"] == "not resolved"
    assert v["LMS3 gold NLL below random 1-shot"] == "fails"


def test_accuracy_headlines_use_the_per_query_hits():
    v = _verdicts(evidence([_result(-0.2)], PRESETS["tiny"]))
    assert v["LMS3 answer accuracy above zero-shot"] == "holds"  # 100 % vs 0 %
    assert v["LMS3 answer accuracy above random"] == "holds"  # 100 % vs 50 %
    r = _result(-0.2)
    r.correct["lms3"] = list(r.correct["zero_shot"])
    assert _verdicts(evidence([r], PRESETS["tiny"]))["LMS3 answer accuracy above zero-shot"] == "not resolved"


def test_report_opens_with_the_table_and_results_json_recomputes(tmp_path):
    r = _result(0.1)
    rep = build_report([r], PRESETS["tiny"], wall_s=1.0, command="paperworks reproduce lms3 -o preset=tiny")
    assert rep.sections[0].markdown.startswith("<!-- headlines")
    assert "**fails**" in rep.summary and "LMS3 gold NLL below random 1-shot" in rep.summary
    files = rep.pending_files()
    data = json.loads(files["results.json"])
    ev = Evidence.from_json(data)
    assert ev.recompute() == [] and ev.table() == rep.sections[0].markdown
    raw = json.loads(files["raw.json"])["datasets"][0]
    back = from_raw(raw)
    assert back.nll == r.nll and back.correct == r.correct and back.n_queries == r.n_queries
    assert to_raw(back) == raw


def test_from_raw_reads_files_written_before_n_queries_was_stored():
    raw = to_raw(_result(0.0))
    for k in ("n_queries", "min_lambda", "correct", "examples"):
        raw.pop(k)
    back = from_raw(raw)
    assert back.n_queries == 40 and back.min_lambda == 0 and back.correct == {}


@pytest.mark.parametrize("name", ["lms3", "lms3_gsm8k", "lms3_math"])
def test_committed_results_json_is_what_the_report_computes_from_raw_json(name):
    """The docs' results.json were built from their raw.json by :func:`evidence` (no rerun): same headlines."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "docs" / "results" / name
    raw = json.loads((root / "raw.json").read_text())
    stored = json.loads((root / "results.json").read_text())
    results = [from_raw(d) for d in raw["datasets"]]
    cfg = PRESETS[raw["config"]].with_datasets(tuple(r.dataset for r in results))
    fresh = evidence(results, cfg).to_json()
    assert fresh["headlines"] == stored["headlines"] and fresh["raw"] == stored["raw"]
