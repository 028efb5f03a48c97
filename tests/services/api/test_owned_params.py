"""Stored objects named in job params belong to the key that stored them (issue #48 part 1).

Uploads (by SHA-256), artifacts (by id), any4 checkpoints and server files (DEFAME images) may be named in
params only by their owner (or an admin key, or the operator); another key gets a 404, as for an object
that does not exist. Public data shipped with the project (the data directory) is anyone's. Evidence
documents a key adds are its own too: only it lists, deletes and searches them.
"""

from __future__ import annotations

import io
import uuid

import pytest
from fastapi.testclient import TestClient

from core.db import crud
from core.db.session import session_scope
from core.jobs.lifecycle import execute_job


def _key(scopes: str = "") -> tuple[str, str]:
    with session_scope() as s:
        row, plaintext = crud.create_api_key(s, name="owned", scopes=scopes)
        return row.id, plaintext


@pytest.fixture(scope="module")
def clients():
    from services.api.main import create_app

    app = create_app()
    out = {}
    for name, scopes in (("alice", ""), ("bob", ""), ("admin", "admin")):
        key_id, plaintext = _key(scopes)
        c = TestClient(app)
        c.headers["Authorization"] = f"Bearer {plaintext}"
        c.key_id = key_id
        out[name] = c
    yield out
    for c in out.values():
        c.close()


@pytest.fixture(scope="module", autouse=True)
def _method():
    from pydantic import BaseModel

    from core.jobs import Report, register_method, registry_snapshot

    class _P(BaseModel):
        pass

    def with_file(params: _P, progress) -> Report:
        r = Report(title="private")
        r.add_file("adapter.tar.gz", f"alice's adapter {uuid.uuid4()}".encode())
        return r

    with registry_snapshot():
        register_method("test.owned_file", params=_P)(with_file)
        yield


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (uuid.uuid4().int % 255, 10, 20)).save(buf, format="PNG")
    return buf.getvalue()


def _submit(client, method: str, params: dict) -> int:
    return client.post("/v1/jobs", json={"method": method, "params": params}).status_code


def test_an_upload_is_named_only_by_the_key_that_uploaded_it(clients):
    from core.artifacts import get_artifact_store

    alice, bob, admin = clients["alice"], clients["bob"], clients["admin"]
    r = alice.post("/v1/vlm/zeroshot", files={"image": ("a.png", _png(), "image/png")}, data={"classnames": "a,b"})
    assert r.status_code == 201, r.text
    sha = r.json()["params"]["image_sha256"]
    params = {"image_sha256": sha, "classnames": ["a", "b"]}
    assert _submit(bob, "vlm.zeroshot", params) == 404
    assert "no upload" in bob.post("/v1/jobs", json={"method": "vlm.zeroshot", "params": params}).text
    assert _submit(alice, "vlm.zeroshot", params) == 201
    assert _submit(admin, "vlm.zeroshot", params) == 201
    # bytes put into the store without an upload record (another process, a job) are nobody's to name
    stray = get_artifact_store().put_bytes(_png(), name="stray.png").sha256
    assert _submit(alice, "vlm.zeroshot", {**params, "image_sha256": stray}) == 404
    # the same bytes uploaded by bob are bob's too
    data = get_artifact_store().read(sha)
    r = bob.post("/v1/vlm/zeroshot", files={"image": ("b.png", data, "image/png")}, data={"classnames": "a,b"})
    assert r.status_code == 201 and _submit(bob, "vlm.zeroshot", params) == 201
    # a batch item naming another key's upload is a 404 item; the others are created
    body = {"jobs": [{"method": "vlm.zeroshot", "params": {**params, "image_sha256": stray}}, {"method": "diag.sleep"}]}
    items = alice.post("/v1/jobs:batch", json=body).json()["items"]
    assert [i["status"] for i in items] == [404, 201]


