"""Jobs: submit (one or a batch), list, inspect (or wait for, or stream), cancel, and read the report."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Response, status
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse

from core.db import crud
from core.jobs.lifecycle import BatchItem, EnqueueError, submit_jobs
from core.jobs.registry import UnknownMethod
from core.jobs.report import Report
from services.api import deps
from services.api.deps import ApiKeyDep, SessionDep, submit
from services.api.schemas import JobCreate, JobPublic, ReportPublic
from services.api.sse import ENDED, job_events, sse_response, wait_for_job

router = APIRouter(tags=["jobs"])
MAX_BATCH = 1000
MAX_WAIT_S = 60.0
MAX_STREAM_S = 3600.0
SSE_EVENT = {  # one Server-Sent Event as clients parse it (``data`` is the job as JSON text)
    "type": "object",
    "properties": {"event": {"type": "string"}, "id": {"type": "string"}, "data": {"type": "string"}},
}
MAX_OFFSET = 1_000_000_000  # any integer query parameter is bounded (SQLite overflows past 2**63 - 1)


class BatchCreate(BaseModel):
    """``POST /v1/jobs:batch``: up to 1 000 jobs, each with its own idempotency key."""

    model_config = ConfigDict(extra="forbid")

    jobs: list[JobCreate] = Field(..., min_length=1, max_length=MAX_BATCH)


class BatchItemPublic(BaseModel):
    index: int
    status: int = Field(
        description="201 created, 200 an earlier job with this idempotency key (same method and params), "
        "else 404/409/422/503."
    )
    job: JobPublic | None = None
    error: Any = None


class BatchPublic(BaseModel):
    created: int
    existing: int
    rejected: int
    items: list[BatchItemPublic]


@router.post("/jobs", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def create_job(body: JobCreate, key: ApiKeyDep, response: Response) -> JobPublic:
    job, created = submit(body.method, body.params, key=key, idempotency_key=body.idempotency_key)
    if not created:
        response.status_code = status.HTTP_200_OK
    return JobPublic.model_validate(job)


@router.post("/jobs:batch", response_model=BatchPublic)
def create_jobs_batch(body: BatchCreate, key: ApiKeyDep) -> BatchPublic:
    """Submit many jobs in one request and one transaction; each item succeeds or fails on its own.

    An item's ``idempotency_key`` works as on ``POST /v1/jobs`` (per key owner, across batches and
    single submissions): retrying a whole batch after a timeout creates nothing twice.
    """
    refused: dict[int, HTTPException] = {}  # an LLM off the allow-list (422), another key's object (404)
    for i, j in enumerate(body.jobs):
        try:
            deps.allowed_models_or_422(j.method, j.params)
            deps.owned_or_404(j.method, j.params, key)
        except HTTPException as exc:
            refused[i] = exc
    kept = [i for i in range(len(body.jobs)) if i not in refused]
    items = [BatchItem(body.jobs[i].method, body.jobs[i].params, body.jobs[i].idempotency_key) for i in kept]
    with deps.one_connection():  # the batch's broker messages go out over one producer
        results = submit_jobs(items, owner=key.id, enqueue=lambda job: deps.enqueue(job))
    done = dict(zip(kept, results, strict=True))
    out: list[BatchItemPublic] = []
    for i in range(len(body.jobs)):
        if i in refused:
            out.append(BatchItemPublic(index=i, status=refused[i].status_code, error=refused[i].detail))
            continue
        r = done[i]
        if r.error is not None:
            code = 404 if isinstance(r.error, UnknownMethod) else 503 if isinstance(r.error, EnqueueError) else 422
            detail: Any = str(r.error)
            if getattr(r.error, "errors", None) is not None:
                detail = {"message": str(r.error), "errors": deps._jsonable(r.error.errors)}
            out.append(
                BatchItemPublic(
                    index=i, status=code, job=JobPublic.model_validate(r.job) if r.job else None, error=detail
                )
            )
        else:
            if not r.created:  # a reused idempotency key must name the same method and params (else 409)
                try:
                    deps.same_request_or_409(r.job, body.jobs[i].method, body.jobs[i].params)
                except HTTPException as exc:
                    out.append(BatchItemPublic(index=i, status=409, error=exc.detail))
                    continue
            out.append(BatchItemPublic(index=i, status=201 if r.created else 200, job=JobPublic.model_validate(r.job)))
    return BatchPublic(
        created=sum(o.status == 201 for o in out),
        existing=sum(o.status == 200 for o in out),
        rejected=sum(o.status >= 400 for o in out),
        items=out,
    )


@router.get("/jobs", response_model=list[JobPublic])
def list_jobs(
    session: SessionDep,
    key: ApiKeyDep,
    method: str | None = Query(None, max_length=100),
    status_: Literal["queued", "running", "succeeded", "failed", "cancelled"] | None = Query(None, alias="status"),
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> list[JobPublic]:
    """This key's jobs, newest first (an admin-scoped key sees every owner's)."""
    return [
        JobPublic.model_validate(j)
        for j in crud.list_jobs(
            session, owner=deps.owner_filter(key), method=method, status=status_, limit=limit, offset=offset
        )
    ]


def _job_or_404(session, job_id: str, key):
    """The job if ``key`` owns it (or is admin); another owner's job is a 404, like a missing one."""
    job = crud.get_job(session, job_id=job_id) if len(job_id) <= 64 else None
    if job is None or not deps.may_access(key, job.owner):
        raise HTTPException(404, f"no job {job_id!r}")
    return job


