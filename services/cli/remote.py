"""``paperworks run --remote``: submit through the HTTP API and follow the job."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from services.cli.progress import console, progress_bar
from core.config import get_settings


def api_client() -> httpx.Client:
    s = get_settings()
    if s.api_key is None:
        raise SystemExit("set PAPERWORKS_API_KEY (create one with `paperworks keys create`)")
    return httpx.Client(base_url=str(s.api_url), timeout=30.0,
                        headers={"Authorization": f"Bearer {s.api_key.get_secret_value()}"})


def run_remote(method: str, params: dict[str, Any], out: Path | None, poll_s: float = 0.5) -> int:
    with api_client() as c:
        r = c.post("/v1/jobs", json={"method": method, "params": params, "idempotency_key": uuid.uuid4().hex})
        if r.status_code >= 400:
            console.print(f"[red]error {r.status_code}:[/red] {r.json().get('detail')}")
            return 2
        job = r.json()
        with progress_bar(f"{method} ({job['id'][:8]})") as update:
            while job["status"] in ("queued", "running"):
                time.sleep(poll_s)
                job = c.get(f"/v1/jobs/{job['id']}").json()
                update(job["progress"], job["message"] or job["status"])
        console.print(f"job {job['id']}: [bold]{job['status']}[/bold] {job.get('message') or ''}")
        if job["status"] == "succeeded":
            rep = c.get(f"/v1/jobs/{job['id']}/report").json()
            if out:
                out.write_text(rep["markdown"], encoding="utf-8")
                console.print(f"report written to {out}")
            else:
                from rich.markdown import Markdown

                console.print(Markdown(rep["markdown"]))
            return 0
        return 1
