"""API key hashing and the job state machine in the database."""

import datetime as dt

from core.db import crud
from core.db.models import Job, JobStatus
from core.db.session import session_scope


def test_api_keys_are_hashed_and_verifiable():
    with session_scope() as s:
        row, key = crud.create_api_key(s, name="t")
        assert key.startswith("pw_") and len(key) > 40
        assert row.key_hash == crud.hash_key(key) and key not in (row.key_hash, row.prefix + "x")
        assert crud.verify_api_key(s, key=key).id == row.id
        assert crud.verify_api_key(s, key=key + "x") is None
        assert crud.verify_api_key(s, key="") is None
        crud.revoke_api_key(s, key_id=row.id)
        assert crud.verify_api_key(s, key=key) is None


def test_idempotency_key_returns_the_same_job():
    with session_scope() as s:
        a, created_a = crud.create_job(s, method="diag.sleep", params={}, queue="cpu", owner="o1", idempotency_key="k1")
        b, created_b = crud.create_job(s, method="diag.sleep", params={}, queue="cpu", owner="o1", idempotency_key="k1")
        c, created_c = crud.create_job(s, method="diag.sleep", params={}, queue="cpu", owner="o2", idempotency_key="k1")
        assert created_a and not created_b and created_c
        assert a.id == b.id != c.id


def test_claim_finish_exactly_once_and_stale_takeover():
    with session_scope() as s:
        job, _ = crud.create_job(s, method="diag.sleep", params={}, queue="cpu")
        jid = job.id
    with session_scope() as s:
        assert crud.claim_job(s, job_id=jid, worker="w1", stale_after_s=30) == "claimed"
    with session_scope() as s:  # a redelivery while w1's heartbeat is fresh
        assert crud.claim_job(s, job_id=jid, worker="w2", stale_after_s=30) == "busy"
    with session_scope() as s:  # w1 died: its heartbeat is old
        s.get(Job, jid).heartbeat_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=60)
    with session_scope() as s:
        assert crud.claim_job(s, job_id=jid, worker="w2", stale_after_s=30) == "claimed"
        assert s.get(Job, jid).attempts == 2
    with session_scope() as s:
        assert crud.finish_job(s, job_id=jid, status=JobStatus.succeeded)
        assert not crud.finish_job(s, job_id=jid, status=JobStatus.failed)
    with session_scope() as s:
        assert s.get(Job, jid).status == "succeeded"
        assert crud.claim_job(s, job_id=jid, worker="w3", stale_after_s=30) == "finished"


def test_cancel_queued_job_is_immediate_running_is_requested():
    with session_scope() as s:
        q, _ = crud.create_job(s, method="diag.sleep", params={}, queue="cpu")
        r, _ = crud.create_job(s, method="diag.sleep", params={}, queue="cpu")
        crud.claim_job(s, job_id=r.id, worker="w", stale_after_s=30)
        assert crud.request_cancel(s, job_id=q.id).status == "cancelled"
        job = crud.request_cancel(s, job_id=r.id)
        assert job.status == "running" and job.cancel_requested
        assert crud.touch_job(s, job_id=r.id, progress=0.5) is True
