"""Double-Filter (``methods/double_filter``): ``POST /v1/double_filter/patches``, ``POST /v1/double_filter/experiment``,
``GET /v1/double_filter/paper``.

Both POST bodies are the registered params models (``PatchParams``: ρ, r_fg, τ_ov, detector, ≤ 10 test scenes;
``ExperimentParams``: tasks, seeds ≤ 10, steps ≤ 5000, GA sizes …), validated before anything is queued (422).
They return the job (201); the report (kept-patches overlay; or score vs FLOPs/latency, the GA's fitness curve
and the §7 checks) is at ``GET /v1/jobs/{id}/report``, which checks the caller's key like every job route.
"""

from __future__ import annotations

from fastapi import APIRouter, status

from methods.double_filter.config import PAPER
from methods.double_filter.jobs import ExperimentParams, PatchParams
from services.api.deps import ApiKeyDep, submit
from services.api.schemas import JobPublic

router = APIRouter(prefix="/double_filter", tags=["double_filter"])


@router.post("/patches", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def patches(key: ApiKeyDep, params: PatchParams) -> JobPublic:
    """Run the image patch filter (IPF) on test scenes; the report overlays the kept patches on each image."""
    job, _ = submit("double_filter.patches", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.post("/experiment", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def experiment(key: ApiKeyDep, params: ExperimentParams) -> JobPublic:
    """No filter / IPF / ALF / both per task and seed: score vs FLOPs and latency, the GA's fitness curve."""
    job, _ = submit("double_filter.experiment", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.get("/paper")
def paper(key: ApiKeyDep) -> list[dict]:
    """The paper's headline numbers (spec §4), for context."""
    cols = ("model", "task", "quantity", "reported")
    return [dict(zip(cols, row, strict=True)) for row in PAPER]
