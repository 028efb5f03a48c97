"""Server-Sent Events, written once: the wire format, a streaming response, and job watching.

* :func:`format_event` — one SSE frame (``event:``/``id:``/``data:`` lines, blank line);
* :func:`sse_response` — a ``StreamingResponse`` over an async iterator of :class:`Event` (or
  ready frames), with keep-alive comments while nothing happens and the headers that stop
  proxies from buffering;
* :func:`watch_jobs` / :func:`job_events` — follow job rows in the database: yields a snapshot
  whenever status, progress or message change and ends when the job has ended. The reads run
  in the thread pool with short sessions (no connection is held between reads), polling with
  a backoff from ``first_poll_s`` up to ``max_poll_s``: a job that ends within a few
  milliseconds is seen within about a millisecond of it, a long job costs a few reads a second.

The jobs routes (``GET /v1/jobs/{id}?wait=S`` and ``GET /v1/jobs/{id}/events``) use these; so
can any route that streams (the agent protocol's runs).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

ENDED = ("succeeded", "failed", "cancelled")
WATCHED = ("status", "progress", "message")


@dataclass
class Event:
    """One server-sent event: ``data`` is sent as JSON unless it is already a string."""

    data: Any
    event: str | None = None
    id: str | None = None
    retry_ms: int | None = None


def format_event(data: Any, *, event: str | None = None, id: str | None = None, retry_ms: int | None = None) -> str:
    """One SSE frame. Multi-line data becomes several ``data:`` lines, as the format requires."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"), default=str)
    lines = []
    if event:
        lines.append(f"event: {_one_line(event)}")
    if id is not None:
        lines.append(f"id: {_one_line(id)}")
    if retry_ms is not None:
        lines.append(f"retry: {int(retry_ms)}")
    lines += [f"data: {line}" for line in text.split("\n")]
    return "\n".join(lines) + "\n\n"


def _one_line(value: str) -> str:
    return str(value).replace("\r", " ").replace("\n", " ")


async def _frames(events: AsyncIterator[Event | str], keepalive_s: float) -> AsyncIterator[str]:
    it = events.__aiter__()
    pending: asyncio.Task | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(it.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=keepalive_s)
            if not done:
                yield ": keep-alive\n\n"
                continue
            try:
                ev = pending.result()
            except StopAsyncIteration:
                return
            finally:
                pending = None
            if isinstance(ev, str):
                yield ev
            else:
                yield format_event(ev.data, event=ev.event, id=ev.id, retry_ms=ev.retry_ms)
    finally:
        if pending is not None:
            pending.cancel()
        aclose = getattr(it, "aclose", None)
        if aclose is not None:
            await aclose()


def sse_response(events: AsyncIterator[Event | str], *, keepalive_s: float = 15.0) -> StreamingResponse:
    """Stream ``events`` as ``text/event-stream`` (a ``: keep-alive`` comment after ``keepalive_s`` of quiet)."""
    return StreamingResponse(
        _frames(events, keepalive_s),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"},
    )


# --- watching jobs -------------------------------------------------------------------------------


def _read_jobs(job_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The jobs as ``GET /v1/jobs/{id}`` shows them: one SELECT on an autocommit connection (no BEGIN/COMMIT)."""
    from sqlalchemy import select

    from core.db.models import Job
    from core.db.session import get_engine
    from services.api.schemas import JobPublic

    cols = [Job.__table__.c[name] for name in JobPublic.model_fields if name in Job.__table__.c]
    with get_engine().connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        rows = c.execute(select(*cols).where(Job.id.in_(job_ids))).mappings().all()
    return {r["id"]: JobPublic.model_validate(dict(r)).model_dump(mode="json") for r in rows}


async def watch_jobs(
    job_ids: list[str],
    *,
    timeout_s: float | None = None,
    first_poll_s: float = 0.001,
    max_poll_s: float = 0.25,
    read: Callable[[list[str]], dict[str, dict[str, Any]]] = _read_jobs,
) -> AsyncIterator[dict[str, Any]]:
    """Yield each job's snapshot when first seen and whenever status, progress or message change.

    Stops when every job has ended (or vanished), or after ``timeout_s``. The poll interval
    restarts at ``first_poll_s`` after each change and grows by half each quiet read.
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    last: dict[str, tuple] = {}
    live = list(dict.fromkeys(job_ids))
    delay = first_poll_s
    while live:
        snap = await run_in_threadpool(read, live)
        changed = False
        for job_id in list(live):
            job = snap.get(job_id)
            if job is None:
                live.remove(job_id)
                continue
            sig = tuple(job.get(k) for k in WATCHED)
            if last.get(job_id) != sig:
                last[job_id] = sig
                changed = True
                yield job
            if job["status"] in ENDED:
                live.remove(job_id)
        if not live:
            return
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return
        delay = first_poll_s if changed else min(max_poll_s, delay * 1.5)
        await asyncio.sleep(delay if deadline is None else min(delay, max(0.0, deadline - now)))


async def wait_for_job(job_id: str, timeout_s: float, **kw: Any) -> dict[str, Any] | None:
    """The job's snapshot once it has ended, or its latest one after ``timeout_s``; ``None`` if it vanished."""
    latest = None
    async for job in watch_jobs([job_id], timeout_s=timeout_s, max_poll_s=kw.pop("max_poll_s", 0.05), **kw):
        latest = job
    return latest


async def job_events(job_id: str, *, timeout_s: float | None = None, **kw: Any) -> AsyncIterator[Event]:
    """SSE events of one job: ``progress`` on every change (the job as ``GET /v1/jobs/{id}`` shows it), then
    ``end`` with the final job once it succeeded, failed or was cancelled (``timeout`` if ``timeout_s`` ran out).
    """
    latest: dict[str, Any] | None = None
    seq = 0
    async for job in watch_jobs([job_id], timeout_s=timeout_s, **kw):
        latest, seq = job, seq + 1
        if job["status"] in ENDED:
            yield Event(job, event="end", id=str(seq))
            return
        yield Event(job, event="progress", id=str(seq))
    yield Event(latest or {"id": job_id}, event="timeout" if latest else "end", id=str(seq + 1))
