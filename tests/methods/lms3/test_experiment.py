"""The §6 experiment end to end on a tiny random Llama: every arm, the pool-norm-free arms, the report."""

from __future__ import annotations

import numpy as np

from core.jobs import null_context
from methods.lms3.config import PRESETS


def test_experiment_and_report_with_the_pool_norm_free_arms(tiny_llama_dir, ephemeral_store, data_dir):
    from methods.lms3.experiment import run_experiment
    from methods.lms3.report import build_report
    from methods.lms3.results import NLL_ARMS, THEORY_SCORES

    cfg = PRESETS["tiny"].with_datasets(("mawps",)).with_limits(accuracy=False, all_modes=False)
    assert cfg.sizes["mawps"].acc_queries == 0 and not cfg.sizes["mawps"].all_modes
    assert PRESETS["tiny"].with_limits() is PRESETS["tiny"]  # nothing limited: the preset itself
    assert cfg.limited == [
        "mawps: accuracy decoding skipped",
        "mawps: reference representation only in the query-dependence table",
        "datasets: mawps of gsm8k, mawps, math",
    ]
    (res,) = run_experiment(cfg, store=ephemeral_store, progress=null_context(), model_name=str(tiny_llama_dir))
    n = cfg.sizes["mawps"].nll_queries
    assert set(res.nll) == set(NLL_ARMS) and all(len(v) == n for v in res.nll.values())
    assert all(np.isfinite(v).all() and min(v) > 0 for v in res.nll.values())
    assert {"score_unit", "lms3_unit", "lms3_centred"} <= set(res.nll)
    assert res.accuracy == {}  # decoding skipped
    assert [s["normalize"] for s in res.norm_stats] == ["none", "unit", "centred"]
    for s in res.norm_stats:
        assert 1 <= s["distinct_score_top1"] <= res.n_queries and 0.0 <= s["rejection_rate"] <= 1.0
    assert set(res.theory) == set(THEORY_SCORES)
    assert all(len(v) == cfg.sizes["mawps"].theory_queries for v in res.theory.values())

    rep = build_report([res], cfg, wall_s=1.0, command="paperworks reproduce lms3 -o preset=tiny")
    md = rep.to_markdown()
    titles = [s.title for s in rep.sections]
    assert "Removing the pool-norm effect (non-reference arms)" in titles and titles[-1] == "Reading"
    assert "[non-ref] LMS3, unit-norm Sim" in md and "Further limited: mawps: accuracy decoding skipped" in md
    reading = rep.sections[-1].markdown
    assert reading.startswith("On mawps (pool 20, 2 NLL queries) LMS3's gold NLL is")
    assert "With unit-normalised Sim the selection" in reading and "What would change the conclusion" in reading
    assert "mawps_nll_lms3_unit" in rep.metrics and "mawps_distinct_score_top1_unit" in rep.metrics
    assert rep.data["datasets"][0]["norm_stats"] == res.norm_stats
