"""Issue #27 items 5, 6, 7: bounded integers, authentication before the body, upload and idempotency edge cases."""

import asyncio
import io
import struct
import zlib

import pytest
from fastapi import HTTPException

from core.db.models import Job
from core.db.session import session_scope


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png(width: int, height: int, idat: bytes) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", idat) + _png_chunk(b"IEND", b"")


# --- item 5: integer query parameters are bounded -------------------------------------------------
@pytest.mark.parametrize("params", [{"offset": 9223372036854775808}, {"offset": 2**70}, {"limit": 2**64}])
def test_huge_integers_are_422_not_500(api_client, params):
    r = api_client.get("/v1/jobs", params=params)
    assert r.status_code == 422, r.text


def _unbounded_numbers(schema: dict) -> bool:
    if schema.get("type") in ("integer", "number") and "maximum" not in schema and "exclusiveMaximum" not in schema:
        return True
    return any(_unbounded_numbers(x) for k in ("anyOf", "oneOf", "allOf") for x in schema.get(k, []))


def test_every_numeric_query_and_path_parameter_of_every_route_is_bounded(api_client):
    schema = api_client.get("/openapi.json").json()
    unbounded = [
        (method, path, p["name"])
        for path, item in schema["paths"].items()
        for method, op in item.items()
        for p in op.get("parameters", [])
        if p.get("in") in ("query", "path") and _unbounded_numbers(p.get("schema", {}))
    ]
    assert unbounded == []


# --- item 6: the key is checked before the body is read -------------------------------------------
def test_no_key_and_malformed_json_is_401(api_client):
    api_client.headers.pop("Authorization")
    r = api_client.post("/v1/jobs", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"


def test_unauthenticated_body_is_never_read():
    from services.api.main import create_app

    app = create_app()
    reads = []

    async def receive():
        reads.append(1)
        return {"type": "http.request", "body": b"x" * 65536, "more_body": True}

    sent = []

    async def send(msg):
        sent.append(msg)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/factcheck",
        "raw_path": b"/v1/factcheck",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"multipart/form-data; boundary=xyz"), (b"host", b"t")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 401
    assert reads == []  # a 60 MB upload without a key costs the server nothing


# --- item 7 ---------------------------------------------------------------------------------------
def test_reusing_an_idempotency_key_with_other_params_is_409(api_client):
    body = {"method": "diag.sleep", "params": {"seconds": 1}, "idempotency_key": "reuse-409"}
    first = api_client.post("/v1/jobs", json=body)
    assert first.status_code == 201
    assert api_client.post("/v1/jobs", json=body).status_code == 200  # same request: the same job
    other = api_client.post("/v1/jobs", json={**body, "params": {"seconds": 2}})
    assert other.status_code == 409 and first.json()["id"] in other.json()["detail"]
    assert api_client.post("/v1/jobs", json={**body, "method": "llm.complete", "params": {}}).status_code in (409, 422)


def test_reusing_an_idempotency_key_with_other_params_in_a_batch_is_409(api_client):
    item = {"method": "diag.sleep", "params": {"seconds": 1}, "idempotency_key": "batch-409"}
    first = api_client.post("/v1/jobs:batch", json={"jobs": [item]}).json()["items"][0]
    assert first["status"] == 201
    again = api_client.post("/v1/jobs:batch", json={"jobs": [item, {**item, "params": {"seconds": 3}}]}).json()
    assert [i["status"] for i in again["items"]] == [200, 409]
    assert again["items"][0]["job"]["id"] == first["job"]["id"] and again["items"][1]["job"] is None


