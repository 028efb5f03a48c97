"""The reaper: re-enqueue jobs whose worker died (stale heartbeat) or whose broker message was lost.

Every worker runs a :class:`Reaper` thread (and so does ``paperworks up`` through its workers); any
other process may call :func:`reap_stale`. Each job is moved back by one conditional UPDATE in the
job store (:meth:`core.db.jobstore.JobStore.requeue`), so of several reapers one wins and sends one
message.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading

from core.config import get_settings
from core.db.jobstore import get_job_store
from core.db.models import utcnow
from core.jobs.submit import Enqueue

log = logging.getLogger(__name__)


def reap_stale(
    *,
    enqueue: Enqueue | None = None,
    stale_after_s: float | None = None,
    requeue_queued_after_s: float | None = None,
    limit: int = 500,
) -> list[str]:
    """Re-enqueue jobs whose worker died (or whose broker message was lost); returns their ids.

    * a ``running`` job whose heartbeat is older than ``stale_after_s`` (default
      ``settings.job_stale_after_s``) goes back to ``queued`` and is sent again;
    * a ``queued`` job last sent more than ``requeue_queued_after_s`` ago
      (``settings.job_requeue_queued_after_s``) is sent again.

    Idempotent and safe to run from every worker (and from ``paperworks up``) at once: each
    job is moved by one conditional UPDATE, so one reaper wins and sends one message. A
    message the broker redelivers later finds the job already claimed or ended
    (:func:`core.jobs.execute.execute_job` runs a job to completion at most once). ``enqueue``
    defaults to the sender the worker package registered (:func:`core.jobs.sender.get_sender`).
    """
    settings = get_settings()
    stale = settings.job_stale_after_s if stale_after_s is None else stale_after_s
    queued_after = settings.job_requeue_queued_after_s if requeue_queued_after_s is None else requeue_queued_after_s
    if enqueue is None:
        from core.jobs.sender import get_sender

        enqueue = get_sender()
    now = utcnow()
    running_before = now - dt.timedelta(seconds=stale)
    queued_before = now - dt.timedelta(seconds=queued_after)
    jobs = get_job_store()
    candidates = jobs.stale_jobs(running_before=running_before, queued_before=queued_before, limit=limit)
    requeued: list[str] = []
    for job_id, was in candidates:
        job = jobs.requeue(job_id, running_before=running_before, queued_before=queued_before)
        if job is None:
            continue  # another reaper took it, or it moved on
        try:
            enqueue(job)
        except Exception:
            # the row says queued with a fresh stamp; the next sweep after requeue_queued_after_s retries
            log.warning("reaper could not re-send job %s", job_id, exc_info=True)
            continue
        log.warning("reaper re-enqueued job %s (was %s)", job_id, was)
        requeued.append(job_id)
    return requeued


class Reaper(threading.Thread):
    """A daemon thread calling :func:`reap_stale` every ``interval_s`` (first sweep at once)."""

    def __init__(self, *, enqueue: Enqueue | None = None, interval_s: float | None = None) -> None:
        super().__init__(daemon=True, name="paperworks-reaper")
        self.enqueue = enqueue
        self.interval_s = interval_s or get_settings().job_reap_interval_s
        self.stop = threading.Event()

    def run(self) -> None:
        while True:
            try:
                reap_stale(enqueue=self.enqueue)
            except Exception:  # a DB hiccup: try again next sweep
                log.warning("reaper sweep failed", exc_info=True)
            if self.stop.wait(self.interval_s):
                return
