"""``/v1/long_short_alignment`` routes: a tiny synthetic job runs and reports; bad bodies are 422; paper numbers."""

from __future__ import annotations

from core.jobs.lifecycle import execute_job


def test_synthetic_runs_and_reports(api_client):
    body = {"task": "length", "pe": "nope", "steps": 3, "eval_per_length": 10}
    r = api_client.post("/v1/long_short_alignment/synthetic", json=body)
    assert r.status_code == 201, r.text
    job_id = r.json()["id"]
    assert execute_job(job_id).status == "succeeded"
    rep = api_client.get(f"/v1/jobs/{job_id}/report").json()["body"]
    assert rep["data"]["params"]["task"] == "length" and set(rep["data"]["mse"]) >= {"1", "50"}


def test_lm_and_smollm2_are_queued_with_validated_bodies(api_client):
    r = api_client.post("/v1/long_short_alignment/lm", json={"variants": ["b1", "b2"], "stage_a_steps": 2})
    assert r.status_code == 201, r.text
    assert r.json()["method"] == "lsa.lm"
    r = api_client.post("/v1/long_short_alignment/smollm2", json={"n_samples": 4})
    assert r.status_code == 201 and r.json()["method"] == "lsa.smollm2"


def test_bad_bodies_are_422(api_client):
    for path, body in (
        ("synthetic", {"steps": 0}),
        ("synthetic", {"pe": "alibi"}),
        ("lm", {"l_train": 100_000}),
        ("lm", {"variants": ["b3"]}),
        ("lm", {"alphas": []}),
        ("smollm2", {"n_samples": 10_000}),
    ):
        r = api_client.post(f"/v1/long_short_alignment/{path}", json=body)
        assert r.status_code == 422, (path, body)


def test_paper_numbers(api_client):
    p = api_client.get("/v1/long_short_alignment/paper").json()
    assert p["table1_abs_r"] == {"misalign": 0.85, "train_loss": 0.62}
