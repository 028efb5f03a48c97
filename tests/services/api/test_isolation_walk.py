"""Two keys against every route of the OpenAPI document (issue #48 part 1).

Key A makes one of everything that belongs to a key (a job with a report and an artifact, a queued job, an
upload, an Agent Protocol thread with a finished run, an evidence document, a PAE run with a trajectory and
a screenshot). Then every operation of ``/openapi.json`` is walked with key B:

* an operation whose path names one of A's objects answers B a **404**, whatever the method (and A a 200
  for the same read, so the id is real);
* an operation that lists answers B nothing that names one of A's objects;
* an operation that creates takes none of A's objects: naming one is a 404 (a job's params, a PAE run to
  resume), and a thread id A uses gives B a thread of its own;
* the rest is shared by design (catalogues, health) or submits B's own job from public inputs.

Every operation of the document must be in one of these classes (a new route fails the test until it is
classified), and at the end everything of A's is as it was.
"""

from __future__ import annotations

import io
import json
import re
import sys
import uuid

import pytest
from fastapi.testclient import TestClient

from core.db import crud
from core.db.session import session_scope

STEPS_GRAPH = """
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    steps: Annotated[list[str], operator.add]


g = StateGraph(State)
g.add_node("first", lambda s: {"steps": ["first"]})
g.add_node("second", lambda s: {"steps": ["second"]})
g.add_edge(START, "first")
g.add_edge("first", "second")
g.add_edge("second", END)
graph = g.compile()
"""
RUN = {"assistant_id": "steps", "input": {"steps": []}}

# operations whose path names an object of A's: B gets a 404 (A a 200 where it reads)
OWNED = {
    ("GET", "/v1/jobs/{job_id}"): {},
    ("DELETE", "/v1/jobs/{job_id}"): {"job_id": "queued_job"},
    ("GET", "/v1/jobs/{job_id}/events"): {"params": {"timeout": 0.5}},
    ("GET", "/v1/jobs/{job_id}/report"): {},
    ("GET", "/v1/artifacts/{artifact_id}"): {},
    ("GET", "/v1/langgraph/threads/{thread_id}"): {},
    ("DELETE", "/v1/langgraph/threads/{thread_id}"): {},
    ("GET", "/v1/langgraph/threads/{thread_id}/state"): {},
    ("GET", "/v1/langgraph/threads/{thread_id}/state/{checkpoint_id}"): {},
    ("POST", "/v1/langgraph/threads/{thread_id}/history"): {"json": {"limit": 5}},
    ("POST", "/v1/langgraph/threads/{thread_id}/runs/stream"): {"json": RUN},
    ("POST", "/v1/langgraph/threads/{thread_id}/runs/wait"): {"json": RUN},
    ("POST", "/v1/langgraph/threads/{thread_id}/runs"): {"json": RUN},
    ("GET", "/v1/langgraph/threads/{thread_id}/runs"): {},
    ("GET", "/v1/langgraph/threads/{thread_id}/runs/{run_id}"): {},
    ("GET", "/v1/langgraph/threads/{thread_id}/runs/{run_id}/join"): {},
    ("GET", "/v1/langgraph/threads/{thread_id}/runs/{run_id}/stream"): {},
    ("POST", "/v1/langgraph/threads/{thread_id}/runs/{run_id}/cancel"): {},
    ("DELETE", "/v1/evidence/documents/{document_id}"): {"params": "corpus"},
    ("GET", "/v1/webagent/runs/{run_id}"): {"run_id": "pae_run"},
    ("GET", "/v1/webagent/runs/{run_id}/trajectories"): {"run_id": "pae_run"},
    ("GET", "/v1/webagent/trajectories/{trajectory_id}"): {},
    ("GET", "/v1/webagent/screenshots/{sha256}"): {"sha256": "screenshot"},
}
# operations that list: nothing of A's in B's answer
LISTING = {
    ("GET", "/v1/jobs"): {"params": {"limit": 500}},
    ("POST", "/v1/langgraph/threads/search"): {"json": {"limit": 1000}},
    ("GET", "/v1/evidence"): {"params": "corpus"},
    ("GET", "/v1/evidence/documents"): {"params": "corpus"},
    ("GET", "/v1/webagent/runs"): {},
}
# operations that create: checked one by one in the test
CREATING = {
    ("POST", "/v1/jobs"),
    ("POST", "/v1/jobs:batch"),
    ("POST", "/v1/langgraph/threads"),
    ("POST", "/v1/webagent/runs"),
    ("POST", "/v1/evidence/documents"),
}
# shared by design (catalogues, health, assistants), or a submission of the caller's own job from public inputs
SHARED = re.compile(
    r"^(GET /(healthz|readyz)"
    r"|(GET|POST) /v1/langgraph/assistants.*"
    r"|POST /v1/langgraph/runs/(stream|wait)"
    r"|GET /v1/(methods|examples|continual|clinical|double_filter|ecolevels|gmail|lada|lms3|long_short_alignment"
    r"|m3_jepa|medcog|patch_scaling|sefe|vlm)(/.*)?"
    r"|GET /v1/webagent/sites"
    r"|POST /v1/readiness"  # whether a job first trains a shared cached model: no object of anyone's
    r"|POST /v1/(factcheck|clinical/(trace|runs)|double_filter/.+|ecolevels/(classify|runs)|fourier_mamba/.+"
    r"|gmail/align|lada/xtail|lms3/(select|index)|long_short_alignment/.+|m3_jepa/.+|medcog/.+|sdr/fit"
    r"|patch_scaling/sweep|rf/.+|sefe/run|vlm/zeroshot))$"
)


