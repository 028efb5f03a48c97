"""The study / reproduction on synthetic frozen features: headline claims from the per-seed values, the long-budget
arms, the prediction-branch reference, and finished runs reused from the result store."""

from __future__ import annotations

import json

import pytest

from core.evidence import Evidence
from core.jobs import null_context
from tests.methods.m3_jepa.fakes import install


def test_study_states_its_headlines_from_every_seed_and_reuses_finished_runs(monkeypatch, tmp_path):
    from methods.m3_jepa import experiment, train
    from methods.m3_jepa.jobs import StudyParams

    install(monkeypatch, tmp_path)
    trained = []
    real_run = train.run

    def counting_run(cfg, *a, **k):
        trained.append((cfg.model, cfg.block, cfg.epochs, cfg.seed))
        return real_run(cfg, *a, **k)

    monkeypatch.setattr(train, "run", counting_run)
    params = StudyParams(
        variants=["m3_jepa", "mlp", "clip_linear"], seeds=2, epochs=2, patience=0, dispatch="inline", long_epochs=3
    )
    report = experiment.run_study(params, null_context())
    assert len(trained) == 6 + 4  # 3 variants × 2 seeds, and m3_jepa / clip_linear × 2 seeds at 3 epochs
    ev = Evidence.from_json(json.loads(report._pending["results.json"]))
    assert ev.recompute() == [] and report.sections[0].markdown == ev.table()
    claims = {h.claim: h for h in ev.headlines}
    moe = claims["MoE beats the MLP predictor"]
    a, b = ev.raw["runs"]["m3_jepa"]["mean_r1"], ev.raw["runs"]["mlp"]["mean_r1"]
    assert moe.result["n"] == 2 and moe.result["estimate"] == pytest.approx((a[0] - b[0] + a[1] - b[1]) / 2)
    assert "M3-JEPA beats the CLIP-style linear baseline at 3 epochs" in claims
    assert "The prediction branch retrieves above chance at 3 epochs" in claims
    ref = ev.raw["reference"]
    assert ref["t2i"]["reg_group_mean"] <= ref["t2i"]["reg_mean_target"]  # a group mean fits no worse than the mean
    assert 0 <= ref["i2t"]["group_mean_r1"] <= 1 and len(ev.raw["long"]["m3_jepa"]["mean_r1"]) == 2
    text = report.to_markdown()
    assert "The long-budget arms: 3 epochs" in text and "prediction (latent-regression) branch" in text
    # a second study trains nothing: every (variant, seed, epochs) result is stored beside its weights
    again = experiment.run_study(params, null_context())
    assert len(trained) == 10
    assert json.loads(again._pending["results.json"])["raw"]["runs"] == ev.raw["runs"]
    assert "10 of them reused" in again.to_markdown() and "0 of them reused" in text
