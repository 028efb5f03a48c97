"""The registered jobs at a tiny size, in-process: kept patches, and the experiment on all three tasks."""

from __future__ import annotations

import json

import pytest

from core.evidence import Evidence
from core.jobs import JobContext
from methods.double_filter.jobs import ExperimentParams, Options, PatchParams, reproduce, run_experiment, run_patches


def test_patches_job_overlays_kept_patches():
    r = run_patches(PatchParams(backbone="test", count=3, rho=0.5), JobContext())
    assert r.metrics["kept"] == 8 and r.metrics["patches"] == 16
    assert r.artifact("kept_patches.png") is not None
    rows = r.tables[0].rows
    assert len(rows) == 3 and all(fg + bg == 8 for *_, fg, bg in rows)
    assert all(len(k) == 8 and k == sorted(set(k)) for k in r.data["keep"])


def test_params_validation():
    with pytest.raises(ValueError):
        PatchParams(rho=0.0)
    with pytest.raises(ValueError):
        ExperimentParams(tasks=["captioning"])
    assert ExperimentParams(tasks=["vqa", "vqa"]).tasks == ["vqa"]


def test_experiment_tiny_on_every_task():
    params = ExperimentParams(
        backbone="test", tasks=["vqa", "nlvr", "retrieval"], seeds=1, steps=3, n_train=64, n_val=16, n_test=32,
        population=4, generations=2,
    )  # fmt: skip
    r = run_experiment(params, JobContext())
    runs = r.data["runs"]
    assert [x["task"] for x in runs] == ["vqa", "nlvr", "retrieval"]
    assert set(runs[0]["arms"]) == {"none", "ipf", "alf", "both", "random_patches", "fg_only", "random_mask"}
    assert set(runs[1]["arms"]) == {"none", "ipf", "alf", "both"}
    for run in runs:
        arms = run["arms"]
        assert all(0.0 <= a["score"] <= 1.0 for a in arms.values())
        assert arms["ipf"]["kept"] == 8 and arms["none"]["kept"] == 16
        assert arms["ipf"]["flops"]["vision"] < arms["none"]["flops"]["vision"]
        assert arms["ipf"]["flops"]["ipf"] > 0 and arms["none"]["flops"]["ipf"] == 0
        assert arms["alf"]["genome"] == run["ga"]["best"]
        assert len(run["ga"]["best_curve"]) == 3
    nlvr = runs[1]["arms"]["none"]["flops"]
    assert nlvr["vision"] == pytest.approx(2 * runs[0]["arms"]["none"]["flops"]["vision"])
    checks = {c[0]: c[1] for c in r.data["checks"]}
    assert all(ok for name, ok in checks.items() if not name.startswith("5."))  # structural checks 1–4 hold
    assert sum(name.startswith("5.") for name in checks) == 5
    assert r.artifact("ga_fitness.png") and r.artifact("score_vs_cost.png") and r.artifact("kept_patches.png")
    assert any(t.title.startswith("§7 checks") for t in r.tables)
    # every arm records its validation curve (step 0 .. steps) and per-item test hits; the headlines come from them
    for run in runs:
        for arm in run["arms"].values():
            assert [p[0] for p in arm["val_curve"]] == [0, 1, 2, 3] and len(arm["hits"]) == 32
            assert arm["score"] == pytest.approx(sum(arm["hits"]) / 32)
    ev = Evidence.from_json(json.loads(r._pending["results.json"]))
    assert ev.recompute() == [] and r.sections[0].markdown == ev.table()
    claims = [h.claim for h in ev.headlines]
    assert "nlvr: Double-Filter within 1 pt of full fine-tuning" in claims and len(claims) == 12
    assert len(ev.raw["vqa"]["none"]["hits"]) == 32 and any(t.title.startswith("Convergence") for t in r.tables)


def test_reproducer_quick_preset_fills_options():
    opts = Options(preset="quick")
    assert opts.backbone == "test" and opts.seeds == 1 and opts.tasks == ["vqa"]
    assert callable(reproduce)
