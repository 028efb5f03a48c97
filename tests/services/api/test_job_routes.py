"""``POST /v1/<method>/<job>``: the routes generated from the params models (services/api/job_routes.py)."""

from __future__ import annotations

import io

from PIL import Image


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("L", (16, 16), 128).save(buf, format="PNG")
    return buf.getvalue()


def test_a_generated_route_submits_like_post_jobs(api_client):
    r = api_client.post("/v1/diag/sleep", json={"seconds": 0, "steps": 2})
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["method"] == "diag.sleep" and job["params"]["steps"] == 2 and job["status"] == "queued"
    # the same request through POST /v1/jobs stores the same validated params
    twin = api_client.post("/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 0, "steps": 2}}).json()
    assert twin["params"] == job["params"] and twin["queue"] == job["queue"]


def test_idempotency_key_as_header_or_query(api_client):
    first = api_client.post("/v1/diag/sleep", json={"seconds": 0}, headers={"Idempotency-Key": "gen-route-1"})
    assert first.status_code == 201
    again = api_client.post("/v1/diag/sleep", json={"seconds": 0}, headers={"Idempotency-Key": "gen-route-1"})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    by_query = api_client.post("/v1/diag/sleep", params={"idempotency_key": "gen-route-1"}, json={"seconds": 0})
    assert by_query.status_code == 200 and by_query.json()["id"] == first.json()["id"]
    # the key is shared with POST /v1/jobs: the same job, and other params are a conflict
    jobs = api_client.post(
        "/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 0}, "idempotency_key": "gen-route-1"}
    )
    assert jobs.status_code == 200 and jobs.json()["id"] == first.json()["id"]
    other = api_client.post("/v1/diag/sleep", json={"seconds": 1}, headers={"Idempotency-Key": "gen-route-1"})
    assert other.status_code == 409


def test_invalid_bodies_and_missing_keys(api_client):
    from fastapi.testclient import TestClient

    r = api_client.post("/v1/diag/sleep", json={"seconds": -1, "steps": 0})
    assert r.status_code == 422
    body = r.json()
    assert {tuple(e["loc"][1:]) for e in body["errors"]} == {("seconds",), ("steps",)}
    assert "seconds: " in body["detail"] and "steps: " in body["detail"]
    assert TestClient(api_client.app).post("/v1/diag/sleep", json={}).status_code == 401


def test_older_per_method_paths_are_the_same_route(api_client):
    for path in ("/v1/long_short_alignment/synthetic", "/v1/lsa/synthetic"):
        r = api_client.post(path, json={"steps": 5, "eval_per_length": 10})
        assert r.status_code == 201, (path, r.text)
        assert r.json()["method"] == "lsa.synthetic" and r.json()["params"]["steps"] == 5
    r = api_client.post("/v1/clinical/trace", json={"case_id": "case001", "mode": "direct"})
    assert r.status_code == 201 and r.json()["method"] == "clinical_got.case"


def test_json_and_multipart_share_an_upload_path(api_client):
    # JSON: the generated route (an image named by reference)
    r = api_client.post("/v1/rf/edit", json={"digit_index": 3, "source_label": "3", "target_label": "8"})
    assert r.status_code == 201, r.text
    assert r.json()["method"] == "rf.edit" and r.json()["params"]["digit_index"] == 3
    # multipart: the hand-written upload route still takes the file
    r = api_client.post(
        "/v1/rf/edit", files={"image": ("d.png", _png(), "image/png")}, data={"source_label": "3", "target_label": "8"}
    )
    assert r.status_code == 201, r.text
    assert len(r.json()["params"]["image_sha256"]) == 64 and r.json()["params"]["digit_index"] is None
    op = api_client.app.openapi()["paths"]["/v1/rf/edit"]["post"]
    assert set(op["requestBody"]["content"]) == {"application/json", "multipart/form-data"}


def test_a_synchronous_route_keeps_its_path_and_the_job_gets_job(api_client):
    r = api_client.post("/v1/lms3/select", json={"query": "2 + 3?", "generate": True})
    assert r.status_code == 422 and "run as a job" in r.text  # the synchronous route, unchanged
    r = api_client.post("/v1/lms3/select/job", json={"query": "2 + 3?", "generate": True, "max_new_tokens": 8})
    assert r.status_code == 201, r.text
    assert r.json()["method"] == "lms3.select" and r.json()["params"]["generate"] is True


def test_a_renamed_png_is_not_a_csv(api_client):
    r = api_client.post("/v1/sdr/fit", files={"table": ("table.csv", _png(), "text/csv")}, data={"response": "y"})
    assert r.status_code == 422
    assert r.json()["detail"] == "table.csv is not a CSV table: its content is a PNG image"
    assert "codec" not in r.text
