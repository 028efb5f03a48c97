"""Fixtures of the API tests: a worker inside the test process for the jobs the API sends."""

from __future__ import annotations

import threading

import pytest


class InlineWorker:
    """Runs each job the API sends in a thread of this process, as a worker would (``execute_job``).

    ``only``: the methods to run (``None``: all); the others stay queued (their ids in ``left``).
    """

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.only: set[str] | None = None
        self.left: list[str] = []

    def send(self, job) -> None:
        from core.jobs.lifecycle import execute_job

        if self.only is not None and job.method not in self.only:
            self.left.append(job.id)
            return
        t = threading.Thread(target=execute_job, args=(job.id,), daemon=True, name=f"inline-job-{job.id[:8]}")
        self.threads.append(t)
        t.start()


@pytest.fixture
def inline_worker(monkeypatch):
    """Jobs the API sends (``deps.enqueue``) run at once in threads of this process, where the scripted models
    a test installs live (:class:`InlineWorker`); every thread is joined (up to a minute) when the test ends."""
    from services.api import deps

    worker = InlineWorker()
    monkeypatch.setattr(deps, "enqueue", worker.send)
    yield worker
    for t in worker.threads:
        t.join(60)
