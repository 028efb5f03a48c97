"""docs/results/sefe is rebuilt from the stored runs (``-o preset=stored``): its results.json is exactly what the
stored runs.json gives, and a change to a stored value changes a headline."""

import copy
import json
from pathlib import Path

import pytest

from core.evidence import Evidence
from methods.sefe.experiment import STORED_RUNS, stored_experiments
from methods.sefe.report import evidence

DOC = Path(__file__).resolve().parents[3] / "docs" / "results" / "sefe"


def _stored() -> dict:
    return json.loads(STORED_RUNS.read_text(encoding="utf-8"))


def test_the_docs_results_json_is_what_the_stored_runs_give():
    _, exps, _ = stored_experiments(_stored())
    fresh = evidence(exps).to_json()
    doc = json.loads((DOC / "results.json").read_text(encoding="utf-8"))
    assert doc["raw"] == json.loads(json.dumps(fresh["raw"]))
    assert doc["headlines"] == json.loads(json.dumps(fresh["headlines"]))
    assert Evidence.from_json(doc).recompute() == []


def test_a_changed_stored_seed_changes_the_verdicts():
    data = _stored()
    worse = copy.deepcopy(data)
    for run in worse["arms"]["asd"]["runs"]:  # ASD's final row no better than sequential's
        run["matrices"]["accuracy"][-1] = [0.0 for _ in run["matrices"]["accuracy"][-1]]
    claim = "ASD raises final accuracy (MFN) over sequential LoRA"
    verdict = {h.claim: h.result["verdict"] for h in evidence(stored_experiments(data)[1]).headlines}
    changed = {h.claim: h.result["verdict"] for h in evidence(stored_experiments(worse)[1]).headlines}
    assert verdict[claim] == "holds" and changed[claim] == "fails"


def test_zero_shot_shares_must_be_counts_of_the_test_items():
    data = _stored()
    assert stored_experiments(data)[2]["cancer"].accuracy == data["zero_shot"]["cancer"]["accuracy"]
    data["zero_shot"]["cancer"]["accuracy"] = 0.6543
    with pytest.raises(ValueError, match="not counts"):
        stored_experiments(data)
