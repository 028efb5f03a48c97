"""Server-Sent Events, written once: the wire format, a streaming response, and job watching.

* :func:`format_event` — one SSE frame (``event:``/``id:``/``data:`` lines, blank line);
* :func:`sse_response` — a ``StreamingResponse`` over an async iterator of :class:`Event` (or
  ready frames), with keep-alive comments while nothing happens and the headers that stop
  proxies from buffering;
* :func:`watch_jobs` / :func:`job_events` — follow job rows in the database: yields a snapshot
  whenever status, progress or message change and ends when the job has ended. The reads run
  in the thread pool, one autocommit SELECT each (no connection is held between reads). On
  PostgreSQL the worker notifies every change (``pg_notify`` in the same statement as the
  change) and :class:`JobListener` wakes the watcher at once; elsewhere it polls with a backoff
  from ``first_poll_s`` up to ``max_poll_s`` (a job that ends within a few milliseconds is seen
  within about a millisecond of it, a long job costs a few reads a second).

The jobs routes (``GET /v1/jobs/{id}?wait=S`` and ``GET /v1/jobs/{id}/events``) use these; so
can any route that streams (the agent protocol's runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from core.lazy import locked_cache

log = logging.getLogger(__name__)
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
    from core.db.jobstore import get_job_store
    from services.api.schemas import JobPublic

    rows = get_job_store().columns(job_ids, list(JobPublic.model_fields))
    return {r["id"]: JobPublic.model_validate(r).model_dump(mode="json") for r in rows}


class JobListener:
    """PostgreSQL ``LISTEN`` on the channel the worker notifies when a job changes (claim, progress, end).

    One daemon thread per API process holds one connection; :func:`watch_jobs` waits on an
    ``asyncio.Event`` that a notification for one of its jobs sets, so a change is seen within
    about a millisecond of its commit instead of at the next poll. Polling stays as the fallback
    (a lost notification, a reconnect), at a slow rate.
    """

    def __init__(self, url: str) -> None:
        from sqlalchemy.engine import make_url

        self.url = url
        self.dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        self.listening = threading.Event()
        self.notified = 0
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._run, daemon=True, name="job-listener").start()

    def _run(self) -> None:
        import psycopg

        from core.jobs.lifecycle import NOTIFY_CHANNEL

        while True:
            try:
                with psycopg.connect(self.dsn, autocommit=True) as conn:
                    conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self.listening.set()
                    for note in conn.notifies():
                        self.notified += 1
                        self._wake(note.payload)
            except Exception as exc:  # reconnect; the watchers poll meanwhile
                log.warning("job listener lost its connection (%s); reconnecting", exc)
            self.listening.clear()
            from core.config import get_settings

            if str(get_settings().database_url) != self.url:  # the application moved to another database
                _listener_for.cache_clear()
                return
            time.sleep(1.0)

    def _wake(self, job_id: str) -> None:
        with self._lock:
            waiters = list(self._waiters.get(job_id, ()))
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(event.set)

    @contextlib.contextmanager
    def subscribe(self, job_ids: list[str]) -> Iterator[asyncio.Event]:
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            for j in job_ids:
                self._waiters.setdefault(j, set()).add(entry)
        try:
            yield entry[1]
        finally:
            with self._lock:
                for j in job_ids:
                    ws = self._waiters.get(j)
                    if ws is not None:
                        ws.discard(entry)
                        if not ws:
                            del self._waiters[j]


@locked_cache(maxsize=4)
def _listener_for(url: str) -> JobListener:
    return JobListener(url)


def job_listener() -> JobListener | None:
    """This process's listener when the application database is PostgreSQL (else ``None``: poll)."""
    from core.config import get_settings

    url = str(get_settings().database_url)
    if not url.startswith("postgresql"):
        return None
    listener = _listener_for(url)
    return listener if listener.listening.is_set() or listener.listening.wait(2.0) else None


async def watch_jobs(
    job_ids: list[str],
    *,
    timeout_s: float | None = None,
    first_poll_s: float = 0.001,
    max_poll_s: float = 0.25,
    read: Callable[[list[str]], dict[str, dict[str, Any]]] = _read_jobs,
    listener: JobListener | None | bool = True,
) -> AsyncIterator[dict[str, Any]]:
    """Yield each job's snapshot when first seen and whenever status, progress or message change.

    Stops when every job has ended (or vanished), or after ``timeout_s``. On PostgreSQL the
    worker's notifications wake it (``listener``; polling every ``max_poll_s`` is then only the
    fallback); elsewhere the poll interval restarts at ``first_poll_s`` after each change and
    grows by half each quiet read.
    """
    if listener is True:
        listener = await run_in_threadpool(job_listener) if read is _read_jobs else None
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    last: dict[str, tuple] = {}
    live = list(dict.fromkeys(job_ids))
    delay = first_poll_s
    with listener.subscribe(live) if listener else contextlib.nullcontext(None) as woken:
        while live:
            if woken is not None:
                woken.clear()  # before the read: a change committed after it sets the event again
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
            if woken is not None:
                delay = max_poll_s
            else:
                delay = first_poll_s if changed else min(max_poll_s, delay * 1.5)
            pause = delay if deadline is None else min(delay, max(0.0, deadline - now))
            if woken is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), pause)
            else:
                await asyncio.sleep(pause)


async def watch_jobs_last(job_id: str, timeout_s: float, **kw: Any) -> dict[str, Any] | None:
    """The last snapshot :func:`watch_jobs` yields for one job (its end, or its state at ``timeout_s``)."""
    latest = None
    async for job in watch_jobs([job_id], timeout_s=timeout_s, **kw):
        latest = job
    return latest


async def wait_for_job(job_id: str, timeout_s: float) -> dict[str, Any] | None:
    """The job's snapshot once it has ended, or its latest one after ``timeout_s``; ``None`` if it vanished."""
    return await watch_jobs_last(job_id, timeout_s, max_poll_s=0.05)


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
