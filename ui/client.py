"""The UI's only way to the application: the HTTP API.

Configured by ``PAPERWORKS_API_URL`` and ``PAPERWORKS_API_KEY`` (``paperworks up``
sets both for the UI process).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import httpx


class ApiError(RuntimeError):
    """An API answer of status >= 400: its ``detail`` (a text or an object) and, for invalid input, ``errors``:
    one ``{"loc": [...], "msg": ...}`` per offending field (from the body's ``errors`` or ``detail.errors``)."""

    def __init__(self, status: int, detail: Any, errors: list[dict[str, Any]] | None = None) -> None:
        self.status, self.detail = status, detail
        if errors is None and isinstance(detail, dict) and isinstance(detail.get("errors"), list):
            errors = detail["errors"]
        self.errors: list[dict[str, Any]] = [e for e in errors or [] if isinstance(e, dict)]
        super().__init__(f"{status}: {self.message}")

    @property
    def message(self) -> str:
        """The detail as one text (an object's ``message``, else the text itself)."""
        if isinstance(self.detail, dict):
            return str(self.detail.get("message") or self.detail.get("detail") or self.detail)
        return str(self.detail)


class ApiClient:
    """A thin, typed-enough wrapper over the paperworks API."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = (base_url or os.environ.get("PAPERWORKS_API_URL") or "http://127.0.0.1:8000").rstrip("/")
        key = api_key or os.environ.get("PAPERWORKS_API_KEY") or ""
        self._http = httpx.Client(
            base_url=self.base_url, timeout=timeout, headers={"Authorization": f"Bearer {key}"} if key else {}
        )

    # --- plumbing ---------------------------------------------------------
    def _check(self, r: httpx.Response) -> httpx.Response:
        if r.status_code >= 400:
            errors = None
            try:
                body = r.json()
                detail = body.get("detail") if isinstance(body, dict) else body
                errors = body.get("errors") if isinstance(body, dict) else None
            except Exception:
                detail = r.text[:500]
            raise ApiError(r.status_code, detail, errors)
        return r

    def get(self, path: str, **params: Any) -> Any:
        return self._check(self._http.get(path, params={k: v for k, v in params.items() if v is not None})).json()

    def post(self, path: str, json: Any = None, files: Any = None, data: Any = None) -> Any:
        return self._check(self._http.post(path, json=json, files=files, data=data)).json()

    def delete(self, path: str) -> Any:
        return self._check(self._http.delete(path)).json()

    def get_bytes(self, path: str) -> bytes:
        return self._check(self._http.get(path)).content

    # --- API ----------------------------------------------------------------
    def ready(self) -> dict[str, Any]:
        r = self._http.get("/readyz")
        try:
            return r.json()
        except Exception:
            return {"status": "unavailable", "checks": {"api": r.text[:200]}}

    def methods(self) -> list[dict[str, Any]]:
        return self.get("/v1/methods")

    def submit(self, method: str, params: dict[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        return self.post("/v1/jobs", json={"method": method, "params": params, "idempotency_key": idempotency_key})

    def jobs(self, limit: int = 30, method: str | None = None) -> list[dict[str, Any]]:
        return self.get("/v1/jobs", limit=limit, method=method)

    def job(self, job_id: str) -> dict[str, Any]:
        return self.get(f"/v1/jobs/{job_id}")

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self.delete(f"/v1/jobs/{job_id}")

    def report(self, job_id: str) -> dict[str, Any]:
        return self.get(f"/v1/jobs/{job_id}/report")

    def artifact(self, artifact_id: str) -> bytes:
        return self.get_bytes(f"/v1/artifacts/{artifact_id}")

    def events(self, job_id: str, timeout: float = 30.0) -> Iterator[dict[str, Any]]:
        """The job as it changes, pushed by the API (``GET /v1/jobs/{id}/events``, Server-Sent Events);
        ends when the job has ended or after ``timeout`` seconds."""
        params = {"timeout": timeout}
        with self._http.stream("GET", f"/v1/jobs/{job_id}/events", params=params, timeout=timeout + 30) as r:
            if r.status_code >= 400:
                r.read()
                self._check(r)
            data: list[str] = []
            for line in r.iter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].lstrip())
                elif not line and data:
                    job = json.loads("\n".join(data))
                    data = []
                    if isinstance(job, dict) and "status" in job:
                        yield job

    def readiness(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Whether a job of ``method`` with ``params`` first trains a model, and about how long that takes
        (``POST /v1/readiness``)."""
        return self.post("/v1/readiness", json={"method": method, "params": params or {}})

    def examples(self) -> list[dict[str, Any]]:
        return self.get("/v1/examples")

    def wait(self, job_id: str, timeout: float = 600, poll: float = 1.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        job = self.job(job_id)
        while job["status"] in ("queued", "running") and time.monotonic() < deadline:
            wait = min(30.0, max(0.0, deadline - time.monotonic()))
            job = self.get(f"/v1/jobs/{job_id}", wait=wait)  # long-poll: answered when the job ends
        return job
