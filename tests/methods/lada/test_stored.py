"""docs/results/lada's results.json is what its stored lada.json (every run's matrices) gives."""

import copy
import json
from pathlib import Path

from core.evidence import Evidence
from methods.lada.report import stored_evidence

DOC = Path(__file__).resolve().parents[3] / "docs" / "results" / "lada"


def test_the_docs_results_json_is_what_the_stored_runs_give():
    data = json.loads((DOC / "lada.json").read_text(encoding="utf-8"))
    doc = json.loads((DOC / "results.json").read_text(encoding="utf-8"))
    fresh = json.loads(json.dumps(stored_evidence(data).to_json()))
    assert doc["raw"] == fresh["raw"] and doc["headlines"] == fresh["headlines"]
    assert Evidence.from_json(doc).recompute() == []


def test_a_changed_stored_run_changes_a_verdict():
    data = json.loads((DOC / "lada.json").read_text(encoding="utf-8"))
    claim = "The memory units help (Last: LADA vs BF + DPT)"
    before = {h.claim: h.result["verdict"] for h in stored_evidence(data).headlines}[claim]
    worse = copy.deepcopy(data)
    for run, ref in zip(worse["lada"]["runs"], worse["bf_dpt"]["runs"], strict=True):
        last = ref["matrices"]["lada"][-1]
        run["matrices"]["lada"][-1] = [x - 0.2 for x in last]  # LADA's final row 20 points below BF + DPT's
    after = {h.claim: h.result["verdict"] for h in stored_evidence(worse).headlines}[claim]
    assert before == "holds" and after == "fails"
