"""The job store's contract, the same test on SQLite and on PostgreSQL (issue #48 part 4).

Every promise of :class:`core.db.jobstore.JobStore` — idempotent submission (single and batch), the
claim's outcomes, an end state written once, the report upsert, the reaper's one-winner requeue —
is checked against both implementations through the same calls.
"""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from core.db import crud
from core.db.jobstore import Claim, NewArtifact, NewJob, get_job_store
from core.db.jobstore.postgres import PostgresJobStore
from core.db.jobstore.sqlite import SQLiteJobStore
from core.db.models import ArtifactRow, Job, JobStatus, ReportRow, new_id, utcnow
from core.db.session import session_scope


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, settings, monkeypatch):
    """The configured job store on SQLite (the session's database) or on a fresh migrated PostgreSQL one."""
    from core.db import migrate
    from core.db.session import get_engine

    url = None
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_url")
    elif not str(settings.database_url).startswith("sqlite"):  # the suite itself runs on PostgreSQL
        url = f"sqlite:///{request.getfixturevalue('tmp_path') / 'jobs.db'}"
    if url is not None:
        migrate.upgrade(url)
        monkeypatch.setattr(settings, "database_url", url)
        get_engine.cache_clear()
    store = get_job_store()
    assert isinstance(store, PostgresJobStore if request.param == "postgres" else SQLiteJobStore)
    yield store
    monkeypatch.undo()
    get_engine.cache_clear()


def _new(owner: str = "o", key: str | None = None, seconds: float = 0.0) -> NewJob:
    return NewJob(method="diag.sleep", params={"seconds": seconds}, queue="cpu", owner=owner, idempotency_key=key)


def _row(job_id: str) -> Job:
    with session_scope() as s:
        job = s.get(Job, job_id)
        s.expunge(job)
    return job


def test_create_is_idempotent_per_owner(store):
    key = f"k-{new_id()}"
    first, created = store.create(_new("o1", key))
    again, created_again = store.create(_new("o1", key, seconds=5))
    other, created_other = store.create(_new("o2", key))
    assert (created, created_again, created_other) == (True, False, True)
    assert again.id == first.id != other.id
    row = _row(first.id)
    assert (row.status, row.attempts, row.progress, row.params, row.queue) == (
        "queued",
        0,
        0.0,
        {"seconds": 0.0},
        "cpu",
    )
    assert (first.status, first.owner, first.idempotency_key) == ("queued", "o1", key)  # readable once detached


def test_create_many_in_order_with_earlier_and_repeated_keys(store):
    used = f"used-{new_id()}"
    earlier, _ = store.create(_new("o", used))
    twice = f"twice-{new_id()}"
    out = store.create_many([_new("o", twice), _new("o", used), _new("o"), _new("o", twice), _new("p", twice)])
    assert [created for _, created in out] == [True, False, True, False, True]
    ids = [job.id for job, _ in out]
    assert ids[1] == earlier.id and ids[3] == ids[0] and len({ids[0], ids[2], ids[4]}) == 3
    assert [_row(i).owner for i in ids] == ["o", "o", "o", "o", "p"]


def test_claim_outcomes(store):
    job, _ = store.create(_new())
    assert store.claim(job.id, worker="w1", stale_after_s=30) == Claim("claimed", "diag.sleep", {"seconds": 0.0})
    row = _row(job.id)
    assert (row.status, row.worker, row.attempts) == ("running", "w1", 1) and row.heartbeat_at is not None
    assert store.claim(job.id, worker="w2", stale_after_s=30).status == "busy"  # w1's heartbeat is fresh
    store.release(job.id)  # a transient error: the job is free for its retry at once
    assert _row(job.id).heartbeat_at is None
    assert store.claim(job.id, worker="w2", stale_after_s=30).status == "claimed"
    assert (_row(job.id).worker, _row(job.id).attempts) == ("w2", 2)
    assert store.finish(job.id, status=JobStatus.failed, message="boom", error="tb") is True
    assert store.finish(job.id, status=JobStatus.succeeded) is False  # ended once
    assert (_row(job.id).status, _row(job.id).error) == ("failed", "tb")
    assert store.claim(job.id, worker="w3", stale_after_s=30).status == "finished"
    assert store.claim("no-such-job", worker="w3", stale_after_s=30) == Claim("missing")


def test_cancelled_before_start_is_not_claimed(store):
    job, _ = store.create(_new())
    with session_scope() as s:
        crud.get_job(s, job_id=job.id).cancel_requested = True
    assert store.claim(job.id, worker="w", stale_after_s=30).status == "finished"
    assert _row(job.id).status == "cancelled"


def test_heartbeat_and_progress_report_a_cancellation(store):
    job, _ = store.create(_new())
    store.claim(job.id, worker="w", stale_after_s=30)
    assert store.progress(job.id, fraction=1.7, message="x" * 3000) is False
    row = _row(job.id)
    assert (row.progress, len(row.message)) == (1.0, 2000)
    with session_scope() as s:
        crud.request_cancel(s, job_id=job.id)
    assert store.heartbeat(job.id) is True


