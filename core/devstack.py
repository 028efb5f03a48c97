"""A local deployment in subprocesses: the API (uvicorn) and Celery workers on a chosen DB and broker.

Used by the integration tests and the platform benchmark to exercise the real
processes exactly as `paperworks up` or docker-compose would run them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]


LEASE_PREFIX = "paperworks:test-lease:"


@contextlib.contextmanager
def leased_redis_db(server: str = "redis://127.0.0.1:6379", ttl_s: int = 7200) -> Iterator[str]:
    """A Redis database of ``server`` that no other run using this function holds meanwhile, flushed before and
    after; yields its URL.

    Two test or benchmark runs on one machine that share a Redis database share its queues: the worker of
    one run takes the other run's messages, finds no such job in its own database and drops them, and the
    other run's jobs stay queued until the reaper's ``job_requeue_queued_after_s`` (30 min) — a fresh
    worker there receives nothing. Leases live in database 0 (``SET … NX EX``), so a crashed run frees its
    database after ``ttl_s``.
    """
    import uuid

    import redis

    token = uuid.uuid4().hex
    admin = redis.Redis.from_url(f"{server}/0")
    deadline = time.monotonic() + 600
    db = None
    while db is None:
        db = next((n for n in range(15, 0, -1) if admin.set(f"{LEASE_PREFIX}{n}", token, nx=True, ex=ttl_s)), None)
        if db is None:
            if time.monotonic() > deadline:
                raise StackError(f"no free Redis database on {server} (all of 1-15 leased)")
            time.sleep(1.0)
    url = f"{server}/{db}"
    redis.Redis.from_url(url).flushdb()
    try:
        yield url
    finally:
        redis.Redis.from_url(url).flushdb()
        if admin.get(f"{LEASE_PREFIX}{db}") == token.encode():
            admin.delete(f"{LEASE_PREFIX}{db}")
        admin.close()


class StackError(RuntimeError):
    """A process did not come up, or a job did not finish, in time."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stack:
    """API + workers sharing one database and broker; every process is killed on close."""

    def __init__(self, home: Path, database_url: str, broker_url: str, **extra_env: str) -> None:
        from core.db import crud, migrate
        from core.db.session import session_scope

        self.home, self.database_url, self.broker_url = home, database_url, broker_url
        migrate.upgrade(database_url)
        with session_scope(database_url) as s:
            _, self.key = crud.create_api_key(s, name="stack")
        self.env = dict(
            os.environ,
            PAPERWORKS_HOME=str(home),
            PAPERWORKS_DATABASE_URL=database_url,
            PAPERWORKS_BROKER_URL=broker_url,
            PYTHONUNBUFFERED="1",
            PYTHONFAULTHANDLER="1",
            **extra_env,
        )
        self.procs: list[subprocess.Popen] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.logs = home / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    def _spawn(self, name: str, cmd: list[str]) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "ab")
        p = subprocess.Popen(cmd, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(p)
        return p

    def start_api(self) -> None:
        self._spawn(
            "api",
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "services.api.main:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
        )
        self.wait_http(f"{self.url}/healthz", 90)

    def start_worker(self, name: str = "worker", *args: str, timeout: float = 120.0) -> subprocess.Popen:
        """Start a solo-pool worker named ``name`` (``args``: more worker options) and wait until it is ready.

        A worker not ready after ``timeout`` seconds is sent SIGABRT, so that Python's faulthandler (on in
        every process of the stack) writes where each of its threads was into its log, which the error quotes.
        """
        cmd = [sys.executable, "-m", "services.worker.main", "--pool=solo", f"--hostname={name}@%h", *args]
        p = self._spawn(name, cmd)
        try:
            self.wait_log(name, "ready", timeout)
        except StackError:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGABRT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(10)
            log = self.log(name)
            dump = log.rfind("Fatal Python error")  # faulthandler writes the innermost frames first
            raise StackError(
                f"worker {name} not ready after {timeout:.0f} s; its log (with faulthandler's stacks):\n"
                f"{log[dump : dump + 8000] if dump >= 0 else log[-8000:]}"
            ) from None
        return p

    def wait_http(self, url: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise StackError(f"{url} not up; log:\n{self.log('api')[-3000:]}")

    def log(self, name: str) -> str:
        p = self.logs / f"{name}.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def wait_log(self, name: str, needle: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.log(name):
                return
            time.sleep(0.3)
        raise StackError(f"{name} never logged {needle!r}:\n{self.log(name)[-3000:]}")

    @property
    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=30)

    def submit(self, method: str, params: dict, key: str | None = None) -> dict:
        with self.client as c:
            r = c.post("/v1/jobs", json={"method": method, "params": params, "idempotency_key": key})
            if r.status_code not in (200, 201):
                raise StackError(f"submit {method}: {r.status_code} {r.text}")
            return r.json()

    def wait_job(self, job_id: str, timeout: float = 120, until=("succeeded", "failed", "cancelled")) -> dict:
        deadline = time.monotonic() + timeout
        with self.client as c:
            while time.monotonic() < deadline:
                job = c.get(f"/v1/jobs/{job_id}").json()
                if job["status"] in until:
                    return job
                time.sleep(0.3)
        raise StackError(f"job {job_id} stuck at {job}; worker log:\n{self.log('worker')[-3000:]}")

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=4)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
