"""Per-method routes let ``device``/``amp`` through to the job, where routing decides the queue.

The generic routes are covered in tests/core/jobs/test_routing.py; here the hand-written upload
form of ``POST /v1/vlm/zeroshot`` (its fields come from ``ZeroShotParams``, device and amp included).
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from core.jobs.routing import NO_GPU_WORKER


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def sent(monkeypatch):
    from services.api import deps

    log: list = []
    monkeypatch.setattr(deps, "enqueue", log.append)
    return log


def _zeroshot(client, **fields):
    files = {"image": ("red.png", _png(), "image/png")}
    return client.post("/v1/vlm/zeroshot", files=files, data={"classnames": "red,blue", **fields})


def test_vlm_upload_form_takes_the_device(api_client, sent, settings, monkeypatch):
    monkeypatch.setattr(settings, "gpu_workers", False)
    r = _zeroshot(api_client, device="cuda")
    assert r.status_code == 422 and r.json()["detail"]["message"] == NO_GPU_WORKER and sent == []
    assert _zeroshot(api_client, device="tpu").status_code == 422
    plain = _zeroshot(api_client)
    assert plain.status_code == 201 and plain.json()["queue"] == "cpu"
    assert "device" not in sent[-1].params or sent[-1].params["device"] == "cpu"

    monkeypatch.setattr(settings, "gpu_workers", True)
    r = _zeroshot(api_client, device="auto", amp="bf16")
    assert r.status_code == 201, r.text
    assert r.json()["queue"] == "gpu" and sent[-1].params["device"] == "auto" and sent[-1].params["amp"] == "bf16"


def test_the_openapi_form_lists_the_device(api_client):
    spec = api_client.get("/openapi.json").json()
    op = spec["paths"]["/v1/vlm/zeroshot"]["post"]
    ref = op["requestBody"]["content"]["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[-1]
    body = spec["components"]["schemas"][ref]
    props = dict(body["properties"])  # the upload, and the job's fields (from its params model) through allOf
    for part in body.get("allOf", []):
        props |= spec["components"]["schemas"][part["$ref"].rsplit("/", 1)[-1]]["properties"]
    assert props["device"]["enum"] == ["cpu", "auto", "cuda"] and props["amp"]["enum"] == ["off", "bf16"]
