"""The jobs: a case trace, a benchmark arm (inline and fanned out to workers), the reproducer, the tables."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from core.evidence import Evidence, table_in
from core.jobs import get_reproducer, null_context


def test_case_job_returns_the_trace(cgot_model):
    from core.jobs.lifecycle import run_inline

    job_id, outcome = run_inline("clinical_got.case", {"case_id": "case002", "model": cgot_model, "n_cases": 5})
    assert outcome.status == "succeeded", outcome
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        data = crud.get_report_for_job(s, job_id=job_id).body["data"]
    assert set(data["answers"]) == {"n1", "n2", "n2_5", "n3", "n4", "n5"}
    assert "n3 -> n4" in data["dot"] and len(data["triples"]) == 10


def test_run_job_fans_cases_out_and_stores_the_tables(cgot_model):
    from core.db.session import session_scope
    from core.jobs.dispatch import register_sender
    from core.jobs.lifecycle import execute_job, run_inline
    from methods.clinical_got.models import ClinicalCase, ClinicalMetric, ClinicalNodeAnswer, ClinicalQaItem

    sent = []

    def send(job):
        sent.append(job.method)
        execute_job(job.id)

    previous = register_sender(send)
    try:
        _, outcome = run_inline("clinical_got.run", {"model": cgot_model, "n_cases": 2, "fan_out": "jobs"})
    finally:
        register_sender(previous)
    assert outcome.status == "succeeded", outcome
    assert sent == ["clinical_got.case"] * 2
    with session_scope() as s:
        run_id = s.scalar(select(ClinicalMetric.run_id).where(ClinicalMetric.model == cgot_model))
        assert run_id
        answers = s.scalar(select(func.count()).where(ClinicalNodeAnswer.run_id == run_id))
        assert answers == 2 * 6
        metric = s.scalar(
            select(ClinicalMetric.value).where(
                ClinicalMetric.run_id == run_id, ClinicalMetric.task == "2", ClinicalMetric.name == "precision"
            )
        )
        assert metric is not None and 0.0 <= metric <= 1.0
        assert s.scalar(select(func.count()).select_from(ClinicalCase)) >= 2
        assert s.scalar(select(func.count()).select_from(ClinicalQaItem)) >= 12


def test_reproducer_tiny_with_a_scripted_model(cgot_model, tmp_path):
    path = get_reproducer("clinical_got").run(
        tmp_path, null_context(), {"preset": "tiny", "models": [cgot_model, "local/no-such-model"]}
    )
    text = path.read_text()
    assert "## Reading" in text and "## What was shrunk" in text and "synthetic stand-in" in text
    assert "+15" in text and "local/no-such-model" in text  # paper's gain beside ours; the absent model is named
    arms = json.loads((tmp_path / "clinical_got" / "metrics.json").read_text())
    names = [a["arm"] for a in arms]
    assert names == ["direct", "cgot", "cgot-oracle-upstream", "oracle-all"]
    oracle = arms[-1]["metrics"]
    assert oracle["task1"]["accuracy"] == oracle["task3"]["accuracy"] == 1.0
    for a in arms:  # all six tasks reported for every arm
        assert {"task1", "task2", "task2_5", "task3", "task4", "task5"} <= set(a["metrics"])
    # issue #49: results.json holds the per-case values and the headlines the doc's table is rendered from
    ev = Evidence.load(tmp_path / "clinical_got" / "results.json")
    assert ev.recompute() == [] and table_in(text) == ev.table()
    short = cgot_model.split("/")[-1]
    m = ev.raw["models"][short]
    n = len(m["case_ids"])
    acc = {a: arms[i]["metrics"]["task4"]["accuracy"] for i, a in enumerate(names) if a != "oracle-all"}
    gain = next(h for h in ev.headlines if h.claim.startswith("CGoT raises"))
    assert gain.result["n"] == n and gain.result["estimate"] == pytest.approx(acc["cgot"] - acc["direct"])
    from agents.clinical_got.report import _GAIN_READS

    assert f"the paired difference {_GAIN_READS[gain.result['verdict']]}" in text  # the Reading states the verdict
    vs_maj = next(h for h in ev.headlines if "majority class" in h.claim)
    maj = sum(m["majority_correct"]) / n
    assert vs_maj.result["estimate"] == pytest.approx(acc["cgot"] - maj)
    assert f"{maj:.3f}" in vs_maj.context
    for case_id in m["case_ids"]:  # each case's node answers, per arm, with the truth
        case = ev.raw["cases"][case_id]
        assert set(case["answers"][short]) == {"direct", "cgot", "cgot-oracle-upstream"}
        assert case["answers"][short]["cgot"]["n4"]["answer"].startswith("[ans]:")
        assert case["truth"]["outcome"] in (0, 1)
    assert "majority class" in text.split("\n")[2] and "paired bootstrap" in text.split("\n")[2]


def test_headlines_read_a_constant_answer_against_the_majority_class():
    """The 135M's CGoT answered "1" on every case: on 48 cases, below a majority class of 0s that is a failure (paired
    bootstrap), and the difference from a direct arm right on 8 cases more is not a gain."""
    from types import SimpleNamespace

    from agents.clinical_got.experiment import Arm
    from agents.clinical_got.report import evidence

    outcomes = [0] * 32 + [1] * 16
    direct_answers = [1] * 24 + [0] * 8 + [1] * 16  # right on 8 of the 0s and all the 1s

    def arm(name, answers):
        rows = [
            {"case_id": f"case{i:03d}", "truth": {"outcome": o}, "parsed": {"n4": a}, "answers": {}}
            for i, (o, a) in enumerate(zip(outcomes, answers, strict=True))
        ]
        return SimpleNamespace(
            arm=Arm(name, "cgot", None),  # type: ignore[arg-type]
            model="local/tiny",
            rows=rows,
            metrics={
                "task4": {"balanced_accuracy": 0.5},
                "task1": {"accuracy": 0},
                "task2": {"f1": 0},
                "task3": {"accuracy": 0},
            },
            baselines={"bayes": 0.8},
        )

    ev = evidence([arm("direct", direct_answers), arm("cgot", [1] * 48)])
    res = {h.claim.split(" (")[0]: h.result for h in ev.headlines}
    assert res["CGoT's outcome accuracy beats the majority class"]["verdict"] == "fails"
    assert res["CGoT's outcome accuracy beats the majority class"]["estimate"] == pytest.approx(16 / 48 - 32 / 48)
    gain = res["CGoT raises 2-year outcome accuracy over the direct question"]
    assert gain["estimate"] == pytest.approx(16 / 48 - 24 / 48) and gain["verdict"] in ("fails", "not resolved")
