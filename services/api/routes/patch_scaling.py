"""Patch-size scaling (``methods/patch_scaling``): ``POST /v1/patch_scaling/sweep`` and ``GET /v1/patch_scaling/paper``.

``POST /v1/patch_scaling/sweep`` is generated (:mod:`services.api.job_routes`): its body is the
``patch_scaling.sweep`` params model (``SweepParams``: backbones, patch sizes,
seeds ≤ 10, epochs ≤ 300, input size 8 or 16), validated before anything is queued (422). Returns the
job (201); its report (accuracy vs tokens plot, per-p table, per-run results in ``data``) is at
``GET /v1/jobs/{id}/report``. One run is also ``POST /v1/jobs`` with ``patch_scaling.train``.
"""

from __future__ import annotations

from fastapi import APIRouter

from methods.patch_scaling.config import PAPER
from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/patch_scaling", tags=["patch_scaling"])


@router.get("/paper")
def paper(key: ApiKeyDep) -> list[dict]:
    """The paper's ImageNet-1k top-1 numbers (spec §4), for context beside the digits curve."""
    cols = ("model", "patch", "input", "tokens", "top1")
    return [dict(zip(cols, row, strict=True)) for row in PAPER]
