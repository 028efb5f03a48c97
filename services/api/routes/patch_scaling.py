"""Patch-size scaling (``methods/patch_scaling``): ``POST /v1/patch_scaling/sweep`` and ``GET /v1/patch_scaling/paper``.

The sweep body is the ``patch_scaling.sweep`` params model (``SweepParams``: backbones, patch sizes,
seeds ≤ 10, epochs ≤ 300, input size 8 or 16), validated before anything is queued (422). Returns the
job (201); its report (accuracy vs tokens plot, per-p table, per-run results in ``data``) is at
``GET /v1/jobs/{id}/report``. One run is also ``POST /v1/jobs`` with ``patch_scaling.train``.
"""

from __future__ import annotations

from fastapi import APIRouter, status

from methods.patch_scaling.config import PAPER
from methods.patch_scaling.jobs import SweepParams
from services.api.deps import ApiKeyDep, submit
from services.api.schemas import JobPublic

router = APIRouter(prefix="/patch_scaling", tags=["patch_scaling"])


@router.post("/sweep", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def sweep(key: ApiKeyDep, params: SweepParams) -> JobPublic:
    """Train every (backbone, p, seed) on digits and plot accuracy against the number of tokens."""
    job, _ = submit("patch_scaling.sweep", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.get("/paper")
def paper(key: ApiKeyDep) -> list[dict]:
    """The paper's ImageNet-1k top-1 numbers (spec §4), for context beside the digits curve."""
    cols = ("model", "patch", "input", "tokens", "top1")
    return [dict(zip(cols, row, strict=True)) for row in PAPER]
