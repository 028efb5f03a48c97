"""End to end through real processes: API → broker → Celery worker → database → report.

- embedded defaults (SQLite + kombu's SQLAlchemy broker), no servers, with the real local model;
- PostgreSQL + Redis (the machine's servers): failures, exactly-once redelivery after SIGKILL;
- PostgreSQL + RabbitMQ.
"""

from __future__ import annotations

import os
import signal
import time
import uuid

import pytest

pytestmark = pytest.mark.integration


def test_embedded_defaults_run_llm_complete_with_the_local_model(make_stack, tmp_path):
    home = tmp_path / "embedded"
    home.mkdir()
    stack = make_stack(f"sqlite:///{home / 'paperworks.db'}", f"sqla+sqlite:///{home / 'broker.db'}")
    stack.start_api()
    stack.start_worker()
    job = stack.submit("llm.complete", {"prompts": ["What is 2+3?"], "max_tokens": 12})
    done = stack.wait_job(job["id"], timeout=240)
    assert done["status"] == "succeeded", done
    with stack.client as c:
        rep = c.get(f"/v1/jobs/{job['id']}/report").json()
    assert rep["body"]["metrics"]["tokens_per_s"] > 0
    assert "5" in rep["body"]["data"]["completions"][0]


@pytest.fixture
def redis_url():
    """A Redis database no other run uses meanwhile (core.devstack.leased_redis_db)."""
    from core.devstack import leased_redis_db

    with leased_redis_db() as url:
        yield url


def test_postgres_redis_failures_and_sigkill_redelivery(make_stack, postgres_url, redis_url):
    stack = make_stack(
        postgres_url,
        redis_url,
        PAPERWORKS_BROKER_VISIBILITY_TIMEOUT="4",
        PAPERWORKS_JOB_HEARTBEAT_S="0.5",
        PAPERWORKS_JOB_STALE_AFTER_S="3",
    )
    stack.start_api()
    w1 = stack.start_worker("w1")

    # a job whose method raises: failed with its message kept, and the worker keeps serving
    bad = stack.submit("diag.sleep", {"seconds": 0.1, "steps": 1, "fail": True, "message": "kaboom-17"})
    done = stack.wait_job(bad["id"])
    assert done["status"] == "failed" and "kaboom-17" in done["message"]
    ok = stack.submit("diag.sleep", {"seconds": 0.1, "steps": 1})
    assert stack.wait_job(ok["id"])["status"] == "succeeded"

    # a real method in the worker process: a 2-task class-incremental DPCR run
    tiny = {
        "channels": [4, 8, 8],
        "epochs_first": 2,
        "milestones_first": [1],
        "epochs_inc": 1,
        "milestones_inc": [1],
        "tssp_passes": 2,
    }
    cl = stack.submit("continual.run", {"method": "dpcr", "n_tasks": 2, "samples_per_class": 30, "options": tiny})
    done = stack.wait_job(cl["id"], timeout=300)
    assert done["status"] == "succeeded", done
    with stack.client as c:
        metrics = c.get(f"/v1/jobs/{cl['id']}/report").json()["body"]["metrics"]
    assert 0.0 <= metrics["A_f"] <= 1.0

    # idempotency through the real stack
    key = uuid.uuid4().hex
    a = stack.submit("diag.sleep", {"seconds": 0.1}, key=key)
    assert stack.submit("diag.sleep", {"seconds": 0.1}, key=key)["id"] == a["id"]

    # SIGKILL the worker in the middle of a job: redelivered to a new worker, succeeds exactly once
    long = stack.submit("diag.sleep", {"seconds": 6, "steps": 30})
    stack.wait_job(long["id"], timeout=60, until=("running",))
    time.sleep(1.0)
    os.killpg(w1.pid, signal.SIGKILL)
    w1.wait()
    stack.start_worker("w2")
    done = stack.wait_job(long["id"], timeout=120)
    assert done["status"] == "succeeded", done
    assert done["attempts"] == 2
    from sqlalchemy import create_engine, text

    eng = create_engine(postgres_url)
    with eng.connect() as conn:
        n_reports = conn.execute(text("SELECT count(*) FROM reports WHERE job_id = :j"), {"j": long["id"]}).scalar()
        n_jobs = conn.execute(text("SELECT count(*) FROM jobs WHERE method = 'diag.sleep'")).scalar()
    eng.dispose()
    assert n_reports == 1
    assert n_jobs == 4


def test_postgres_rabbitmq(make_stack, postgres_url):
    stack = make_stack(postgres_url, "amqp://guest:guest@127.0.0.1:5672//")
    stack.start_api()
    stack.start_worker()
    job = stack.submit("diag.sleep", {"seconds": 0.2, "steps": 2})
    assert stack.wait_job(job["id"])["status"] == "succeeded"
