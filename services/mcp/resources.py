"""Reports, artifacts and job states as MCP resources.

URIs (all ``paperworks://``):

* ``paperworks://jobs/{job_id}`` — the job's state (JSON: method, status, progress, message, error);
* ``paperworks://jobs/{job_id}/report`` — its report as Markdown, artifacts linked as resources;
* ``paperworks://jobs/{job_id}/report.json`` — the same report as JSON (metrics, tables, data);
* ``paperworks://artifacts/{artifact_id}`` — the bytes of a stored artifact (text, or base64 for binary).
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass

from core.artifacts import get_artifact_store
from core.db import crud
from core.db.models import JobStatus
from core.db.session import session_scope
from core.jobs.report import ArtifactRef, Report

SCHEME = "paperworks://"
_JOB = re.compile(r"^paperworks://jobs/(?P<id>[A-Za-z0-9_-]{1,64})(?P<tail>/report(?:\.json)?)?$")
_ARTIFACT = re.compile(r"^paperworks://artifacts/(?P<id>[A-Za-z0-9_-]{1,64})$")
TEXT_MIMES = ("text/", "application/json", "application/xml", "image/svg+xml")

TEMPLATES = [
    ("job", "paperworks://jobs/{job_id}", "application/json", "A job's state: method, status, progress, message."),
    ("report", "paperworks://jobs/{job_id}/report", "text/markdown", "A finished job's report as Markdown."),
    ("report-json", "paperworks://jobs/{job_id}/report.json", "application/json", "A report as JSON."),
    ("artifact", "paperworks://artifacts/{artifact_id}", None, "A stored artifact (image, plot, JSON, file)."),
]


class ResourceNotFound(LookupError):
    """No resource at that URI."""


@dataclass(frozen=True)
class Content:
    """One resource's contents: ``text`` or ``blob`` (base64)."""

    uri: str
    mime: str
    text: str | None = None
    blob: str | None = None


def report_uri(job_id: str) -> str:
    return f"{SCHEME}jobs/{job_id}/report"


def artifact_uri(artifact_id: str) -> str:
    return f"{SCHEME}artifacts/{artifact_id}"


def _link(ref: ArtifactRef) -> str:
    return artifact_uri(ref.id) if ref.id else ref.name


def report_markdown(report: Report) -> str:
    """The report as Markdown with its artifacts linked as ``paperworks://artifacts/<id>``."""
    return report.to_markdown(_link)


def load_report(job_id: str) -> Report | None:
    with session_scope() as s:
        row = crud.get_report_for_job(s, job_id=job_id)
        return Report.model_validate(row.body) if row is not None else None


def recent_reports(*, owner: str | None = None, limit: int = 50) -> list[tuple[str, str, str]]:
    """``(job_id, method, summary)`` of the latest succeeded jobs (of ``owner``, or everyone's), newest first."""
    with session_scope() as s:
        jobs = crud.list_jobs(s, owner=owner, status=JobStatus.succeeded.value, limit=limit)
        return [(j.id, j.method, j.message or "") for j in jobs]


def _visible_job(s, job_id: str | None, owner: str | None):
    job = crud.get_job(s, job_id=job_id) if job_id else None
    if job is None or (owner is not None and job.owner != owner):
        return None
    return job


def read(uri: str, *, owner: str | None = None) -> Content:
    """The contents at ``uri``; :class:`ResourceNotFound` when there is none (or it belongs to another owner).

    ``owner``: restrict to the jobs (and their reports and artifacts) of this owner; ``None`` sees all.
    """
    if m := _JOB.match(uri):
        job_id, tail = m.group("id"), m.group("tail")
        with session_scope() as s:
            if _visible_job(s, job_id, owner) is None:
                raise ResourceNotFound(f"no job {job_id}")
        if not tail:
            with session_scope() as s:
                job = crud.get_job(s, job_id=job_id)
                state = {
                    "id": job.id,
                    "method": job.method,
                    "status": job.status,
                    "progress": job.progress,
                    "message": job.message,
                    "error": job.error,
                    "report": report_uri(job.id) if job.status == JobStatus.succeeded.value else None,
                }
            return Content(uri, "application/json", text=json.dumps(state))
        report = load_report(job_id)
        if report is None:
            raise ResourceNotFound(f"job {job_id} has no report")
        if tail == "/report.json":
            return Content(uri, "application/json", text=report.model_dump_json())
        return Content(uri, "text/markdown", text=report_markdown(report))
    if m := _ARTIFACT.match(uri):
        with session_scope() as s:
            row = crud.get_artifact(s, artifact_id=m.group("id"))
            if row is None or (owner is not None and _visible_job(s, row.job_id, owner) is None):
                raise ResourceNotFound(f"no artifact {m.group('id')}")
            sha, mime = row.sha256, row.mime
        path = get_artifact_store().path_for(sha)
        if not path.exists():
            raise ResourceNotFound(f"artifact {m.group('id')} is recorded but its file is gone")
        data = path.read_bytes()
        if mime.startswith(TEXT_MIMES):
            return Content(uri, mime, text=data.decode("utf-8", errors="replace"))
        return Content(uri, mime, blob=base64.b64encode(data).decode("ascii"))
    raise ResourceNotFound(f"unknown resource {uri[:200]!r}; templates: {', '.join(t[1] for t in TEMPLATES)}")