def test_oversize_body_without_content_length_is_413(api_client):
    def chunks():
        for _ in range(40):
            yield b"x" * 65536  # 2.6 MB > max_body_bytes, sent chunked (no Content-Length)

    before = _jobs()
    r = api_client.post("/v1/jobs", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413, r.text
    assert _jobs() == before


def _jobs() -> int:
    with session_scope() as s:
        return s.query(Job).count()


def test_png_with_valid_checksums_and_garbage_pixels_is_415():
    from services.api.uploads import validate_image_bytes

    junk = _png(64, 64, b"\x00garbage that is not zlib at all" * 8)
    with pytest.raises(HTTPException) as e:
        validate_image_bytes(junk)
    assert e.value.status_code == 415
    short = _png(64, 64, zlib.compress(b"\x00" * 10))  # valid zlib, far too few pixels
    with pytest.raises(HTTPException) as e:
        validate_image_bytes(short)
    assert e.value.status_code == 415


def test_decompression_bomb_is_413_and_pillows_limit_stays():
    from PIL import Image

    from agents.defame.media import store_image
    from services.api.uploads import validate_image_bytes

    limit = Image.MAX_IMAGE_PIXELS
    bomb = _png(30000, 30000, zlib.compress(b"\x00" * 1000))  # 900 Mpx: Pillow's own bomb error
    with pytest.raises(HTTPException) as e:
        validate_image_bytes(bomb)
    assert e.value.status_code == 413
    with pytest.raises(ValueError, match="too large"):
        store_image(bomb)
    assert Image.MAX_IMAGE_PIXELS == limit and limit is not None


def test_a_real_image_still_passes():
    from PIL import Image

    from services.api.uploads import validate_image_bytes

    buf = io.BytesIO()
    Image.new("RGB", (32, 16), (200, 10, 10)).save(buf, format="PNG")
    img = validate_image_bytes(buf.getvalue())
    assert (img.format, img.width, img.height) == ("PNG", 32, 16)


# --- item 8: the OpenAPI document states the errors, in the shape they are answered ----------------
def test_every_v1_operation_documents_its_errors_and_405_lists_every_method(api_client):
    schema = api_client.get("/openapi.json").json()
    for path, item in schema["paths"].items():
        if path.startswith("/v1/"):
            for op in item.values():
                assert {"401", "404", "409", "413", "415", "422"} <= set(op["responses"]), path
                assert op["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    r = api_client.post("/v1/jobs", json={"params": {}})
    assert r.status_code == 422 and isinstance(r.json()["detail"], str)
    assert api_client.options("/v1/jobs").headers["allow"] == "GET, POST"
    assert api_client.request("PUT", "/v1/jobs/abc").headers["allow"] == "DELETE, GET"


def test_invalid_utf8_in_a_multipart_claim_is_400_and_valid_text_still_works(api_client):
    before = _jobs()
    bad = api_client.post("/v1/factcheck", files={"claim": (None, b"caf\xe9 \xff\xfe claim")})
    assert bad.status_code == 400 and "UTF-8" in bad.json()["detail"], bad.text
    assert _jobs() == before
    ok = api_client.post("/v1/factcheck", files={"claim": (None, "café — ☕ claim".encode())})
    assert ok.status_code == 201, ok.text
    assert ok.json()["params"]["claim"] == "café — ☕ claim"


# --- the verified-key cache (issue #28: one database lookup per burst, not per request) -------------
def test_key_cache_skips_the_database_within_its_ttl_and_keeps_wrong_keys_out(api_client, api_key, monkeypatch):
    from core.db import crud
    from services.api import deps

    deps.forget_api_keys()
    calls = []
    real = crud.verify_api_key
    monkeypatch.setattr(crud, "verify_api_key", lambda s, *, key: calls.append(key) or real(s, key=key))
    for _ in range(5):
        assert api_client.get("/v1/jobs").status_code == 200
    assert len(calls) == 1  # the first request verified the key; the next four used the cache
    bad = {"Authorization": "Bearer pw_not-a-key"}
    for _ in range(3):
        assert api_client.get("/v1/jobs", headers=bad).status_code == 401
    assert len(calls) == 4  # a wrong key is never cached: each try asks the database


def test_revoked_key_stops_working_once_the_cache_expires(api_client, api_key, monkeypatch):
    from core.config import get_settings
    from core.db import crud
    from services.api import deps

    deps.forget_api_keys()
    monkeypatch.setattr(get_settings(), "api_key_cache_s", 0.3)
    assert api_client.get("/v1/jobs").status_code == 200
    with session_scope() as s:
        crud.revoke_api_key(s, key_id=crud.verify_api_key(s, key=api_key).id)
    import time

    time.sleep(0.4)
    r = api_client.get("/v1/jobs")
    assert r.status_code == 401 and r.json()["detail"] == "invalid or revoked API key"


def test_key_cache_off_asks_every_time(api_client, monkeypatch):
    from core.config import get_settings
    from core.db import crud
    from services.api import deps

    deps.forget_api_keys()
    monkeypatch.setattr(get_settings(), "api_key_cache_s", 0.0)
    calls = []
    real = crud.verify_api_key
    monkeypatch.setattr(crud, "verify_api_key", lambda s, *, key: calls.append(key) or real(s, key=key))
    for _ in range(3):
        assert api_client.get("/v1/jobs").status_code == 200
    assert len(calls) == 3
