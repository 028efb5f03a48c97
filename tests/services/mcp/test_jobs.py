"""``--dispatch queue``: the server only records and enqueues; a worker runs the job and the call follows its row.

The broker is replaced by a stand-in worker thread calling ``execute_job`` (what the Celery task does), and the
client connects in process (``mcp.Client(server)``).
"""

from __future__ import annotations

import threading

import anyio
import pytest


@pytest.fixture
def worker(monkeypatch):
    from core.jobs.lifecycle import execute_job
    from services.mcp import jobs

    sent: list[str] = []

    def enqueue(job):
        sent.append(job.id)
        threading.Thread(target=execute_job, args=(job.id,), daemon=True).start()

    monkeypatch.setattr(jobs, "_enqueue", enqueue)
    return sent


def test_queue_dispatch_follows_the_worker(worker):
    from mcp import Client

    from services.mcp import build_server
    from services.mcp.jobs import snapshot

    server = build_server(dispatch="queue", poll_s=0.05)
    seen: list[float] = []

    async def progress(value, total, message):
        seen.append(value)

    async def main():
        async with Client(server) as client:
            done = await client.call_tool("diag.sleep", {"seconds": 0.6, "steps": 6}, progress_callback=progress)
            assert not done.is_error and done.structured_content["metrics"]["steps"] == 6
            failed = await client.call_tool("diag.sleep", {"seconds": 0, "steps": 1, "fail": True, "message": "boom"})
            assert failed.is_error and "failed" in failed.content[0].text and "boom" in failed.content[0].text
            started = anyio.Event()

            async def on_long(value, total, message):
                started.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    lambda: client.call_tool("diag.sleep", {"seconds": 60, "steps": 600}, progress_callback=on_long)
                )
                with anyio.fail_after(20):
                    await started.wait()
                tg.cancel_scope.cancel()
            return done.structured_content["job_id"]

    first = anyio.run(main)
    assert len(worker) == 3 and worker[0] == first
    assert seen and seen[-1] == 1.0
    for _ in range(100):
        if snapshot(worker[2]).status == "cancelled":
            break
        anyio.run(anyio.sleep, 0.1)
    assert snapshot(worker[2]).status == "cancelled"
