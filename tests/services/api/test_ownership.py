"""Per-key isolation (issue #27 item 2): jobs, reports and artifacts belong to the key that made them.

Two ordinary keys and an admin key against every route that names a job or an artifact: the
other key gets a 404 (as for a job that does not exist) and cannot cancel; the admin sees all.
"""

import pytest
from fastapi.testclient import TestClient

from core.db import crud
from core.db.models import Job
from core.db.session import session_scope
from core.jobs.lifecycle import execute_job


def _key(scopes: str = "") -> str:
    with session_scope() as s:
        _, plaintext = crud.create_api_key(s, name="isolation", scopes=scopes)
    return plaintext


@pytest.fixture(scope="module")
def clients():
    from services.api.main import create_app

    app = create_app()
    out = {}
    for name, scopes in (("alice", ""), ("bob", ""), ("admin", "admin")):
        c = TestClient(app)
        c.headers["Authorization"] = f"Bearer {_key(scopes)}"
        out[name] = c
    yield out
    for c in out.values():
        c.close()


def _finished_job_with_artifact(client) -> tuple[str, str]:
    """A job submitted through the API by ``client``, run to completion here; returns (job id, artifact id)."""
    r = client.post("/v1/jobs", json={"method": "test.with_file", "params": {}})
    assert r.status_code == 201, r.text
    job_id = r.json()["id"]
    assert execute_job(job_id).status == "succeeded"
    report = client.get(f"/v1/jobs/{job_id}/report").json()
    return job_id, report["body"]["artifacts"][0]["id"]


@pytest.fixture(scope="module", autouse=True)
def _method():
    from pydantic import BaseModel

    from core.jobs import Report, register_method, registry_snapshot

    class _P(BaseModel):
        pass

    def with_file(params: _P, progress) -> Report:
        r = Report(title="private")
        r.add_file("secret.txt", "alice's data")
        return r

    with registry_snapshot():
        register_method("test.with_file")(with_file)
        yield


def test_other_keys_get_404_on_every_job_route_and_the_admin_sees_all(clients):
    alice, bob, admin = clients["alice"], clients["bob"], clients["admin"]
    job_id, art_id = _finished_job_with_artifact(alice)
    queued = alice.post("/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 5}}).json()["id"]

    for path in (
        f"/v1/jobs/{job_id}",
        f"/v1/jobs/{job_id}?wait=0.1",
        f"/v1/jobs/{job_id}/report",
        f"/v1/jobs/{job_id}/events?timeout=0.5",
        f"/v1/artifacts/{art_id}",
    ):
        assert alice.get(path).status_code == 200, path
        assert bob.get(path).status_code == 404, path
        assert admin.get(path).status_code == 200, path
    assert alice.get(f"/v1/artifacts/{art_id}").content == b"alice's data"
    assert b"alice" not in bob.get(f"/v1/artifacts/{art_id}").content

    # listing: bob sees none of alice's jobs (nor their params); the admin sees them
    assert not {job_id, queued} & {j["id"] for j in bob.get("/v1/jobs", params={"limit": 500}).json()}
    assert {job_id, queued} <= {j["id"] for j in alice.get("/v1/jobs", params={"limit": 500}).json()}
    assert {job_id, queued} <= {j["id"] for j in admin.get("/v1/jobs", params={"limit": 500}).json()}

    # cancel: bob cannot, and the job is untouched; alice can
    assert bob.delete(f"/v1/jobs/{queued}").status_code == 404
    with session_scope() as s:
        assert s.get(Job, queued).status == "queued"
    assert alice.delete(f"/v1/jobs/{queued}").json()["status"] == "cancelled"


def test_idempotency_keys_are_per_owner(clients):
    alice, bob = clients["alice"], clients["bob"]
    body = {"method": "diag.sleep", "params": {"seconds": 0}, "idempotency_key": "shared-name-1"}
    a, b = alice.post("/v1/jobs", json=body), bob.post("/v1/jobs", json=body)
    assert a.status_code == b.status_code == 201 and a.json()["id"] != b.json()["id"]


def test_artifact_of_no_job_is_admin_only(clients):
    with session_scope() as s:
        row = crud.add_artifact(s, job_id=None, name="x.txt", kind="file", mime="text/plain", sha256="0" * 64, size=0)
        art = row.id
    assert clients["alice"].get(f"/v1/artifacts/{art}").status_code == 404
    assert clients["admin"].get(f"/v1/artifacts/{art}").status_code == 410  # visible, its file is gone


def test_cli_creates_admin_keys_on_request():
    from typer.testing import CliRunner

    from services.cli.main import app

    out = CliRunner().invoke(app, ["keys", "create", "--name", "ops", "--admin"])
    assert out.exit_code == 0, out.output
    plaintext = out.output.strip().splitlines()[-1]
    with session_scope() as s:
        assert crud.verify_api_key(s, key=plaintext).scopes == "admin"
    out = CliRunner().invoke(app, ["keys", "create", "--name", "plain"])
    with session_scope() as s:
        assert crud.verify_api_key(s, key=out.output.strip().splitlines()[-1]).scopes == ""


def test_pae_runs_belong_to_the_key_that_started_them(clients):
    from agents.pae import store

    alice, bob, admin = clients["alice"], clients["bob"], clients["admin"]
    r = alice.post("/v1/webagent/runs", json={"iterations": 1})
    assert r.status_code == 201, r.text
    run_id = r.json()["params"]["run_id"]
    assert run_id  # a new run's id is fixed at submission, so the run can be traced to its key
    store.create_run(name="pae", config={}, run_id=run_id)  # what the job does when a worker starts it

    assert run_id in {x["id"] for x in alice.get("/v1/webagent/runs").json()}
    assert run_id not in {x["id"] for x in bob.get("/v1/webagent/runs").json()}
    assert run_id in {x["id"] for x in admin.get("/v1/webagent/runs").json()}
    for path in (f"/v1/webagent/runs/{run_id}", f"/v1/webagent/runs/{run_id}/trajectories"):
        assert alice.get(path).status_code == 200, path
        assert bob.get(path).status_code == 404, path
        assert admin.get(path).status_code == 200, path
    # bob cannot resume (and so append to) alice's run
    assert bob.post("/v1/webagent/runs", json={"run_id": run_id}).status_code == 404
    assert alice.post("/v1/webagent/runs", json={"run_id": run_id}).status_code == 201
    # idempotent resubmission names the same run
    a = alice.post("/v1/webagent/runs?idempotency_key=pae-1", json={"iterations": 1})
    b = alice.post("/v1/webagent/runs?idempotency_key=pae-1", json={"iterations": 1})
    assert a.status_code == 201 and b.status_code == 200 and a.json()["id"] == b.json()["id"]
