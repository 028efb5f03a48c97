"""``POST /v1/fourier_mamba/derain`` and ``/train``: uploads validated, bad input → 4xx with no job written."""

import hashlib
import io

import pytest
from PIL import Image

from core.db.models import Job
from core.db.session import session_scope


def _png(size=(24, 20)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (120, 80, 40)).save(buf, format="PNG")
    return buf.getvalue()


def _jobs() -> int:
    with session_scope() as s:
        return s.query(Job).filter(Job.method.like("fourier_mamba.%")).count()


def test_derain_upload_creates_a_job_on_the_stored_image(api_client):
    data = _png()
    r = api_client.post(
        "/v1/fourier_mamba/derain",
        files={"image": ("r.png", data, "image/png")},
        data={"add_rain": "H", "rain_seed": "7", "scan_order": "raster"},
    )
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["method"] == "fourier_mamba.derain" and job["queue"] == "cpu"
    with session_scope() as s:
        params = s.get(Job, job["id"]).params
    assert params["image_sha256"] == hashlib.sha256(data).hexdigest()
    assert (params["add_rain"], params["rain_seed"], params["scan_order"], params["sample"]) == ("H", 7, "raster", None)


@pytest.mark.parametrize(
    "payload,fields,status",
    [
        (b"not an image", {}, 415),
        (None, {"add_rain": "drizzle"}, 422),
        (None, {"scan_order": "spiral"}, 422),
    ],
)
def test_bad_derain_requests_write_no_job(api_client, payload, fields, status):
    before = _jobs()
    r = api_client.post(
        "/v1/fourier_mamba/derain", files={"image": ("x.png", payload or _png(), "image/png")}, data=fields
    )
    assert r.status_code == status, r.text
    assert _jobs() == before


def test_oversized_upload_is_rejected(api_client, settings):
    before = _jobs()
    big = b"\x00" * (settings.max_upload_bytes + 1)
    r = api_client.post("/v1/fourier_mamba/derain", files={"image": ("big.png", big, "image/png")})
    assert r.status_code == 413 and _jobs() == before


def test_train_goes_to_the_queue_its_device_names(api_client, monkeypatch):
    """Like every job: the ``device`` param decides (core.jobs.routing), not which queues the workers consume."""
    from core.config import get_settings

    r = api_client.post("/v1/fourier_mamba/train", json={"preset": "tiny", "steps": 3})
    assert r.status_code == 201, r.text
    assert r.json()["queue"] == "cpu" and r.json()["params"]["steps"] == 3
    monkeypatch.setattr(get_settings(), "worker_queues", "cpu,gpu")  # a worker on gpu does not pull CPU jobs over
    r = api_client.post("/v1/fourier_mamba/train", json={"preset": "tiny"})
    assert r.status_code == 201 and r.json()["queue"] == "cpu"
    before = _jobs()
    r = api_client.post("/v1/fourier_mamba/train", json={"preset": "tiny", "device": "cuda"})
    assert r.status_code == 422 and "GPU worker" in r.text and _jobs() == before  # no GPU worker declared
    monkeypatch.setattr(get_settings(), "gpu_workers", True)
    for device, queue in (("cuda", "gpu"), ("auto", "gpu"), ("cpu", "cpu")):
        r = api_client.post("/v1/fourier_mamba/train", json={"preset": "tiny", "device": device})
        assert r.status_code == 201 and r.json()["queue"] == queue, (device, r.text)
    before = _jobs()
    assert api_client.post("/v1/fourier_mamba/train", json={"preset": "huge"}).status_code == 422
    assert api_client.post("/v1/fourier_mamba/train", json={"steps": 0}).status_code == 422
    assert _jobs() == before


def test_routes_need_an_api_key(api_client):
    from fastapi.testclient import TestClient

    anon = TestClient(api_client.app)
    assert anon.post("/v1/fourier_mamba/train", json={}).status_code == 401
