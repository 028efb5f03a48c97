"""The job lifecycle run in-process: success with artifacts, failure kept, cancellation."""

import threading
import time

import pytest
from pydantic import BaseModel

from core.db import crud
from core.db.models import ArtifactRow, Job, JobStatus, ReportRow
from core.db.session import session_scope
from core.jobs import InvalidParams, JobContext, Report, UnknownMethod, register_method, registry_snapshot
from core.jobs.lifecycle import execute_job, run_inline, submit_job


class _Empty(BaseModel):
    pass


def _with_artifacts(params: _Empty, progress: JobContext) -> Report:
    progress(0.5, "half")
    r = Report(title="with files")
    r.add_file("a.txt", "hello")
    r.add_section("s", "text")
    return r


@pytest.fixture(scope="module", autouse=True)
def _test_methods():
    """This module's job types, registered for its tests only."""
    with registry_snapshot():
        register_method("test.artifacts")(_with_artifacts)
        register_method("test.flaky")(_flaky)
        yield


def test_success_stores_report_and_artifacts(settings):
    job_id, out = run_inline("test.artifacts", {})
    assert out.status == "succeeded"
    with session_scope() as s:
        job = s.get(Job, job_id)
        assert job.status == "succeeded" and job.progress == 1.0 and job.attempts == 1
        rep = crud.get_report_for_job(s, job_id=job_id)
        art_id = rep.body["artifacts"][0]["id"]
        art = s.get(ArtifactRow, art_id)
        assert art.name == "a.txt" and art.size == 5
    from core.artifacts import get_artifact_store

    assert get_artifact_store().read(art.sha256) == b"hello"


def test_failure_keeps_the_message_and_traceback():
    job_id, out = run_inline("diag.sleep", {"seconds": 0, "steps": 1, "fail": True, "message": "boom 42"})
    assert out.status == "failed"
    with session_scope() as s:
        job = s.get(Job, job_id)
        assert job.status == "failed" and "boom 42" in job.message and "RuntimeError" in job.error


def test_cancel_running_job_stops_it():
    job, _ = submit_job("diag.sleep", {"seconds": 5, "steps": 50})
    result = {}
    th = threading.Thread(target=lambda: result.update(out=execute_job(job.id)))
    th.start()
    time.sleep(1.0)
    with session_scope() as s:
        crud.request_cancel(s, job_id=job.id)
    th.join(timeout=10)
    assert result["out"].status == "cancelled"
    with session_scope() as s:
        assert s.get(Job, job.id).status == "cancelled"


def test_bad_input_writes_nothing():
    with session_scope() as s:
        before = s.query(Job).count()
    with pytest.raises(UnknownMethod):
        submit_job("nope", {})
    with pytest.raises(InvalidParams):
        submit_job("diag.sleep", {"seconds": -1})
    with session_scope() as s:
        assert s.query(Job).count() == before


_flaky_calls = {"n": 0}


def _flaky(params: _Empty, progress: JobContext) -> Report:
    from core.jobs import TransientError

    _flaky_calls["n"] += 1
    if _flaky_calls["n"] == 1:
        raise TransientError("connection reset")
    return Report(title="second time lucky")


def test_transient_error_asks_for_a_retry_and_the_retry_takes_over():
    job, _ = submit_job("test.flaky", {})
    first = execute_job(job.id)
    assert first.retry and first.status == "failed" and "connection reset" in first.error
    with session_scope() as s:
        row = s.get(Job, job.id)
        assert row.status == "running" and row.heartbeat_at is None  # free for the retry to claim
    second = execute_job(job.id)
    assert second.status == "succeeded"
    with session_scope() as s:
        assert s.get(Job, job.id).attempts == 2


@pytest.fixture
def on_postgres(settings, postgres_url, monkeypatch):
    """The application database is a fresh PostgreSQL one for this test (engine caches reset both ways)."""
    from core.db import migrate
    from core.db.session import get_engine

    migrate.upgrade(postgres_url)
    monkeypatch.setattr(settings, "database_url", postgres_url)
    get_engine.cache_clear()  # session_scope() caches the engine of the default URL
    try:
        yield settings
    finally:
        monkeypatch.undo()
        get_engine.cache_clear()