def test_artifacts_of_a_keys_jobs_are_its_own_to_name(clients):
    alice, bob = clients["alice"], clients["bob"]
    job = alice.post("/v1/jobs", json={"method": "test.owned_file", "params": {}}).json()
    assert execute_job(job["id"]).status == "succeeded"
    art = alice.get(f"/v1/jobs/{job['id']}/report").json()["body"]["artifacts"][0]
    with session_scope() as s:
        sha = crud.get_artifact(s, artifact_id=art["id"]).sha256
    adapter = {"sft_adapter": art["id"], "iterations": 1}
    assert _submit(bob, "pae.train", adapter) == 404  # by id
    assert _submit(alice, "pae.train", adapter) == 201
    assert _submit(bob, "vlm.zeroshot", {"image_sha256": sha}) == 404  # by digest
    assert _submit(alice, "vlm.zeroshot", {"image_sha256": sha}) == 201


def test_an_any4_checkpoint_belongs_to_the_key_whose_job_made_it(clients):
    from core.ownership import record_for_job

    alice, bob = clients["alice"], clients["bob"]
    job = alice.post("/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 0}}).json()
    ckpt = f"clean-llama-any4-{uuid.uuid4().hex[:8]}"
    record_for_job("any4-checkpoint", ckpt, job["id"])  # what any4.quantize does after saving
    assert _submit(bob, "any4.evaluate", {"checkpoint": ckpt}) == 404
    assert _submit(alice, "any4.evaluate", {"checkpoint": ckpt}) == 201


def test_a_stored_defame_image_is_its_uploaders(clients, settings):
    alice, bob = clients["alice"], clients["bob"]
    r = alice.post(
        "/v1/factcheck", data={"claim": "A bridge opened in 1937."}, files=[("images", ("x.png", _png(), "image/png"))]
    )
    assert r.status_code == 201, r.text
    path = r.json()["params"]["images"][0]
    claim = {"claim": "A bridge opened in 1937.", "images": [path]}
    assert _submit(bob, "defame.check", claim) == 404
    assert _submit(alice, "defame.check", claim) == 201


def test_public_data_is_anyones(clients, data_dir):
    files = sorted(p for p in data_dir.rglob("*.json") if p.is_file())
    if not files:
        pytest.skip("no dataset file in the data directory")
    assert _submit(clients["bob"], "defame.batch", {"path": str(files[0]), "limit": 1}) in (201, 422)


def test_evidence_documents_are_the_keys_own(clients):
    """A key's documents: listed and deleted by it only, searched by its fact-checks beside the shared corpus."""
    from agents.defame.tools.web import CorpusSearch
    from core import ownership
    from core.vectorstore import get_vectorstore

    alice, bob, admin = clients["alice"], clients["bob"], clients["admin"]
    corpus = f"iso-{uuid.uuid4().hex[:8]}"
    doc = ("note.txt", b"The Golden Gate Bridge opened to traffic in 1937.", "text/plain")
    (row,) = alice.post("/v1/evidence/documents", files=[("files", doc)], data={"corpus": corpus}).json()
    assert row["shared"] is False
    shared = ("shared.txt", b"Bridges carry roads over rivers and valleys.", "text/plain")
    admin.post("/v1/evidence/documents", files=[("files", shared)], data={"corpus": corpus})

    assert row["id"] in {d["id"] for d in alice.get("/v1/evidence/documents", params={"corpus": corpus}).json()}
    seen_by_bob = bob.get("/v1/evidence/documents", params={"corpus": corpus}).json()
    assert [d["shared"] for d in seen_by_bob] == [True] and row["id"] not in {d["id"] for d in seen_by_bob}
    assert bob.get("/v1/evidence", params={"corpus": corpus}).json()["chunks"] == 1
    assert alice.get("/v1/evidence", params={"corpus": corpus}).json()["chunks"] == 2
    assert bob.delete(f"/v1/evidence/documents/{row['id']}", params={"corpus": corpus}).status_code == 404
    assert bob.delete(f"/v1/evidence/documents/{seen_by_bob[0]['id']}", params={"corpus": corpus}).status_code == 404

    def found(owner: str) -> set[str]:
        search = CorpusSearch(get_vectorstore(), corpus, extra=(ownership.private_collection(corpus, owner),))
        return {s.title for s in search.search("When did the Golden Gate Bridge open?", k=5)}

    assert found(alice.key_id) == {"note.txt", "shared.txt"}
    assert found(bob.key_id) == {"shared.txt"}
    assert alice.delete(f"/v1/evidence/documents/{row['id']}", params={"corpus": corpus}).status_code == 200
    assert found(alice.key_id) == {"shared.txt"}
