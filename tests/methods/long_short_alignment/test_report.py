"""The reproducer end to end at a tiny size: seeds, both stage-B variants, paired differences, correlations."""

from __future__ import annotations

import math

import pytest

from core.jobs import JobContext
from methods.long_short_alignment import report as rep
from methods.long_short_alignment.jobs import LMParams, Options, lm, reproduce
from methods.long_short_alignment.lm import LMConfig


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(rep, "_cache_root", lambda: tmp_path)
    return tmp_path


TINY = {
    "seeds": 1,
    "synth_steps": 3,
    "eval_per_length": 10,
    "pes": ["nope"],
    "lm_l_train": 16,
    "lm_d": 16,
    "lm_layers": 1,
    "lm_stage_a_steps": 3,
    "lm_stage_b_steps": 2,
    "lm_alphas": [0.0, 1.0],
    "lm_saves": 1,
    "lm_seeds": 2,
    "lm_variants": ["b1", "b2"],
    "dispatch": "inline",
}


def test_stage_b_variants():
    cfg = LMConfig(l_train=32, eval_lengths=(32, 64, 128))
    assert cfg.stage_b("b1") == (32, 1.0, (32, 64, 128))
    assert cfg.stage_b("b2") == (64, 0.5, (64, 128, 256))
    with pytest.raises(ValueError):
        cfg.stage_b("b3")


def test_reproducer_tiny_seeds_variants_and_cache(fresh_cache):
    report = reproduce(Options(**TINY), JobContext())
    lm_data = report.data["lm"]
    runs = lm_data["runs"]
    # 2 seeds × 2 variants × 2 α × 1 save, each seed its own stage A
    assert len(runs) == 8 and {r["seed"] for r in runs} == {0, 1}
    b2 = [r for r in runs if r["variant"] == "b2"]
    assert {r["l_train"] for r in b2} == {32} and {r["rope_scale"] for r in b2} == {0.5}
    assert set(b2[0]["ppl"]) >= {"heldout@32", "heldout@64", "heldout@128"}
    # seeds are independent runs: different numbers for the same (variant, α)
    s0, s1 = (next(r for r in runs if r["seed"] == s and r["variant"] == "b1" and r["alpha"] == 0.0) for s in (0, 1))
    assert s0["train_loss"] != s1["train_loss"]
    t = lm_data["tables"]["b1"]
    assert t["n_ckpt"] == 4 and t["seeds"] == 2
    d = t["paired"]["1.0@16"]
    assert d["n"] == 2 and d["lo"] <= d["mean"] <= d["hi"]
    base = {r["seed"]: r for r in runs if r["variant"] == "b1" and r["alpha"] == 0.0}
    diffs = [
        r["ppl"]["heldout@16"]["nll"] - base[r["seed"]]["ppl"]["heldout@16"]["nll"]
        for r in runs
        if r["variant"] == "b1" and r["alpha"] == 1.0
    ]
    assert d["mean"] == pytest.approx(sum(diffs) / 2)
    titles = [x.title for x in report.tables]
    assert any("paired difference" in x for x in titles) and any("correlation across 4" in x for x in titles)
    assert any("§7" in x for x in titles)
    assert {"b1_r_misalign_sce", "b2_r_train_loss"} <= set(report.metrics)
    assert any(s.title == "Reading" for s in report.sections)
    # a second call reads every run from the cache: identical numbers
    again = reproduce(Options(**TINY), JobContext())
    assert again.data["lm"]["runs"] == runs
    assert len(list((fresh_cache / "long_short_alignment" / "lm").iterdir())) == 2


def test_fisher_and_t_intervals():
    lo, hi = rep._fisher_ci(0.5, 30)
    assert lo < 0.5 < hi and hi - lo < 1
    assert all(math.isnan(x) for x in rep._fisher_ci(0.5, 3))
    m, lo, hi = rep._t_ci([1.0, 2.0, 3.0])
    assert m == 2.0 and lo == pytest.approx(2 - 4.303 * 1 / 3**0.5, rel=1e-3)


def test_lm_job_b2(fresh_cache):
    p = LMParams(l_train=16, d=16, layers=1, stage_a_steps=2, stage_b_steps=2, alphas=[0.1], saves=1, variants=["b2"])
    r = lm(p, JobContext())
    assert [x["variant"] for x in r.data["runs"]] == ["b2"] and r.data["runs"][0]["l_train"] == 32
    with pytest.raises(ValueError):
        LMParams(variants=["b3"])
