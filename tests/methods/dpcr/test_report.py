"""The DPCR report's headlines: paired by seed from the stored per-seed accuracies, verdicts that can go either way."""

import json
from pathlib import Path

import numpy as np

from core.evidence import Evidence
from methods.continual.harness import ExperimentResult, RunResult
from methods.dpcr.report import evidence

DOCS = Path(__file__).resolve().parents[3] / "docs" / "results" / "dpcr"


def _exp(af: dict[str, list[float]], shift: dict[str, list[float]]) -> ExperimentResult:
    """Two-task runs whose final seen accuracy (A_f) per head and seed is ``af``; final shift errors ``shift``."""
    heads = list(af)
    runs = []
    for i in range(len(af["dpcr"])):
        mats = {h: [[1.0, float("nan")], [af[h][i], af[h][i]]] for h in heads}
        diag = [{}, {f"shift_rel.{h}": shift[h][i] for h in shift}]
        runs.append(RunResult(seed=i, class_order=list(range(4)), sizes=[10, 10], matrices=mats, diagnostics=diag))
    return ExperimentResult("dpcr", heads, "digits", 2, None, {}, runs)


def test_verdicts_follow_the_paired_seeds():
    base = {"lwf": [0.4, 0.45, 0.42], "ridge_uncal": [0.3, 0.35, 0.33], "oracle": [0.95, 0.94, 0.96]}
    shift = {"dpcr": [0.2, 0.25, 0.22], "ridge_uncal": [0.4, 0.41, 0.39]}
    below = _exp({**base, "tssp": [0.7, 0.72, 0.71], "dpcr": [0.6, 0.63, 0.61]}, shift)
    mixed = _exp({**base, "tssp": [0.7, 0.72, 0.71], "dpcr": [0.75, 0.65, 0.71]}, shift)
    ev = evidence({"full": below, "spc32": mixed})
    got = {h.claim: h.result["verdict"] for h in ev.headlines}
    assert got["all samples: DPCR ≥ TSSP-only (A_f)"] == "fails"
    assert got["32/class: DPCR ≥ TSSP-only (A_f)"] == "not resolved"
    assert got["all samples: TSSP-only ≥ uncalibrated ridge (A_f)"] == "holds"
    assert got["all samples: DPCR's final prototype-shift error below no calibration"] == "holds"
    assert Evidence.from_json(json.loads(json.dumps(ev.to_json()))).recompute() == []


def test_the_docs_results_json_is_the_stored_runs_evidence():
    """docs/results/dpcr/results.json was built from the stored full.json / spc32.json: the same numbers."""

    def load(name: str) -> ExperimentResult:
        d = json.loads((DOCS / f"{name}.json").read_text())
        d.pop("aggregate")
        d["runs"] = [RunResult(**r) for r in d["runs"]]
        return ExperimentResult(**d)

    stored = Evidence.load(DOCS / "results.json")
    fresh = evidence({k: load(k) for k in ("full", "spc32")})
    assert [h.claim for h in stored.headlines] == [h.claim for h in fresh.headlines]
    for a, b in zip(stored.headlines, fresh.headlines, strict=True):
        assert a.result["verdict"] == b.result["verdict"]
        assert np.isclose(a.result["estimate"], b.result["estimate"])


def test_the_reproducer_opens_with_the_headlines_and_writes_results_json():
    from core.jobs import null_context
    from methods.dpcr.experiment import run_reproduction

    report = run_reproduction(null_context(), seeds=2, quick=True)
    assert report.sections[0].title.startswith("Summary")
    data = json.loads(report.pending_files()["results.json"])
    assert len(data["raw"]["full"]["dpcr"]["A_f"]) == 2 and Evidence.from_json(data).recompute() == []