def test_report_with_end_state_upserts_in_place_and_ends_once(store):
    job, _ = store.create(_new())
    store.claim(job.id, worker="w", stale_after_s=30)
    first = store.save_report(job.id, title="t" * 600, summary="s", body={"a": 1}, finish=(JobStatus.succeeded, "done"))
    row = _row(job.id)
    assert (row.status, row.progress, row.message) == ("succeeded", 1.0, "done")
    again = store.save_report(job.id, title="again", summary="", body={}, finish=(JobStatus.failed, "late"))
    assert again == first
    with session_scope() as s:
        reports = s.query(ReportRow).filter_by(job_id=job.id).all()
        assert [(r.id, r.title) for r in reports] == [(first, "again")]
    assert (_row(job.id).status, _row(job.id).message) == ("succeeded", "done")  # an ended job keeps its end state


def test_report_with_artifacts_and_without_a_job(store):
    job, _ = store.create(_new())
    store.claim(job.id, worker="w", stale_after_s=30)
    art = NewArtifact(id=new_id(), name="a.txt", kind="file", mime="text/plain", sha256="0" * 64, size=5)
    rid = store.save_report(
        job.id, title="t", summary="", body={"artifacts": [art.id]}, artifacts=[art], finish=(JobStatus.succeeded, "ok")
    )
    with session_scope() as s:
        stored = s.get(ArtifactRow, art.id)
        assert (stored.job_id, stored.name, stored.size) == (job.id, "a.txt", 5)
        assert crud.get_report_for_job(s, job_id=job.id).id == rid
    assert _row(job.id).status == "succeeded"
    orphan = store.save_report(None, title="no job", summary="", body={})
    with session_scope() as s:
        assert s.get(ReportRow, orphan).job_id is None


def test_fail_ends_queued_and_running_jobs_once(store):
    queued, _ = store.create(_new())
    running, _ = store.create(_new())
    store.claim(running.id, worker="w", stale_after_s=30)
    done, _ = store.create(_new())
    store.finish(done.id, status=JobStatus.cancelled, message="cancelled")
    n = store.fail({queued.id: "e1", running.id: "e2", done.id: "e3"}, message="could not enqueue")
    assert n == 2
    assert [(_row(j).status, _row(j).error) for j in (queued.id, running.id, done.id)] == [
        ("failed", "e1"),
        ("failed", "e2"),
        ("cancelled", None),
    ]


def test_requeue_has_one_winner(store):
    jobs = [store.create(_new())[0] for _ in range(4)]
    old = utcnow() - dt.timedelta(seconds=600)
    with session_scope() as s:
        for j in jobs:
            row = s.get(Job, j.id)
            row.status, row.heartbeat_at, row.worker = "running", old, "dead:1"
    now = utcnow()
    running_before, queued_before = now - dt.timedelta(seconds=30), now - dt.timedelta(seconds=3600)
    stale = dict(store.stale_jobs(running_before=running_before, queued_before=queued_before, limit=10_000))
    assert all(stale.get(j.id) == "running" for j in jobs)
    won: list[str] = []
    lock = threading.Lock()

    def sweep() -> None:
        for j in jobs:
            got = store.requeue(j.id, running_before=running_before, queued_before=queued_before)
            if got is not None:
                with lock:
                    won.append(got.id)

    threads = [threading.Thread(target=sweep) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won) == sorted(j.id for j in jobs)
    assert {(_row(j.id).status, _row(j.id).worker) for j in jobs} == {("queued", None)}


def test_reads(store):
    a, _ = store.create(_new())
    b, _ = store.create(_new())
    store.finish(b.id, status=JobStatus.cancelled)
    assert store.get(a.id).id == a.id and store.get("nope") is None
    rows = store.columns([a.id, b.id, "nope"], ["id", "status", "not_a_column"])
    assert sorted((r["id"], r["status"]) for r in rows) == sorted([(a.id, "queued"), (b.id, "cancelled")])
    assert set(rows[0]) == {"id", "status"}
    assert store.count([a.id, b.id], ["succeeded", "failed", "cancelled"]) == 1


def test_batch_falls_back_to_one_by_one_when_a_key_is_taken_meanwhile(store, monkeypatch):
    """Another request takes one of the batch's keys between the batch's read of its keys and its insert: the
    batch's transaction fails on the unique constraint and each item is recorded on its own instead."""
    from sqlalchemy.orm import Session

    taken, free = f"taken-{new_id()}", f"free-{new_id()}"
    add_all = Session.add_all
    raced: list[str] = []

    def add_all_after_a_concurrent_submit(self, rows):
        monkeypatch.setattr(Session, "add_all", add_all)
        raced.append(store.create(_new("o", taken))[0].id)  # its own transaction, committed
        return add_all(self, rows)

    monkeypatch.setattr(Session, "add_all", add_all_after_a_concurrent_submit)
    out = store.create_many([_new("o", taken), _new("o", free), _new("o")])
    assert raced and [created for _, created in out] == [False, True, True]
    assert out[0][0].id == raced[0]
    with session_scope() as s:
        assert s.query(Job).filter(Job.idempotency_key.in_([taken, free])).count() == 2
