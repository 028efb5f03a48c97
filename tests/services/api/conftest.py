"""Fixtures of the API tests: a worker inside the test process for the jobs the API sends."""

from __future__ import annotations

import threading

import pytest


@pytest.fixture
def inline_worker(monkeypatch):
    """Jobs the API sends (``deps.enqueue``) run at once, each in a thread of this process, as a worker would run
    them (:func:`core.jobs.lifecycle.execute_job`): the scripted models a test installs live in this process.

    Yields the threads started; each is joined (up to a minute) when the test ends.
    """
    from core.jobs.lifecycle import execute_job
    from services.api import deps

    threads: list[threading.Thread] = []

    def send(job) -> None:
        t = threading.Thread(target=execute_job, args=(job.id,), daemon=True, name=f"inline-job-{job.id[:8]}")
        threads.append(t)
        t.start()

    monkeypatch.setattr(deps, "enqueue", send)
    yield threads
    for t in threads:
        t.join(60)
