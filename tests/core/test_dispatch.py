"""Fan-out for agents: enqueue records and sends a job, wait polls the rows (backoff, steal, timeout, failure)."""

from __future__ import annotations

import threading
import uuid

import pytest

from core.db import crud
from core.db.session import session_scope
from core.jobs import InvalidParams, JobCancelled, JobContext
from core.jobs.dispatch import (
    NoSender,
    SubJobFailed,
    WaitTimeout,
    enqueue,
    get_sender,
    register_sender,
    rows,
    wait,
)
from core.jobs.lifecycle import execute_job

QUICK = {"seconds": 0, "steps": 1}


@pytest.fixture
def sent():
    """A recording sender installed as the process's sender (the previous one restored)."""
    log: list = []
    previous = register_sender(log.append)
    yield log
    register_sender(previous)


def _key() -> str:
    return f"test-{uuid.uuid4().hex}"


def test_enqueue_records_then_sends(sent):
    job_id = enqueue("diag.sleep", QUICK)
    assert [j.id for j in sent] == [job_id]
    (row,) = rows([job_id])
    assert row.status == "queued" and row.method == "diag.sleep" and row.queue == sent[0].queue


def test_idempotency_key_sends_once_and_queue_override(sent):
    key = _key()
    first = enqueue("diag.sleep", QUICK, idempotency_key=key, queue="gpu")
    again = enqueue("diag.sleep", QUICK, idempotency_key=key, queue="gpu")
    assert first == again and len(sent) == 1 and sent[0].queue == "gpu"


def test_bad_input_records_nothing(sent):
    with session_scope() as s:
        before = len(crud.list_jobs(s, limit=10_000))
    with pytest.raises(InvalidParams):
        enqueue("diag.sleep", {"seconds": "soon"})
    with pytest.raises(ValueError, match="queue"):
        enqueue("diag.sleep", QUICK, queue="GPU; drop")
    previous = register_sender(None)
    try:
        with pytest.raises(NoSender, match="services.worker"):
            get_sender()
        with pytest.raises(NoSender):
            enqueue("diag.sleep", QUICK)
    finally:
        register_sender(previous)
    with session_scope() as s:
        assert len(crud.list_jobs(s, limit=10_000)) == before
    assert sent == []


def test_explicit_send_beats_the_registered_one(sent):
    mine: list = []
    enqueue("diag.sleep", QUICK, send=mine.append)
    assert len(mine) == 1 and sent == []


def test_wait_returns_rows_once_a_worker_ran_them(sent):
    ids = [enqueue("diag.sleep", QUICK) for _ in range(2)]
    worker = threading.Timer(0.3, lambda: [execute_job(j, worker="other-host:1") for j in ids])
    worker.start()
    try:
        done = wait(ids, timeout=30, poll=0.05, max_poll=0.2)
    finally:
        worker.join()
    assert [r.id for r in done] == ids and all(r.status == "succeeded" and r.worker == "other-host:1" for r in done)


def test_wait_raises_on_a_failed_sub_job(sent):
    ok = enqueue("diag.sleep", QUICK)
    bad = enqueue("diag.sleep", {**QUICK, "fail": True, "message": "boom 17"})
    execute_job(bad)
    with pytest.raises(SubJobFailed, match="boom 17") as info:
        wait([ok, bad], timeout=5, poll=0.05)
    assert info.value.job.id == bad and info.value.job.status == "failed"
    (row,) = wait([bad], timeout=5, poll=0.05, raise_on_failure=False)
    assert row.status == "failed"


def test_wait_times_out_with_the_pending_ids(sent):
    job_id = enqueue("diag.sleep", QUICK)
    with pytest.raises(WaitTimeout, match=job_id):
        wait([job_id], timeout=0.3, poll=0.05, max_poll=0.1)


def test_wait_runs_a_job_still_queued_after_steal_after(sent):
    job_id = enqueue("diag.sleep", QUICK)
    stolen: list[str] = []
    (row,) = wait([job_id], timeout=30, poll=0.05, steal_after=0.2, on_steal=stolen.append)
    assert row.status == "succeeded" and stolen == [job_id]


def test_wait_reports_and_stops_when_the_waiter_is_cancelled(sent):
    job_id = enqueue("diag.sleep", QUICK)
    messages: list[str] = []

    def sink(fraction: float, message: str) -> bool:
        messages.append(message)
        return len(messages) >= 2  # the waiting job itself was cancelled

    with pytest.raises(JobCancelled):
        wait([job_id], timeout=30, poll=0.01, max_poll=0.01, progress=JobContext(sink, min_interval_s=0))
    assert messages[0] == "waiting for 1 sub-job(s)"


def test_wait_refuses_bad_arguments_and_unknown_ids():
    with pytest.raises(ValueError, match="timeout"):
        wait(["x"], timeout=0)
    with pytest.raises(ValueError, match="poll"):
        wait(["x"], timeout=1, poll=2, max_poll=1)
    with pytest.raises(SubJobFailed, match="no such job"):
        wait(["0" * 32], timeout=1)


def test_wait_backs_off_between_polls(sent, monkeypatch):
    import core.jobs.dispatch as dispatch

    job_id = enqueue("diag.sleep", QUICK)
    delays: list[float] = []

    def fake_sleep(s: float) -> None:
        delays.append(round(s, 3))
        if len(delays) == 5:
            execute_job(job_id)

    monkeypatch.setattr(dispatch, "_sleep", fake_sleep)
    (row,) = wait([job_id], timeout=3600, poll=0.5, max_poll=1.5, backoff=2.0)
    assert row.status == "succeeded" and delays == [0.5, 1.0, 1.5, 1.5, 1.5]
