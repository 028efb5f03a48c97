"""Where rollouts and evaluations run: in this process, or fanned out as jobs of the platform.

:class:`InlineDispatcher` calls :mod:`agents.pae.work` directly (bounded parallel
browsers in threads). :class:`JobDispatcher` records one ``pae.rollouts`` /
``pae.evaluate`` job per batch with :func:`core.jobs.dispatch.enqueue` (the sender
the worker package registers) and waits on the jobs' rows with
:func:`core.jobs.dispatch.wait` (polling with backoff, never ``.get()`` on a result).
A batch still queued after ``steal_after_s`` is claimed and run here, so an
orchestrator running on a single solo worker cannot deadlock waiting for its own
children.

Why not :func:`core.jobs.dispatch.map_jobs` (the shared fan-out): a rollout batch's result is the
trajectory ids the batch stored, read back from the PAE store by slot (not the job report's data that
``map_jobs`` returns); the caller sets the poll interval and counts stolen batches (``on_steal``), which
``map_jobs`` does not expose; and the orchestrator, not ``use_jobs``, has already chosen jobs over this
process. The batching and the content keys would map onto ``map_jobs(keys=...)``; the rest would need
``map_jobs`` to grow those parameters.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from agents.pae import work
from core.jobs import JobContext, null_context

log = logging.getLogger(__name__)


class Dispatcher(Protocol):
    def rollouts(self, **params: Any) -> list[str]: ...

    def evaluate(self, **params: Any) -> dict[str, int]: ...


class InlineDispatcher:
    """Run everything in this process."""

    def __init__(self, progress: JobContext | None = None) -> None:
        self.progress = progress or null_context()

    def rollouts(self, **params: Any) -> list[str]:
        return work.do_rollouts(**params, progress=self.progress)

    def evaluate(self, **params: Any) -> dict[str, int]:
        return work.do_evaluate(**params, progress=self.progress)


class JobDispatcher:
    """Fan batches out as jobs of the platform (Celery workers run them)."""

    def __init__(
        self,
        *,
        batch_size: int = 8,
        enqueue: Callable[[Any], None] | None = None,
        poll_s: float = 0.5,
        max_poll_s: float = 10.0,
        steal_after_s: float = 30.0,
        timeout_s: float = 6 * 3600,
        progress: JobContext | None = None,
        owner: str = "local",
    ) -> None:
        """``enqueue`` sends a recorded job (default: the sender registered by the worker package)."""
        self.batch_size, self.send = batch_size, enqueue
        self.poll_s, self.max_poll_s = poll_s, max_poll_s
        self.steal_after_s, self.timeout_s = steal_after_s, timeout_s
        self.progress = progress or null_context()
        self.owner = owner
        self.stolen = 0
        self.job_ids: list[str] = []

    def _submit(self, method: str, params: dict[str, Any], key: str) -> str:
        from core.jobs.dispatch import enqueue

        job_id = enqueue(method, params, idempotency_key=key, owner=self.owner, send=self.send)
        self.job_ids.append(job_id)
        return job_id

    def _wait(self, job_ids: list[str]) -> None:
        from core.jobs.dispatch import wait

        def stole(_job_id: str) -> None:
            self.stolen += 1

        wait(
            job_ids,
            timeout=self.timeout_s,
            poll=self.poll_s,
            max_poll=max(self.poll_s, self.max_poll_s),
            steal_after=self.steal_after_s,
            progress=self.progress,
            on_steal=stole,
        )

    def rollouts(self, **params: Any) -> list[str]:
        assignments = list(params.pop("assignments"))
        ids = []
        for i in range(0, len(assignments), self.batch_size):
            chunk = assignments[i : i + self.batch_size]
            p = {**params, "assignments": [list(a) for a in chunk]}
            key = f"pae:{params['run_id']}:{params['phase']}:{params['iteration']}:{chunk[0][0]}-{chunk[-1][0]}"
            ids.append(self._submit("pae.rollouts", p, key))
        self._wait(ids)
        from agents.pae import store

        rows = {
            r["slot"]: r["id"]
            for r in store.trajectory_rows(
                run_id=params["run_id"], phase=params["phase"], iteration=params["iteration"]
            )
        }
        return [rows[slot] for slot, _ in assignments if slot in rows]

    def evaluate(self, **params: Any) -> dict[str, int]:
        tids = list(params.pop("trajectory_ids"))
        ids = []
        for i in range(0, len(tids), self.batch_size):
            chunk = tids[i : i + self.batch_size]
            key = f"pae:eval:{chunk[0]}:{chunk[-1]}:{len(chunk)}:{params.get('judge')}"
            ids.append(self._submit("pae.evaluate", {**params, "trajectory_ids": chunk}, key))
        self._wait(ids)
        return {"jobs": len(ids)}
