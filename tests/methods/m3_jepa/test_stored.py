"""docs/results/m3_jepa is rebuilt from the stored runs (``-o preset=stored``): the rebuild trains nothing and states
the same headlines as the study that made the runs; the doc's results.json is what its runs.json gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.evidence import Evidence
from core.jobs import null_context
from tests.methods.m3_jepa.fakes import install

DOC = Path(__file__).resolve().parents[3] / "docs" / "results" / "m3_jepa"


def test_the_rebuild_from_stored_runs_trains_nothing_and_states_the_studys_headlines(monkeypatch, tmp_path):
    from methods.m3_jepa import experiment, train
    from methods.m3_jepa.jobs import StudyParams

    install(monkeypatch, tmp_path)
    params = StudyParams(variants=["m3_jepa", "mlp", "no_reg"], seeds=2, epochs=2, patience=0, dispatch="inline")
    study = experiment.run_study(params, null_context())
    runs = [{k: v for k, v in r.items() if k != "reused"} for r in study.data["results"]]

    def no_training(*a, **k):
        raise AssertionError("the rebuild trained a model")

    monkeypatch.setattr(train, "run", no_training)
    rebuilt = experiment.stored_study(params, runs, null_context())
    a, b = (Evidence.from_json(json.loads(r._pending["results.json"])) for r in (study, rebuilt))
    assert b.recompute() == [] and b.raw["runs"] == a.raw["runs"]
    assert [h.result for h in b.headlines] == [h.result for h in a.headlines]
    assert "Rebuilt from the stored per-seed values" in rebuilt.to_markdown()
    with pytest.raises(ValueError, match="not 2 seeds"):
        experiment.stored_study(params, runs[:-1], null_context())


def test_the_docs_results_json_is_what_the_stored_runs_give():
    from methods.m3_jepa.experiment import STORED_RUNS
    from methods.m3_jepa.report import evidence, raw_values

    doc = json.loads((DOC / "results.json").read_text(encoding="utf-8"))
    runs = json.loads(STORED_RUNS.read_text(encoding="utf-8"))
    raw = raw_values(runs, [], round(1 / doc["raw"]["chance_r1"]), doc["raw"]["reference"])
    assert doc["raw"] == json.loads(json.dumps(raw))
    fresh = evidence(raw, doc["options"]["epochs"], doc["options"]["long_epochs"])
    assert doc["headlines"] == json.loads(json.dumps(fresh.to_json()["headlines"]))
