"""The first concurrent requests after the API (re)starts succeed (issue #48 part 3).

Right after a restart, 120 requests from 8 threads to ``/v1/evidence`` and ``/readyz`` gave 5 × 500 and
3 × 503 (``vectorstore: error: KeyError: '<home>/chroma'``): the embedded Chroma client was created twice
at once. The API is started (and, the second time, restarted after a SIGKILL) and the requests are fired
as soon as ``/healthz`` answers, before anything has opened the vector store.
"""

from __future__ import annotations

import os
import signal
import threading
from collections import Counter

import httpx
import pytest

pytestmark = pytest.mark.integration

THREADS, REQUESTS = 8, 120


def _burst(stack) -> Counter:
    """``REQUESTS`` requests from ``THREADS`` threads released together; the count of each status code."""
    codes: Counter = Counter()
    lock, start = threading.Lock(), threading.Barrier(THREADS)
    headers = {"Authorization": f"Bearer {stack.key}"}

    def worker(i: int) -> None:
        with httpx.Client(base_url=stack.url, headers=headers, timeout=60) as c:
            start.wait()
            for j in range(REQUESTS // THREADS):
                path = "/readyz" if (i + j) % 2 else "/v1/evidence"
                code = c.get(path).status_code
                with lock:
                    codes[(path, code)] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return codes


def test_concurrent_first_requests_after_a_start_and_a_restart(make_stack, tmp_path):
    home = tmp_path / "cold"
    home.mkdir()
    stack = make_stack(f"sqlite:///{home / 'paperworks.db'}", f"sqla+sqlite:///{home / 'broker.db'}")
    for attempt in ("start", "restart after SIGKILL"):
        stack.start_api()
        codes = _burst(stack)
        failed = {k: n for k, n in codes.items() if k[1] != 200}
        assert failed == {}, f"{attempt}: {failed}\n{stack.log('api')[-3000:]}"
        assert sum(codes.values()) == REQUESTS
        api = stack.procs[-1]
        os.killpg(api.pid, signal.SIGKILL)
        api.wait()
