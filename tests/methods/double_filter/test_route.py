"""``/v1/double_filter`` routes: the patch filter runs and reports; bad bodies are 422; another key's job is hidden."""

from __future__ import annotations

from core.jobs.lifecycle import execute_job


def test_patches_route_runs_and_reports(api_client):
    r = api_client.post("/v1/double_filter/patches", json={"backbone": "test", "count": 2, "rho": 0.25})
    assert r.status_code == 201, r.text
    job_id = r.json()["id"]
    assert execute_job(job_id).status == "succeeded"
    rep = api_client.get(f"/v1/jobs/{job_id}/report").json()["body"]
    assert rep["metrics"]["kept"] == 4 and len(rep["data"]["keep"]) == 2
    assert any(a["name"] == "kept_patches.png" and a["id"] for a in rep["artifacts"])


def test_bad_bodies_are_422(api_client):
    for path, body in (
        ("/v1/double_filter/patches", {"rho": 0}),
        ("/v1/double_filter/patches", {"count": 11}),
        ("/v1/double_filter/patches", {"detector": "yolo"}),
        ("/v1/double_filter/experiment", {"seeds": 11}),
        ("/v1/double_filter/experiment", {"tasks": ["captioning"]}),
        ("/v1/double_filter/experiment", {"steps": 10**6}),
        ("/v1/double_filter/experiment", {"unknown": 1}),
    ):
        r = api_client.post(path, json=body)
        assert r.status_code == 422, (path, body)


def test_paper_numbers(api_client):
    rows = api_client.get("/v1/double_filter/paper").json()
    assert {"model": "METER", "task": "VQAv2", "quantity": "GFLOPs saved", "reported": "up to 21.18"} in rows