def _client(app, scopes: str = "") -> TestClient:
    with session_scope() as s:
        _, plaintext = crud.create_api_key(s, name="walk", scopes=scopes)
    c = TestClient(app)
    c.headers["Authorization"] = f"Bearer {plaintext}"
    return c


@pytest.fixture
def steps_graph(tmp_path, monkeypatch):
    from services.api import graphs

    name = f"walk_graph_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(STEPS_GRAPH)
    monkeypatch.syspath_prepend(str(tmp_path))
    specs = {**graphs.graph_specs(), "steps": graphs.GraphSpec("steps", name, "graph")}
    monkeypatch.setattr(graphs, "graph_specs", lambda: specs)
    yield sys.modules.get(name)


@pytest.fixture(scope="module", autouse=True)
def _method():
    from pydantic import BaseModel

    from core.jobs import Report, register_method, registry_snapshot

    class _P(BaseModel):
        pass

    def with_file(params: _P, progress) -> Report:
        r = Report(title="A's report")
        r.add_file("a.txt", f"A's data {uuid.uuid4()}")
        return r

    with registry_snapshot():
        register_method("test.walk_file", params=_P)(with_file)
        yield


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (uuid.uuid4().int % 255, 40, 90)).save(buf, format="PNG")
    return buf.getvalue()


