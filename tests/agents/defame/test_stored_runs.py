"""The results document rebuilt from the stored runs' per-claim predictions (issue #49; no LLM call)."""

import json
import shutil
from pathlib import Path

import pytest

from agents.defame.experiment import stored_run, stored_runs
from agents.defame.report import stored_runs_evidence, stored_runs_report
from core.evidence import Evidence

RUNS = Path(__file__).resolve().parents[3] / "docs" / "results" / "defame"


def test_every_stored_run_parses_and_matches_its_predictions_file():
    runs = stored_runs(RUNS)
    assert len(runs) == 8 and all(len(r["gold"]) == len(r["defame"]) == len(r["baseline"]) for r in runs)
    ev = stored_runs_evidence(runs)
    assert len(ev.headlines) == 7  # the superseded 20-claim calibrated run is kept, not claimed
    assert Evidence.from_json(ev.to_json()).recompute() == []


def test_a_report_that_disagrees_with_its_predictions_file_is_refused(tmp_path):
    shutil.copy(RUNS / "issue-1.5b.md", tmp_path / "issue-1.5b.md")
    shutil.copytree(RUNS / "issue-1.5b", tmp_path / "issue-1.5b")
    stored_run(tmp_path, "issue-1.5b")  # as stored: consistent
    path = tmp_path / "issue-1.5b" / "averitec_predictions.json"
    preds = json.loads(path.read_text())
    preds[3]["label"] = "Supported" if preds[3]["label"] != "Supported" else "Refuted"
    path.write_text(json.dumps(preds))
    with pytest.raises(ValueError, match="differ from averitec_predictions.json at claims"):
        stored_run(tmp_path, "issue-1.5b")


def _run(key: str, defame: list[str], baseline: list[str], gold: list[str]) -> dict:
    return {
        "key": key,
        "model": "local/qwen2.5-coder-1.5b-instruct",
        "configuration": f"1.5B, {key}",
        "superseded_by": None,
        "ids": [str(i) for i in range(len(gold))],
        "gold": gold,
        "defame": defame,
        "baseline": baseline,
        "invocation_min": 1.0,
        "llm_stage_min": 2.0,
        "retrieval": {},
    }


def test_verdicts_follow_the_paired_interval_and_the_target_is_read_from_it():
    gold = ["Refuted"] * 24 + ["Supported"] * 16
    good = _run("good", gold[:], ["Refuted"] * 40, gold)  # right everywhere; the baseline is the majority class
    bad = _run("bad", ["Not Enough Evidence"] * 40, ["Refuted"] * 40, gold)
    rep = stored_runs_report([good, bad], command="paperworks reproduce defame -o preset=summary")
    ev = stored_runs_evidence([good, bad])
    by = {h.claim.split(" — ")[1]: h.result["verdict"] for h in ev.headlines}
    assert by == {"1.5B, good": "holds", "1.5B, bad": "fails"}
    assert "met by: 1.5B, good" in rep.summary and "fails** (paired interval below 0) in 1 of 2" in rep.summary
