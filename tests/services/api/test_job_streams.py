"""Jobs at queue speed: batch submission with per-item idempotency, long-poll wait, and the SSE stream."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from core.db.models import Job
from core.db.session import session_scope
from core.jobs.lifecycle import execute_job
from services.api import deps
from services.api.sse import Event, format_event, job_events, sse_response, watch_jobs


def _count() -> int:
    with session_scope() as s:
        return s.query(Job).count()


@pytest.fixture
def sent(monkeypatch):
    """Record what the API hands to the broker instead of sending it."""
    out: list[str] = []
    monkeypatch.setattr(deps, "enqueue", lambda job: out.append(job.id))
    return out


def test_batch_creates_validates_and_dedupes_per_item(api_client, sent):
    before = _count()
    body = {
        "jobs": [
            {"method": "diag.sleep", "params": {"seconds": 0}, "idempotency_key": "b-1"},
            {"method": "diag.sleep", "params": {"seconds": -1}, "idempotency_key": "b-2"},
            {"method": "no.such", "params": {}},
            {"method": "diag.sleep", "params": {"seconds": 0}, "idempotency_key": "b-1"},  # same key, same job
            {"method": "diag.sleep", "params": {"steps": 2}},
        ]
    }
    r = api_client.post("/v1/jobs:batch", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert [i["status"] for i in out["items"]] == [201, 422, 404, 200, 201]
    assert (out["created"], out["existing"], out["rejected"]) == (2, 1, 2)
    items = out["items"]
    assert items[0]["job"]["id"] == items[3]["job"]["id"]
    assert "seconds" in json.dumps(items[1]["error"]) and "unknown method" in items[2]["error"]
    assert _count() == before + 2 and sorted(sent) == sorted([items[0]["job"]["id"], items[4]["job"]["id"]])
    # retrying the batch (after a timeout, say) creates nothing new and sends nothing again
    again = api_client.post("/v1/jobs:batch", json={"jobs": [body["jobs"][0]]}).json()
    assert again["items"][0] == {**items[0], "status": 200}
    assert _count() == before + 2 and len(sent) == 2
    # a single submission with a batch item's key finds the batch's job
    single = api_client.post("/v1/jobs", json=body["jobs"][0])
    assert single.status_code == 200 and single.json()["id"] == items[0]["job"]["id"]


@pytest.mark.parametrize(
    "body",
    [{"jobs": []}, {"jobs": [{"method": "diag.sleep"}] * 1001}, {"jobs": [{"method": "diag.sleep", "x": 1}]}, {}],
)
def test_bad_batches_are_422_and_write_nothing(api_client, sent, body):
    before = _count()
    assert api_client.post("/v1/jobs:batch", json=body).status_code == 422
    assert _count() == before and not sent


def test_batch_needs_a_key(api_client, sent):
    before = _count()
    r = api_client.post("/v1/jobs:batch", json={"jobs": [{"method": "diag.sleep"}]}, headers={"Authorization": ""})
    assert r.status_code == 401 and _count() == before


def test_long_poll_answers_when_the_job_ends(api_client, sent):
    job = api_client.post("/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 0.3, "steps": 1}}).json()
    assert api_client.get(f"/v1/jobs/{job['id']}", params={"wait": 0}).json()["status"] == "queued"
    t0 = time.monotonic()
    assert api_client.get(f"/v1/jobs/{job['id']}", params={"wait": 0.3}).json()["status"] == "queued"
    assert 0.25 < time.monotonic() - t0 < 5  # waited, then answered with the state so far
    th = threading.Thread(target=execute_job, args=(job["id"],))
    t0 = time.monotonic()
    th.start()
    done = api_client.get(f"/v1/jobs/{job['id']}", params={"wait": 30}).json()
    waited = time.monotonic() - t0
    th.join()
    assert done["status"] == "succeeded" and waited < 5
    assert api_client.get(f"/v1/jobs/{job['id']}", params={"wait": 61}).status_code == 422
    assert api_client.get("/v1/jobs/nope", params={"wait": 1}).status_code == 404


def test_event_stream_reports_progress_then_the_end(api_client, sent):
    job = api_client.post("/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 1.2, "steps": 4}}).json()
    th = threading.Thread(target=execute_job, args=(job["id"],))
    th.start()
    events = []
    with api_client.stream("GET", f"/v1/jobs/{job['id']}/events") as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[6:])))
    th.join()
    kinds = [k for k, _ in events]
    assert kinds[-1] == "end" and events[-1][1]["status"] == "succeeded" and set(kinds[:-1]) == {"progress"}
    assert "running" in {e["status"] for _, e in events}
    progress = [e["progress"] for _, e in events]
    assert progress == sorted(progress) and any(0 < p < 1 for p in progress)  # a step between start and end was seen
    assert api_client.get("/v1/jobs/nope/events").status_code == 404
    assert api_client.get(f"/v1/jobs/{job['id']}/events", headers={"Authorization": ""}).status_code == 401


def test_format_event_splits_lines_and_keeps_ids_on_one_line():
    assert format_event({"a": 1}, event="progress", id="3") == 'event: progress\nid: 3\ndata: {"a":1}\n\n'
    assert format_event("x\ny", event="a\nb") == "event: a b\ndata: x\ndata: y\n\n"


def test_watch_jobs_yields_changes_only_and_stops_on_end():
    states = iter(
        [
            {"j": {"status": "queued", "progress": 0.0, "message": ""}},
            {"j": {"status": "queued", "progress": 0.0, "message": ""}},
            {"j": {"status": "running", "progress": 0.5, "message": "half"}},
            {"j": {"status": "succeeded", "progress": 1.0, "message": "done"}},
        ]
    )

    async def collect():
        return [j["status"] async for j in watch_jobs(["j"], read=lambda ids: next(states), first_poll_s=0)]

    assert asyncio.run(collect()) == ["queued", "running", "succeeded"]

    async def timed_out():
        t0 = time.monotonic()
        seen = [
            e.event
            async for e in job_events(
                "j", timeout_s=0.2, read=lambda ids: {"j": {"status": "queued", "progress": 0, "message": ""}}
            )
        ]
        return seen, time.monotonic() - t0

    seen, took = asyncio.run(timed_out())
    assert seen == ["progress", "timeout"] and took < 2


def test_keepalive_comments_while_quiet():
    async def slow():
        await asyncio.sleep(0.25)
        yield Event({"x": 1}, event="end")

    async def body():
        resp = sse_response(slow(), keepalive_s=0.1)
        return [chunk async for chunk in resp.body_iterator]

    chunks = asyncio.run(body())
    assert chunks[0] == ": keep-alive\n\n" and chunks[-1] == 'event: end\ndata: {"x":1}\n\n'


def test_on_postgres_the_worker_notifies_and_the_wait_wakes_at_once(postgres_url, settings, monkeypatch):
    """LISTEN/NOTIFY: the long-poll answers when the job ends, not at its next poll."""
    from fastapi.testclient import TestClient

    from core.db import crud, migrate
    from core.db.session import get_engine
    from core.jobs.lifecycle import submit_job
    from services.api import sse
    from services.api.main import create_app

    migrate.upgrade(postgres_url)
    monkeypatch.setattr(settings, "database_url", postgres_url)
    get_engine.cache_clear()
    try:
        with session_scope() as s:
            _, key = crud.create_api_key(s, name="pg")
        listener = sse.job_listener()
        assert listener is not None and listener.listening.is_set()
        # slow polling: only a notification can make the wait return quickly
        from services.api.routes import jobs as job_routes

        monkeypatch.setattr(job_routes, "wait_for_job", lambda job_id, t: sse.watch_jobs_last(job_id, t, max_poll_s=30))
        with TestClient(create_app()) as c:
            c.headers["Authorization"] = f"Bearer {key}"
            job = c.post("/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 0.4, "steps": 2}})
            job_id = job.json()["id"]
            seen = listener.notified
            th = threading.Thread(target=execute_job, args=(job_id,))
            t0 = time.monotonic()
            th.start()
            done = c.get(f"/v1/jobs/{job_id}", params={"wait": 20}).json()
            waited = time.monotonic() - t0
            th.join()
            assert done["status"] == "succeeded" and waited < 5, waited  # not the 30 s poll
            assert listener.notified >= seen + 2  # claim, progress and end each notified
        job, _ = submit_job("diag.sleep", {"seconds": 0})
        assert execute_job(job.id).status == "succeeded"
    finally:
        monkeypatch.undo()
        get_engine.cache_clear()
