"""MultiCogEval over HTTP.

* ``GET /v1/medcog/tasks``: datasets, tasks, chance levels and item counts (for pickers);
* ``GET /v1/medcog/diseases``: the diseases with synthetic high-level cases;
* ``POST /v1/medcog/lowmid`` / ``POST /v1/medcog/high``: submit a ``medcog.lowmid`` / ``medcog.high`` job
  (201, the job; generated from the params models, :mod:`services.api.job_routes`); follow it at
  ``GET /v1/jobs/{id}``, results at ``GET /v1/jobs/{id}/report``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/medcog", tags=["medcog"])


@router.get("/tasks")
def tasks(_: ApiKeyDep) -> dict[str, Any]:
    """Low/mid tasks per dataset with their chance level ``r`` and item count."""
    from methods.medcog.data import DATASETS, TASKS, load_task
    from methods.medcog.scoring import chance

    return {ds: {t: {"chance": chance(ds, t), "items": len(load_task(ds, t))} for t in TASKS} for ds in DATASETS}


@router.get("/diseases")
def diseases(_: ApiKeyDep) -> list[dict[str, Any]]:
    """Diseases with synthetic cases, with the exam types a case of each holds."""
    from methods.medcog.cases import DISEASES, make_case

    out = []
    for d in DISEASES:
        c = make_case(d, 0)
        out.append({"disease": d, "labs": len(c.labs), "micro": len(c.micro), "imaging": sorted(c.radiology)})
    return out
