"""``/v1/patch_scaling`` routes: a tiny sweep runs and reports; bad bodies are 422; the paper table."""

from __future__ import annotations

from core.jobs.lifecycle import execute_job


def test_sweep_runs_and_reports(api_client):
    body = {"backbones": ["vit"], "patches": [4, 8], "epochs": 1, "seeds": 1, "dispatch": "inline"}
    r = api_client.post("/v1/patch_scaling/sweep", json=body)
    assert r.status_code == 201, r.text
    job_id = r.json()["id"]
    assert execute_job(job_id).status == "succeeded"
    rep = api_client.get(f"/v1/jobs/{job_id}/report").json()["body"]
    assert [x["patch"] for x in rep["data"]["results"]] == [8, 4]
    assert any(a["name"] == "scaling.png" and a["id"] for a in rep["artifacts"])


def test_bad_bodies_are_422(api_client):
    for body in ({"patches": [16], "image_size": 8}, {"seeds": 0}, {"backbones": ["resnet"]}, {"unknown": 1}):
        r = api_client.post("/v1/patch_scaling/sweep", json=body)
        assert r.status_code == 422, body


def test_paper_numbers(api_client):
    rows = api_client.get("/v1/patch_scaling/paper").json()
    assert {"model": "Adventurer-Base", "patch": 1, "input": 224, "tokens": 50176, "top1": 84.6} in rows
