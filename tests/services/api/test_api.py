"""The generic API: auth, methods, jobs, reports, artifacts, and bad input → 4xx with nothing written."""

import io

import pytest
from fastapi import HTTPException

from core.db.models import Job
from core.db.session import session_scope


def _job_count():
    with session_scope() as s:
        return s.query(Job).count()


def test_health_is_public_and_ready_checks_everything(api_client):
    anon = {"Authorization": ""}
    assert api_client.get("/healthz", headers=anon).json() == {"status": "ok"}
    ready = api_client.get("/readyz", headers=anon)
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"] == {"database": "ok", "broker": "ok", "vectorstore": "ok"}


def test_methods_list_with_schemas(api_client):
    methods = {m["name"]: m for m in api_client.get("/v1/methods").json()}
    assert methods["llm.complete"]["params_schema"]["properties"]["prompts"]["type"] == "array"
    assert api_client.get("/v1/methods/diag.sleep").json()["queue"] == "cpu"
    assert api_client.get("/v1/methods/nope").status_code == 404


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}])
def test_every_v1_route_needs_a_valid_key(api_client, headers):
    api_client.headers.pop("Authorization")
    for method, path in [
        ("get", "/v1/methods"),
        ("get", "/v1/jobs"),
        ("get", "/v1/jobs/x"),
        ("delete", "/v1/jobs/x"),
        ("get", "/v1/artifacts/x"),
    ]:
        assert getattr(api_client, method)(path, headers=headers).status_code == 401, path
    before = _job_count()
    r = api_client.post("/v1/jobs", json={"method": "diag.sleep"}, headers=headers)
    assert r.status_code == 401 and _job_count() == before


def test_submit_is_idempotent_and_cancellable(api_client):
    body = {"method": "diag.sleep", "params": {"seconds": 1}, "idempotency_key": "same-key-1"}
    first = api_client.post("/v1/jobs", json=body)
    assert first.status_code == 201, first.text
    again = api_client.post("/v1/jobs", json=body)
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    jid = first.json()["id"]
    assert api_client.get(f"/v1/jobs/{jid}").json()["status"] == "queued"
    assert api_client.get(f"/v1/jobs/{jid}/report").status_code == 409
    assert api_client.delete(f"/v1/jobs/{jid}").json()["status"] == "cancelled"
    assert any(j["id"] == jid for j in api_client.get("/v1/jobs", params={"method": "diag.sleep"}).json())


@pytest.mark.parametrize(
    "body,status,needle",
    [
        ({"method": "nope.x"}, 404, "unknown method"),
        ({"method": "diag.sleep", "params": {"seconds": -1}}, 422, "seconds"),
        ({"method": "diag.sleep", "params": {"steps": "many"}}, 422, "steps"),
        ({"method": "llm.complete", "params": {"prompts": []}}, 422, "prompts"),
        ({"method": "diag.sleep", "extra": 1}, 422, "extra"),
        ({"params": {}}, 422, "method"),
    ],
)
def test_bad_input_is_4xx_and_writes_nothing(api_client, body, status, needle):
    before = _job_count()
    r = api_client.post("/v1/jobs", json=body)
    assert r.status_code == status, r.text
    assert needle in str(r.json()["detail"])
    assert _job_count() == before


def test_oversized_and_malformed_bodies(api_client):
    before = _job_count()
    big = {"method": "diag.sleep", "params": {"message": "a" * 3_000_000}}
    assert api_client.post("/v1/jobs", json=big).status_code == 413
    r = api_client.post("/v1/jobs", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert api_client.get("/v1/jobs", params={"limit": 100000}).status_code == 422
    assert _job_count() == before


def test_report_and_artifact_of_a_finished_job(api_client, api_key):
    from core.db import crud
    from core.jobs.lifecycle import run_inline

    with session_scope() as s:
        owner = crud.verify_api_key(s, key=api_key).id  # a job is visible to the key that owns it
    job_id, out = run_inline("diag.sleep", {"seconds": 0, "steps": 1}, owner=owner)
    assert out.status == "succeeded"
    rep = api_client.get(f"/v1/jobs/{job_id}/report").json()
    assert rep["title"] == "Diagnostic sleep" and "| steps | 1 |" in rep["markdown"]
    assert api_client.get("/v1/artifacts/doesnotexist").status_code == 404


def test_image_upload_validation():
    from PIL import Image

    from services.api.uploads import validate_image_bytes

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buf, format="PNG")
    img = validate_image_bytes(buf.getvalue(), "ok.png")
    assert (img.format, img.width, img.height) == ("PNG", 8, 8)
    with pytest.raises(HTTPException) as exc:
        validate_image_bytes(b"%PDF-1.4 not an image", "doc.pdf")
    assert exc.value.status_code == 415
    huge = io.BytesIO()
    Image.new("L", (8000, 6000)).save(huge, format="PNG")
    with pytest.raises(HTTPException) as exc:
        validate_image_bytes(huge.getvalue(), "huge.png")
    assert exc.value.status_code == 413
