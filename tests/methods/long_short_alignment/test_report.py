"""The reproducer end to end at a tiny size: seeds, both stage-B variants, paired differences, correlations."""

from __future__ import annotations

import json
import math

import pytest

from core.jobs import JobContext
from methods.long_short_alignment import experiment as rep
from methods.long_short_alignment import report as tables
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
    assert t["n_ckpt"] == 2 and t["seeds"] == 2  # the correlation leaves out α = 1 (over-regularization)
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
    assert any("paired difference" in x for x in titles) and any("correlation across 2" in x for x in titles)
    assert any("§7" in x for x in titles)
    assert {"b1_r_misalign_sce", "b2_r_train_loss"} <= set(report.metrics)
    assert any(s.title == "Reading" for s in report.sections)
    # a second call reads every run from the cache: identical numbers
    again = reproduce(Options(**TINY), JobContext())
    assert again.data["lm"]["runs"] == runs
    assert len(list((fresh_cache / "long_short_alignment" / "lm").iterdir())) == 2


def test_fisher_and_t_intervals():
    lo, hi = tables._fisher_ci(0.5, 30)
    assert lo < 0.5 < hi and hi - lo < 1
    assert all(math.isnan(x) for x in tables._fisher_ci(0.5, 3))
    m, lo, hi = tables._t_ci([1.0, 2.0, 3.0])
    assert m == 2.0 and lo == pytest.approx(2 - 4.303 * 1 / 3**0.5, rel=1e-3)


def test_lm_job_b2(fresh_cache):
    p = LMParams(l_train=16, d=16, layers=1, stage_a_steps=2, stage_b_steps=2, alphas=[0.1], saves=1, variants=["b2"])
    r = lm(p, JobContext())
    assert [x["variant"] for x in r.data["runs"]] == ["b2"] and r.data["runs"][0]["l_train"] == 32
    with pytest.raises(ValueError):
        LMParams(variants=["b3"])


def _fake_lm(skl_delta: list[float], nll_delta: list[float]) -> dict:
    """End-of-stage-B checkpoints of 3 seeds at α = 0 and 0.1 whose paired differences are the given ones."""
    final = {"0.0": [], "0.1": []}
    for s, (ds, dn) in enumerate(zip(skl_delta, nll_delta, strict=True)):
        for a, k in (("0.0", 0.0), ("0.1", 1.0)):
            nll = 2.0 + 0.01 * s + k * dn
            final[a].append(
                {
                    "seed": s,
                    "alpha": float(a),
                    "misalign": {"sce": 6.0 - k * 0.5, "skl": 0.005 + k * ds},
                    "train_loss": 2.6,
                    "ppl": {f"heldout@{n}": {"nll": nll} for n in (16, 32, 64)},
                }
            )
    corr = {q: {"long": 0.1, "gap": 0.0} for q in ("sce", "skl", "train")}
    paired = {"0.1@skl": {"mean": sum(skl_delta) / 3}} | {f"0.1@{n}": {"mean": sum(nll_delta) / 3} for n in (32, 64)}
    return {
        "tables": {
            "b1": {"final": final, "lengths": [16, 32, 64], "l_train": 16, "paired": paired, "corr": corr, "n_ckpt": 6}
        }
    }


def test_an_interval_across_zero_is_not_resolved_in_headlines_and_checks():
    """Issue #49: 'lower L_misalign' with a CI straddling 0 was counted as holding; now it is not resolved."""
    synth = {"checks": {}, "means": {}}
    mixed = _fake_lm([-0.001, 0.0005, -0.0002], [0.01, 0.012, 0.011])
    ev = tables.evidence([], mixed, [])
    assert ev.recompute() == []
    skl = next(h for h in ev.headlines if "SKL" in h.claim)
    assert skl.result["estimate"] < 0 and skl.result["verdict"] == "not resolved"
    nll = next(h for h in ev.headlines if "2× l_train" in h.claim)
    assert nll.result["verdict"] == "fails"  # NLL higher in every seed
    rows = {r[1]: r[3] for r in tables._rows(ev, synth, mixed, None)}
    assert rows["lower L_misalign (paired Δ SKL < 0)"] == "not resolved"
    assert rows["NLL@32 lower or equal"] == "fails"
    lower = _fake_lm([-0.001, -0.0012, -0.0011], [-0.01, -0.012, -0.011])
    ev = tables.evidence([], lower, [])
    assert next(h for h in ev.headlines if "SKL" in h.claim).result["verdict"] == "holds"
    assert next(h for h in ev.headlines if "4× l_train" in h.claim).result["verdict"] == "holds"


def test_reproducer_writes_headlines_and_results_json(fresh_cache):
    from core.evidence import Evidence, table_in

    report = reproduce(Options(**{**TINY, "lm_alphas": [0.0, 0.1, 1.0]}), JobContext())
    assert report.sections[0].title.startswith("Summary")
    data = json.loads(report.pending_files()["results.json"])
    ev = Evidence.from_json(data)
    assert ev.recompute() == [] and table_in(report.to_markdown()) == ev.table()
    claims = [h.claim for h in ev.headlines]
    assert any("α = 1 raises" in c for c in claims) and any("nope: mean task" in c for c in claims)
    over = next(h for h in ev.headlines if h.claim.startswith("B1: α = 1"))
    assert over.result["n"] == 2 and len(data["raw"]["lm"]["b1"]["alpha1"]["nll@16"]) == 2
    # the correlation leaves out the over-regularization arm (2 seeds × α ∈ {0, 0.1} × 1 save)
    text = report.to_markdown()
    assert "correlation across 4 checkpoints (2 seed(s) × α ∈ [0.0, 0.1] × 1 saves)" in text
    assert "Across 4 checkpoints (α < 1)" in text
