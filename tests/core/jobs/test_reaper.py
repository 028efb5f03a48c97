"""The reaper: a job whose worker died (stale heartbeat) or whose message was lost is sent again, once."""

import datetime as dt
import threading

from core.db.models import Job, JobStatus, utcnow
from core.db.session import session_scope
from core.jobs.lifecycle import execute_job, reap_stale, submit_job


def _job(status: str, *, heartbeat_age_s: float | None, created_age_s: float = 0.0) -> str:
    job, _ = submit_job("diag.sleep", {"seconds": 0, "steps": 1})
    now = utcnow()
    with session_scope() as s:
        row = s.get(Job, job.id)
        row.status = status
        row.created_at = now - dt.timedelta(seconds=created_age_s)
        row.heartbeat_at = None if heartbeat_age_s is None else now - dt.timedelta(seconds=heartbeat_age_s)
        if status == "running":
            row.attempts, row.worker = 1, "dead-host:1"
    return job.id


def test_stale_running_job_is_requeued_once_and_then_runs_once():
    dead = _job("running", heartbeat_age_s=120)
    alive = _job("running", heartbeat_age_s=1)
    sent: list[str] = []
    requeued = reap_stale(enqueue=lambda j: sent.append(j.id), stale_after_s=30, requeue_queued_after_s=600)
    assert dead in requeued and alive not in requeued
    assert sent.count(dead) == 1 and alive not in sent
    with session_scope() as s:
        row = s.get(Job, dead)
        assert row.status == "queued" and row.worker is None
    # a second sweep finds nothing more to do for it (idempotent)
    again = reap_stale(enqueue=lambda j: sent.append(j.id), stale_after_s=30, requeue_queued_after_s=600)
    assert dead not in again and sent.count(dead) == 1
    # the re-sent message runs it; a late duplicate of the old message finds it finished
    assert execute_job(dead).status == "succeeded"
    assert execute_job(dead).status == "finished"
    with session_scope() as s:
        assert s.get(Job, dead).attempts == 2
        assert s.get(Job, alive).status == "running"


def test_queued_job_whose_message_was_lost_is_sent_again():
    lost = _job("queued", heartbeat_age_s=None, created_age_s=900)
    fresh = _job("queued", heartbeat_age_s=None, created_age_s=5)
    sent: list[str] = []
    reap_stale(enqueue=lambda j: sent.append(j.id), stale_after_s=30, requeue_queued_after_s=600)
    assert lost in sent and fresh not in sent
    # stamped as just sent: not again until requeue_queued_after_s has passed once more
    reap_stale(enqueue=lambda j: sent.append(j.id), stale_after_s=30, requeue_queued_after_s=600)
    assert sent.count(lost) == 1


def test_concurrent_reapers_send_each_job_once():
    ids = [_job("running", heartbeat_age_s=300) for _ in range(6)]
    sent: list[str] = []
    lock = threading.Lock()

    def send(j):
        with lock:
            sent.append(j.id)

    threads = [
        threading.Thread(
            target=reap_stale, kwargs={"enqueue": send, "stale_after_s": 30, "requeue_queued_after_s": 600}
        )
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(x for x in sent if x in ids) == sorted(ids)


def test_finished_jobs_are_never_touched():
    done = _job("succeeded", heartbeat_age_s=9999, created_age_s=9999)
    sent: list[str] = []
    reap_stale(enqueue=lambda j: sent.append(j.id), stale_after_s=1, requeue_queued_after_s=1)
    assert done not in sent
    with session_scope() as s:
        assert s.get(Job, done).status == JobStatus.succeeded.value
