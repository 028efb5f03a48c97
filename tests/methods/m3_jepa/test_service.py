"""The jobs' bodies (methods.m3_jepa.experiment) with the frozen encoders replaced by synthetic features (tests/methods/m3_jepa/fakes.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.jobs import null_context
from tests.methods.m3_jepa.fakes import install


def test_retrieve_trains_a_missing_model_first(monkeypatch, tmp_path):
    """A cold cache: the model is trained (with gradients) before the look-up (which runs without them)."""
    from methods.m3_jepa.experiment import retrieve

    install(monkeypatch, tmp_path)
    out = retrieve("a bold seven leaning to the left", 3, "m3_jepa", 0, 1)
    assert [h["rank"] for h in out["hits"]] == [1, 2, 3]
    assert out["routing"] and len(list(tmp_path.rglob("*.pt"))) == 1  # trained once, cached in the temporary folder
    again = retrieve("a bold seven leaning to the left", 3, "m3_jepa", 0, 1)
    assert [h["test_index"] for h in again["hits"]] == [h["test_index"] for h in out["hits"]]


@pytest.mark.parametrize(("device", "amp"), [("cpu", "off"), ("cuda", "bf16")])
def test_study_sub_jobs_carry_the_device_and_precision(monkeypatch, device, amp):
    """Fan-out: every (variant, seed) sub-job gets the study's device and amp, so it is routed to the same queue."""
    from core.db import crud
    from core.jobs import dispatch
    from methods.m3_jepa import experiment
    from methods.m3_jepa.jobs import StudyParams

    sent: list[dict] = []

    def enqueue(method, params, **_kw):
        sent.append({"method": method, **params})
        return f"job-{len(sent)}"

    monkeypatch.setattr(dispatch, "use_jobs", lambda *_a: True)
    monkeypatch.setattr(dispatch, "enqueue", enqueue)
    monkeypatch.setattr(dispatch, "wait", lambda ids, **_kw: None)
    monkeypatch.setattr(
        crud, "get_report_for_job", lambda s, job_id: SimpleNamespace(body={"data": {"result": job_id}})
    )
    params = StudyParams(variants=["m3_jepa", "mlp"], seeds=2, epochs=1, device=device, amp=amp, dispatch="jobs")
    results = experiment.run_all(params, null_context())
    assert results == ["job-1", "job-2", "job-3", "job-4"]
    assert {(p["variant"], p["seed"]) for p in sent} == {(v, s) for v in ("m3_jepa", "mlp") for s in (0, 1)}
    assert all(p["method"] == "m3_jepa.train" and p["device"] == device and p["amp"] == amp for p in sent)