def _a_makes_everything(a: TestClient, tmp_path) -> dict[str, str]:
    """One of every object that belongs to a key, made by A; returns their ids (by path parameter name)."""
    ids: dict[str, str] = {}
    job = a.post("/v1/jobs", json={"method": "test.walk_file", "params": {}}).json()
    ids["job_id"] = job["id"]  # run by the inline worker
    assert a.get(f"/v1/jobs/{job['id']}", params={"wait": 30}).json()["status"] == "succeeded"
    ids["artifact_id"] = a.get(f"/v1/jobs/{job['id']}/report").json()["body"]["artifacts"][0]["id"]
    with session_scope() as s:
        ids["artifact_sha"] = crud.get_artifact(s, artifact_id=ids["artifact_id"]).sha256

    r = a.post("/v1/vlm/zeroshot", files={"image": ("a.png", _png(), "image/png")}, data={"classnames": "a,b"})
    ids["upload_sha"] = r.json()["params"]["image_sha256"]
    ids["zeroshot_job"] = r.json()["id"]

    ids["thread_id"] = f"clinical_got:cgot:case007:{uuid.uuid4().hex[:16]}"  # a job-like id A chose
    assert a.post("/v1/langgraph/threads", json={"thread_id": ids["thread_id"]}).status_code == 200
    r = a.post(f"/v1/langgraph/threads/{ids['thread_id']}/runs/wait", json=RUN)
    assert r.status_code == 200 and r.json() == {"steps": ["first", "second"]}, r.text
    ids["run_id"] = r.headers["content-location"].rsplit("/", 1)[1]
    ids["checkpoint_id"] = a.get(f"/v1/langgraph/threads/{ids['thread_id']}/state").json()["checkpoint"][
        "checkpoint_id"
    ]

    ids["corpus"] = f"walk-{uuid.uuid4().hex[:8]}"
    doc = ("a.txt", f"A's private note {uuid.uuid4()}".encode(), "text/plain")
    (row,) = a.post("/v1/evidence/documents", files=[("files", doc)], data={"corpus": ids["corpus"]}).json()
    ids["document_id"] = row["id"]

    ids["pae_run"] = a.post("/v1/webagent/runs", json={"iterations": 1}).json()["params"]["run_id"]
    ids["trajectory_id"], ids["screenshot"] = _pae_trajectory(ids["pae_run"], tmp_path)

    queued = a.post("/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 30}}).json()["id"]
    ids["queued_job"] = queued
    return ids


def _pae_trajectory(run_id: str, tmp_path) -> tuple[str, str]:
    """What a ``pae.train`` job of A's stores: the run, a task, a trajectory with a screenshot."""
    import hashlib
    import random

    from agents.pae import store
    from agents.pae.rollout import StepRecord, Trajectory
    from agents.pae.sites import build_sites

    store.create_run(name="walk", config={}, run_id=run_id)
    task = build_sites(0)["shop"].template_tasks(random.Random(3), 1)[0]
    row = store.add_tasks(run_id=run_id, tasks=[task], split="train")[task.id]
    shot = tmp_path / "shot.png"
    shot.write_bytes(_png())
    step = StepRecord(
        0, "http://shop.local/", "", "", str(shot), [{"role": "user", "content": "s"}], "r", "", "a", False, ""
    )
    traj = Trajectory(task=task, policy="test", answer="x", steps=[step])
    tid = store.save_trajectory(run_id=run_id, iteration=0, phase="rollout", slot=0, task_row_id=row, traj=traj)
    return tid, hashlib.sha256(shot.read_bytes()).hexdigest()


def _request(c: TestClient, method: str, path: str, spec: dict, ids: dict[str, str]):
    names = re.findall(r"{(\w+)}", path)
    url = path
    for name in names:
        url = url.replace(f"{{{name}}}", ids[spec.get(name, name)])
    params = spec.get("params")
    params = {"corpus": ids["corpus"]} if params == "corpus" else params
    return c.request(method, url, params=params, json=spec.get("json"))


def _a_state(a: TestClient, ids: dict[str, str]) -> dict:
    t = ids["thread_id"]
    return {
        "job": a.get(f"/v1/jobs/{ids['job_id']}").json()["status"],
        "queued": a.get(f"/v1/jobs/{ids['queued_job']}").json()["status"],
        "artifact": a.get(f"/v1/artifacts/{ids['artifact_id']}").content,
        "thread": {k: v for k, v in a.get(f"/v1/langgraph/threads/{t}").json().items() if k != "updated_at"},
        "state": a.get(f"/v1/langgraph/threads/{t}/state").json()["checkpoint"],
        "runs": [r["status"] for r in a.get(f"/v1/langgraph/threads/{t}/runs").json()],
        "documents": a.get("/v1/evidence/documents", params={"corpus": ids["corpus"]}).json(),
        "pae": a.get(f"/v1/webagent/runs/{ids['pae_run']}").status_code,
        "trajectory": a.get(f"/v1/webagent/trajectories/{ids['trajectory_id']}").status_code,
    }


def test_key_b_can_neither_see_nor_change_what_key_a_made(steps_graph, tmp_path, inline_worker):
    from services.api.main import create_app

    inline_worker.only = {"test.walk_file", "langgraph.run"}  # the rest stays queued: A's queued job stays so

    from services.api.job_routes import job_routes

    app = create_app()
    a, b = _client(app), _client(app)
    ops = {(m.upper(), p) for p, item in app.openapi()["paths"].items() for m in item}
    # POST /v1/<method>/<job>: generated from the params models, they create like POST /v1/jobs (checked below)
    generated = {("POST", path) for paths in job_routes(app).values() for path in paths}
    unclassified = {
        op
        for op in ops - generated
        if op not in OWNED and op not in LISTING and op not in CREATING and not SHARED.match(" ".join(op))
    }
    assert unclassified == set(), f"classify these operations in the walk: {sorted(unclassified)}"
    assert set(OWNED) | set(LISTING) | CREATING <= ops, "the walk names operations the API no longer has"

    ids = _a_makes_everything(a, tmp_path)
    before = _a_state(a, ids)
    assert before["job"] == "succeeded" and before["queued"] == "queued" and before["pae"] == 200

    for (method, path), spec in sorted(OWNED.items()):
        if method == "GET":
            assert _request(a, method, path, spec, ids).status_code == 200, f"A: {method} {path}"
        r = _request(b, method, path, spec, ids)
        assert r.status_code == 404, f"B: {method} {path} -> {r.status_code} {r.text[:300]}"

    secret = [v for k, v in ids.items() if k != "corpus"]
    for (method, path), spec in sorted(LISTING.items()):
        r = _request(b, method, path, spec, ids)
        assert r.status_code == 200, f"B: {method} {path} -> {r.status_code}"
        leaked = [v for v in secret if v in r.text]
        assert leaked == [], f"B: {method} {path} shows A's {leaked}"
    assert b.get("/v1/evidence", params={"corpus": ids["corpus"]}).json()["chunks"] == 0

    # creating: A's objects cannot be named, and A's ids are not taken from B
    for params in ({"image_sha256": ids["upload_sha"]}, {"image_sha256": ids["artifact_sha"]}):
        assert b.post("/v1/jobs", json={"method": "vlm.zeroshot", "params": params}).status_code == 404
    assert (
        b.post("/v1/jobs", json={"method": "pae.train", "params": {"sft_adapter": ids["artifact_id"]}}).status_code
        == 404
    )
    for params in ({"image_sha256": ids["upload_sha"]}, {"image_sha256": ids["artifact_sha"]}):  # generated route
        assert b.post("/v1/vlm/zeroshot", json=params).status_code == 404
    assert b.post("/v1/pae/train", json={"sft_adapter": ids["artifact_id"]}).status_code == 404
    batch = {"jobs": [{"method": "vlm.zeroshot", "params": {"image_sha256": ids["upload_sha"]}}]}
    assert [i["status"] for i in b.post("/v1/jobs:batch", json=batch).json()["items"]] == [404]
    assert b.post("/v1/webagent/runs", json={"run_id": ids["pae_run"]}).status_code == 404
    mine = b.post("/v1/langgraph/threads", json={"thread_id": ids["thread_id"]})
    assert mine.status_code == 200 and mine.json()["values"] == {}  # B's own thread of that id, not A's (no 409)
    r = b.post(f"/v1/langgraph/threads/{ids['thread_id']}/runs/wait", json={"assistant_id": "steps", "input": None})
    assert r.status_code == 200 and r.json()["__error__"]["error"] == "EmptyInputError", r.text  # nothing to resume
    assert b.delete(f"/v1/langgraph/threads/{ids['thread_id']}").status_code == 204  # deletes B's own
    doc = ("b.txt", b"B's note", "text/plain")
    assert b.post("/v1/evidence/documents", files=[("files", doc)], data={"corpus": ids["corpus"]}).status_code == 201

    assert _a_state(a, ids) == before
    values = a.get(f"/v1/langgraph/threads/{ids['thread_id']}/state").json()["values"]
    assert values == {"steps": ["first", "second"]}
    assert json.dumps(b.get("/v1/jobs", params={"limit": 500}).json()).count(ids["job_id"]) == 0