@router.get("/jobs/{job_id}", response_model=JobPublic)
async def get_job(
    job_id: str,
    session: SessionDep,
    key: ApiKeyDep,
    wait: float = Query(
        0.0, ge=0.0, le=MAX_WAIT_S, description="Long-poll: answer once the job has ended, or after this many seconds."
    ),
) -> JobPublic:
    job = JobPublic.model_validate(await run_in_threadpool(_job_or_404, session, job_id, key))
    if wait <= 0 or job.status in ENDED:
        return job
    await run_in_threadpool(session.close)  # hold no connection while waiting
    latest = await wait_for_job(job_id, wait)
    return JobPublic.model_validate(latest) if latest is not None else job


@router.get(
    "/jobs/{job_id}/events",
    response_class=StreamingResponse,
    responses={200: {"description": "An event stream.", "content": {"text/event-stream": {"schema": SSE_EVENT}}}},
)
async def job_events_stream(
    job_id: str,
    session: SessionDep,
    key: ApiKeyDep,
    timeout: float = Query(MAX_STREAM_S, gt=0.0, le=MAX_STREAM_S, description="Close the stream after this long."),
):
    """Server-Sent Events: ``progress`` (the job, as ``GET /v1/jobs/{id}``) on every change, then ``end``."""
    await run_in_threadpool(_job_or_404, session, job_id, key)
    await run_in_threadpool(session.close)
    return sse_response(job_events(job_id, timeout_s=timeout))


@router.delete("/jobs/{job_id}", response_model=JobPublic)
def cancel_job(job_id: str, session: SessionDep, key: ApiKeyDep) -> JobPublic:
    _job_or_404(session, job_id, key)
    job = crud.request_cancel(session, job_id=job_id)
    session.flush()
    from services.worker.tasks.jobs import revoke

    if job.status == "cancelled":
        revoke(job_id)
    return JobPublic.model_validate(job)


@router.get("/jobs/{job_id}/report", response_model=ReportPublic)
def get_report(job_id: str, session: SessionDep, key: ApiKeyDep) -> ReportPublic:
    job = _job_or_404(session, job_id, key)
    row = crud.get_report_for_job(session, job_id=job_id)
    if row is None:
        raise HTTPException(
            404 if job.status in ("succeeded", "failed", "cancelled") else 409,
            f"job {job_id} has no report (status: {job.status})",
        )
    report = Report.model_validate(row.body)
    md = report.to_markdown(lambda ref: f"/v1/artifacts/{ref.id}" if ref.id else ref.name)
    return ReportPublic(id=row.id, job_id=row.job_id, title=row.title, summary=row.summary, body=row.body, markdown=md)
