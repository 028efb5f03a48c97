"""Double-Filter (``methods/double_filter``): ``POST /v1/double_filter/patches``, ``POST /v1/double_filter/experiment``,
``GET /v1/double_filter/paper``.

The two POST routes are generated from the params models (:mod:`services.api.job_routes`): their bodies are (``PatchParams``: ρ, r_fg, τ_ov, detector, ≤ 10 test scenes;
``ExperimentParams``: tasks, seeds ≤ 10, steps ≤ 5000, GA sizes …), validated before anything is queued (422).
They return the job (201); the report (kept-patches overlay; or score vs FLOPs/latency, the GA's fitness curve
and the §7 checks) is at ``GET /v1/jobs/{id}/report``, which checks the caller's key like every job route.
"""

from __future__ import annotations

from fastapi import APIRouter

from methods.double_filter.config import PAPER
from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/double_filter", tags=["double_filter"])


@router.get("/paper")
def paper(key: ApiKeyDep) -> list[dict]:
    """The paper's headline numbers (spec §4), for context."""
    cols = ("model", "task", "quantity", "reported")
    return [dict(zip(cols, row, strict=True)) for row in PAPER]
