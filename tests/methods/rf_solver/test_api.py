"""``POST /v1/rf/edit`` and ``/v1/rf/reconstruct``: uploads validated, bad input → 4xx with no job written."""

import hashlib
import io

import pytest
from PIL import Image

from core.db.models import Job
from core.db.session import session_scope


def _png(size=(20, 20), mode="RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size).save(buf, format="PNG")
    return buf.getvalue()


def _jobs() -> int:
    with session_scope() as s:
        return s.query(Job).filter(Job.method.like("rf.%")).count()


FIELDS = {"source_label": "3", "target_label": "8", "steps": "15", "inject": "2"}


def test_edit_upload_creates_a_job_referencing_the_stored_image(api_client):
    data = _png()
    r = api_client.post("/v1/rf/edit", files={"image": ("d.png", data, "image/png")}, data=FIELDS)
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["method"] == "rf.edit"
    with session_scope() as s:
        params = s.get(Job, job["id"]).params
    assert params["image_sha256"] == hashlib.sha256(data).hexdigest()
    assert (params["steps"], params["inject"], params["source_label"]) == (15, 2, "3")


@pytest.mark.parametrize(
    "payload,status",
    [
        (b"this is not an image at all", 415),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, 415),  # truncated PNG header
    ],
)
def test_non_images_are_rejected(api_client, payload, status):
    before = _jobs()
    r = api_client.post("/v1/rf/edit", files={"image": ("x.png", payload, "image/png")}, data=FIELDS)
    assert r.status_code == status, r.text
    assert _jobs() == before


def test_oversized_upload_is_rejected(api_client, settings):
    before = _jobs()
    big = b"\x00" * (settings.max_upload_bytes + 1)
    r = api_client.post("/v1/rf/edit", files={"image": ("big.png", big, "image/png")}, data=FIELDS)
    assert r.status_code == 413
    assert _jobs() == before


def test_decompression_bomb_is_rejected(api_client, settings):
    side = int(settings.max_image_pixels**0.5) + 100
    r = api_client.post(
        "/v1/rf/reconstruct", files={"image": ("bomb.png", _png((side, side), "1"), "image/png")}, data={"label": "3"}
    )
    assert r.status_code == 413, r.text


@pytest.mark.parametrize(
    "fields",
    [
        {**FIELDS, "inject": "20"},  # inject > steps
        {**FIELDS, "target_label": "flower"},  # labels of two different models
        {**FIELDS, "order": "5"},
        {**FIELDS, "steps": "abc"},
    ],
)
def test_bad_fields_are_422(api_client, fields):
    before = _jobs()
    r = api_client.post("/v1/rf/edit", files={"image": ("d.png", _png(), "image/png")}, data=fields)
    assert r.status_code == 422, r.text
    assert _jobs() == before


def test_reconstruct_parses_nfes_and_needs_a_key(api_client):
    r = api_client.post(
        "/v1/rf/reconstruct", files={"image": ("d.png", _png(), "image/png")}, data={"label": "china", "nfes": "4, 10"}
    )
    assert r.status_code == 201, r.text
    assert (
        api_client.post(
            "/v1/rf/reconstruct", files={"image": ("d.png", _png(), "image/png")}, data={"label": "3", "nfes": "4,x"}
        ).status_code
        == 422
    )
    api_client.headers.pop("Authorization")
    assert (
        api_client.post("/v1/rf/edit", files={"image": ("d.png", _png(), "image/png")}, data=FIELDS).status_code == 401
    )
