"""Jobs: submit, list, inspect, cancel, and read the report."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, HTTPException, Query, Response, status

from core.db import crud
from core.jobs.report import Report
from services.api.deps import ApiKeyDep, SessionDep, submit
from services.api.schemas import JobCreate, JobPublic, ReportPublic

router = APIRouter(tags=["jobs"])


@router.post("/jobs", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def create_job(body: JobCreate, key: ApiKeyDep, response: Response) -> JobPublic:
    job, created = submit(body.method, body.params, key=key, idempotency_key=body.idempotency_key)
    if not created:
        response.status_code = status.HTTP_200_OK
    return JobPublic.model_validate(job)


@router.get("/jobs", response_model=list[JobPublic])
def list_jobs(
    session: SessionDep,
    _: ApiKeyDep,
    method: str | None = None,
    status_: Literal["queued", "running", "succeeded", "failed", "cancelled"] | None = Query(None, alias="status"),
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0),
) -> list[JobPublic]:
    return [
        JobPublic.model_validate(j)
        for j in crud.list_jobs(session, method=method, status=status_, limit=limit, offset=offset)
    ]


def _job_or_404(session, job_id: str):
    job = crud.get_job(session, job_id=job_id) if len(job_id) <= 64 else None
    if job is None:
        raise HTTPException(404, f"no job {job_id!r}")
    return job


@router.get("/jobs/{job_id}", response_model=JobPublic)
def get_job(job_id: str, session: SessionDep, _: ApiKeyDep) -> JobPublic:
    return JobPublic.model_validate(_job_or_404(session, job_id))


@router.delete("/jobs/{job_id}", response_model=JobPublic)
def cancel_job(job_id: str, session: SessionDep, _: ApiKeyDep) -> JobPublic:
    _job_or_404(session, job_id)
    job = crud.request_cancel(session, job_id=job_id)
    session.flush()
    from services.worker.tasks.jobs import revoke

    if job.status == "cancelled":
        revoke(job_id)
    return JobPublic.model_validate(job)


@router.get("/jobs/{job_id}/report", response_model=ReportPublic)
def get_report(job_id: str, session: SessionDep, _: ApiKeyDep) -> ReportPublic:
    job = _job_or_404(session, job_id)
    row = crud.get_report_for_job(session, job_id=job_id)
    if row is None:
        raise HTTPException(
            404 if job.status in ("succeeded", "failed", "cancelled") else 409,
            f"job {job_id} has no report (status: {job.status})",
        )
    report = Report.model_validate(row.body)
    md = report.to_markdown(lambda ref: f"/v1/artifacts/{ref.id}" if ref.id else ref.name)
    return ReportPublic(id=row.id, job_id=row.job_id, title=row.title, summary=row.summary, body=row.body, markdown=md)
