"""Agent Protocol runs live on the workers: SIGKILL the API, then the worker, mid-run (issue #48 part 2).

Real processes (:class:`core.devstack.Stack`). A background run (``POST /threads/{id}/runs``) of the
``diag_steps`` graph (``n`` sleeping steps, one checkpoint each) is started; the API is killed with
SIGKILL and started again, then the worker running the run is killed and a fresh one started. The run
still finishes: the reaper sends its job again and the new attempt continues from the last checkpoint.
A client that reconnects to ``/join`` and to ``/runs/{id}/stream`` gets the final state, every step
exactly once. Heartbeat, stale and reap periods are shortened as in ``test_durability.py``.
"""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
import pytest

from core.devstack import leased_redis_db

pytestmark = pytest.mark.integration

FAST = {
    "PAPERWORKS_JOB_HEARTBEAT_S": "0.5",
    "PAPERWORKS_JOB_STALE_AFTER_S": "3",
    "PAPERWORKS_JOB_REAP_INTERVAL_S": "1",
}
N, SECONDS = 15, 2.0  # long enough for an API restart on a loaded two-core machine


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _steps_done(c: httpx.Client, tid: str) -> int:
    return len(c.get(f"/v1/langgraph/threads/{tid}/state").json()["values"].get("done") or [])


def _sse_events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        ev = next((ln[7:] for ln in block.splitlines() if ln.startswith("event: ")), None)
        data = "\n".join(ln[6:] for ln in block.splitlines() if ln.startswith("data: "))
        if ev:
            out.append((ev, json.loads(data)))
    return out


def _kill(proc) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _run_survives_the_api_and_its_worker_dying(stack) -> None:
    stack.start_api()
    api = stack.procs[-1]
    w1 = stack.start_worker("w1")
    with stack.client as c:
        tid = c.post("/v1/langgraph/threads", json={}).json()["thread_id"]
        body = {"assistant_id": "diag_steps", "input": {"n": N, "seconds": SECONDS}, "stream_mode": "updates"}
        r = c.post(f"/v1/langgraph/threads/{tid}/runs", json=body)
        assert r.status_code == 200, r.text
        run_id = r.json()["run_id"]
        _wait(lambda: _steps_done(c, tid) >= 2, 60, "the run's first steps")

    _kill(api)  # the API that accepted the run dies; the worker goes on
    stack.start_api()
    with stack.client as c:
        run = c.get(f"/v1/langgraph/threads/{tid}/runs/{run_id}").json()
        assert run["status"] == "running", run
        before = _wait(lambda: (n := _steps_done(c, tid)) >= 4 and n, 60, "steps after the API restart")
        assert before < N, "the run ended before its worker could be killed"
        _kill(w1)  # the worker running it dies mid-step
        after_kill = _steps_done(c, tid)
        stack.start_worker("w2")

        values = c.get(f"/v1/langgraph/threads/{tid}/runs/{run_id}/join", timeout=180).json()
        assert values["done"] == list(range(N)), values  # every step once: none lost, none run twice
        run = c.get(f"/v1/langgraph/threads/{tid}/runs/{run_id}").json()
        assert run["status"] == "success", run
        assert c.get(f"/v1/langgraph/threads/{tid}").json()["status"] == "idle"

        stream = c.get(f"/v1/langgraph/threads/{tid}/runs/{run_id}/stream", timeout=60)
        assert stream.status_code == 200
        updates = [d["step"]["done"][0] for e, d in _sse_events(stream.text) if e == "updates"]
        assert updates == list(range(N)), updates  # the log holds both attempts' chunks, each once

        (job,) = [j for j in c.get("/v1/jobs", params={"method": "langgraph.run"}).json()]
        assert job["status"] == "succeeded" and job["attempts"] == 2, job
    assert after_kill < N
    assert "reaper re-enqueued job " + job["id"] in stack.log("w2")
    assert f"run {run_id}: resuming thread {tid}" in stack.log("w2")


def test_runs_survive_sigkill_embedded_defaults(make_stack, tmp_path):
    home = tmp_path / "embedded"
    home.mkdir()
    stack = make_stack(f"sqlite:///{home / 'paperworks.db'}", f"sqla+sqlite:///{home / 'broker.db'}", **FAST)
    _run_survives_the_api_and_its_worker_dying(stack)


@pytest.fixture
def redis_url():
    with leased_redis_db() as url:
        yield url


def test_runs_survive_sigkill_postgres_redis(postgres_url, redis_url, make_stack):
    stack = make_stack(postgres_url, redis_url, **FAST)  # last: its processes stop before the database is dropped
    _run_survives_the_api_and_its_worker_dying(stack)


def test_a_worker_runs_what_the_api_started(make_stack, tmp_path):
    """The run executes in the worker process, not in the API (the API has no graph thread at all)."""
    home = tmp_path / "where"
    home.mkdir()
    stack = make_stack(f"sqlite:///{home / 'paperworks.db'}", f"sqla+sqlite:///{home / 'broker.db'}", **FAST)
    stack.start_api()
    with stack.client as c:
        tid = c.post("/v1/langgraph/threads", json={}).json()["thread_id"]
        body = {"assistant_id": "diag_steps", "input": {"n": 2, "seconds": 0}}
        run = c.post(f"/v1/langgraph/threads/{tid}/runs", json=body).json()
        time.sleep(2.0)
        assert c.get(f"/v1/langgraph/threads/{tid}/runs/{run['run_id']}").json()["status"] == "pending"
        stack.start_worker("w")
        values = c.get(f"/v1/langgraph/threads/{tid}/runs/{run['run_id']}/join", timeout=120).json()
        assert values["done"] == [0, 1]
    assert "langgraph.run" in stack.log("w") or "succeeded" in stack.log("w")