def test_fast_paths_on_postgres(on_postgres, monkeypatch):
    """Claim by one UPDATE … RETURNING, report + end state in one async-commit transaction, report upsert."""
    from sqlalchemy import text

    from core.jobs.lifecycle import persist_report, state_transaction

    job_id, out = run_inline("test.artifacts", {})
    assert out.status == "succeeded"
    with state_transaction() as s:
        assert s.execute(text("show synchronous_commit")).scalar() == "off"
    with session_scope() as s:
        job = s.get(Job, job_id)
        assert (job.status, job.attempts, job.progress) == ("succeeded", 1, 1.0) and job.started_at is not None
        first = crud.get_report_for_job(s, job_id=job_id).id
    assert persist_report(job_id, Report(title="again")) == first  # a second report replaces the first, in place
    with session_scope() as s:
        assert [r.title for r in s.query(ReportRow).filter_by(job_id=job_id)] == ["again"]
    monkeypatch.setattr(on_postgres, "job_async_commit", False)
    with state_transaction() as s:
        assert s.execute(text("show synchronous_commit")).scalar() == "on"
    # a cancelled-before-start job is not claimed by the fast path
    job, _ = submit_job("diag.sleep", {"seconds": 0})
    with session_scope() as s:
        s.get(Job, job.id).cancel_requested = True
    assert execute_job(job.id).status == "finished"
    with session_scope() as s:
        assert s.get(Job, job.id).status == "cancelled"


def test_one_statement_submit_claim_and_finish_on_postgres(on_postgres):
    """Submission is one INSERT (an idempotency key reused returns the first job), the claim and the end
    state are one statement each and notify listeners; a second report upserts in place."""
    import psycopg
    from sqlalchemy.engine import make_url

    from core.jobs.lifecycle import NOTIFY_CHANNEL, persist_report

    first, created = submit_job("diag.sleep", {"seconds": 0}, owner="k1", idempotency_key="same")
    again, created_again = submit_job("diag.sleep", {"seconds": 0}, owner="k1", idempotency_key="same")
    other, created_other = submit_job("diag.sleep", {"seconds": 0}, owner="k2", idempotency_key="same")
    assert (created, created_again, created_other) == (True, False, True)
    assert again.id == first.id and other.id != first.id
    assert (first.status, first.queue, first.attempts, first.owner) == ("queued", "cpu", 0, "k1")
    with session_scope() as s:
        row = s.get(Job, first.id)
        assert (row.status, row.params["seconds"], row.idempotency_key) == ("queued", 0.0, "same")
        assert row.created_at is not None

    url = make_url(on_postgres.database_url).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as listener:
        listener.execute(f"LISTEN {NOTIFY_CHANNEL}")
        assert execute_job(first.id).status == "succeeded"
        notes = [n.payload for n in listener.notifies(timeout=2.0, stop_after=2)]
    assert notes == [first.id, first.id]  # claimed, then ended
    with session_scope() as s:
        job = s.get(Job, first.id)
        assert (job.status, job.attempts, job.progress, job.error) == ("succeeded", 1, 1.0, None)
        assert job.started_at is not None and job.finished_at >= job.started_at
        report = crud.get_report_for_job(s, job_id=first.id)
        assert report.body["title"] == report.title
    assert execute_job(first.id).status == "finished"  # a redelivered message runs nothing
    assert persist_report(first.id, Report(title="again"), finish=(JobStatus.succeeded, "x")) == report.id
    with session_scope() as s:
        assert [r.title for r in s.query(ReportRow).filter_by(job_id=first.id)] == ["again"]
        assert s.get(Job, first.id).message.startswith("slept")  # an ended job keeps its end state


def test_a_job_the_broker_refuses_is_recorded_failed():
    """submit_job raises EnqueueError; submit_jobs reports it on the refused item only; both rows end failed."""
    from core.jobs.lifecycle import BatchItem, EnqueueError, submit_jobs

    def refuse(job):
        raise ConnectionError("broker down")

    with pytest.raises(EnqueueError, match="broker down"):
        submit_job("diag.sleep", {"seconds": 0}, enqueue=refuse)
    with session_scope() as s:
        row = s.query(Job).order_by(Job.created_at.desc()).first()
        assert (row.status, row.message, row.error) == (
            "failed",
            "could not enqueue",
            "could not enqueue: ConnectionError: broker down",
        )
    sent = []

    def refuse_the_second(job):
        sent.append(job.id)
        if len(sent) == 2:
            raise ConnectionError("broker down")

    results = submit_jobs([BatchItem("diag.sleep", {"seconds": 0}) for _ in range(3)], enqueue=refuse_the_second)
    assert [type(r.error).__name__ if r.error else None for r in results] == [None, "EnqueueError", None]
    with session_scope() as s:
        assert [s.get(Job, r.job.id).status for r in results] == ["queued", "failed", "queued"]
