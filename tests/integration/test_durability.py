"""SIGKILL a worker mid-job: nothing is lost, nothing runs to completion twice (issue #27 item 1).

Real processes (:class:`core.devstack.Stack`): the API, a worker that is killed with SIGKILL while a
job is half done, and a fresh worker. Broker settings are the defaults (the embedded broker, or Redis
with its default one-hour visibility timeout): recovery comes from the reaper in the new worker,
which re-enqueues the job whose heartbeat went stale. Only the heartbeat/stale/reap periods are
shortened so the test takes seconds (defaults: 5 s / 30 s / 10 s).

``PAPERWORKS_DURABILITY_N`` sets the number of jobs (default 20; docs/SECURITY.md records a run with 50).
"""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
import redis
from sqlalchemy import bindparam, create_engine, text

pytestmark = pytest.mark.integration

N = int(os.environ.get("PAPERWORKS_DURABILITY_N", "20"))
FAST = {
    "PAPERWORKS_JOB_HEARTBEAT_S": "0.5",
    "PAPERWORKS_JOB_STALE_AFTER_S": "3",
    "PAPERWORKS_JOB_REAP_INTERVAL_S": "1",
}


def _kill_mid_job_and_recover(stack) -> dict:
    stack.start_api()
    w1 = stack.start_worker("w1")
    ids = [stack.submit("diag.sleep", {"seconds": 0.8, "steps": 8})["id"] for _ in range(N)]

    # wait until a job is in its middle (and a few are done), then SIGKILL its worker
    seen = None
    deadline = time.monotonic() + 60
    with stack.client as c:
        while seen is None and time.monotonic() < deadline:
            done = len(c.get("/v1/jobs", params={"status": "succeeded", "limit": 500}).json())
            for j in c.get("/v1/jobs", params={"status": "running", "limit": 10}).json():
                if 0.25 <= j["progress"] <= 0.75 and done >= 3:
                    seen = j
                    break
            else:
                time.sleep(0.05)
        assert seen is not None, "no job reached the middle"
        os.killpg(w1.pid, signal.SIGKILL)
        w1.wait()
        # the job(s) the dead worker held: still 'running', with nobody to finish them
        victims = [j["id"] for j in c.get("/v1/jobs", params={"status": "running", "limit": 10}).json()]
    assert victims, "the worker was killed between two jobs"
    stack.start_worker("w2")

    finished = {i: stack.wait_job(i, timeout=120) for i in ids}
    return {"ids": ids, "victims": victims, "finished": finished}


def _assert_none_lost_none_twice(stack, run: dict, database_url: str) -> None:
    ids, finished = run["ids"], run["finished"]
    lost = [i for i, j in finished.items() if j["status"] != "succeeded"]
    assert lost == [], f"{len(lost)} of {N} jobs not succeeded: {[finished[i] for i in lost]}"
    # "ran to completion" = a worker logged the task returning 'succeeded' for it
    logs = stack.log("w1") + stack.log("w2")
    completions = {i: len(re.findall(rf"\[job-{i}\] succeeded in [^:]*: 'succeeded'", logs)) for i in ids}
    twice = {i: n for i, n in completions.items() if n != 1}
    assert twice == {}, f"jobs not completed exactly once: {twice}"
    eng = create_engine(database_url)
    with eng.connect() as conn:
        reports = dict(
            conn.execute(
                text("SELECT job_id, count(*) FROM reports WHERE job_id IN :ids GROUP BY job_id").bindparams(
                    bindparam("ids", expanding=True)
                ),
                {"ids": ids},
            ).all()
        )
    eng.dispose()
    assert all(reports.get(i) == 1 for i in ids), reports
    for v in run["victims"]:
        assert finished[v]["attempts"] == 2  # the killed attempt, then the reaper's re-run
        assert "reaper re-enqueued job " + v in stack.log("w2")


def test_sigkill_mid_job_embedded_defaults(make_stack, tmp_path):
    home = tmp_path / "embedded"
    home.mkdir()
    db = f"sqlite:///{home / 'paperworks.db'}"
    stack = make_stack(db, f"sqla+sqlite:///{home / 'broker.db'}", **FAST)
    run = _kill_mid_job_and_recover(stack)
    _assert_none_lost_none_twice(stack, run, db)


@pytest.fixture
def redis_url():
    url = "redis://127.0.0.1:6379/10"
    r = redis.Redis.from_url(url)
    r.flushdb()
    yield url
    r.flushdb()


def test_sigkill_mid_job_postgres_redis_default_visibility(postgres_url, redis_url, make_stack):
    # make_stack last: its processes (whose reapers reconnect every second) stop before the database is dropped
    stack = make_stack(postgres_url, redis_url, **FAST)  # broker_visibility_timeout stays 3600 s
    run = _kill_mid_job_and_recover(stack)
    _assert_none_lost_none_twice(stack, run, postgres_url)
