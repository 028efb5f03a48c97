"""LADA / X-TAIL (``methods/lada``): ``POST /v1/lada/xtail``, ``GET /v1/lada/domains``, ``GET /v1/lada/paper``.

``POST /v1/lada/xtail`` is generated (:mod:`services.api.job_routes`): its body is the ``lada.xtail`` params model (``XTailParams``: method among LADA and its baselines,
2–5 domains, shots ≤ 48, seeds ≤ 10, options validated against the learner's options model) —
rejected with 422 before anything is queued. Returns the job (201, owned by the calling key); its
report (Transfer/Average/Last tables, accuracy-matrix heat map, every run in ``data``) is at
``GET /v1/jobs/{id}/report``, which checks ownership.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/lada", tags=["lada"])


class DomainPublic(BaseModel):
    name: str
    classnames: list[str]


@router.get("/domains", response_model=list[DomainPublic])
def domains(key: ApiKeyDep) -> list[DomainPublic]:
    """The stream's domains in order I (alphabetical) and their class names (the union label space)."""
    from methods.lada.domains import DOMAIN_ORDER, _domain_classes

    names = _domain_classes()
    return [DomainPublic(name=d, classnames=list(names[d])) for d in DOMAIN_ORDER]


@router.get("/paper")
def paper(key: ApiKeyDep) -> list[dict]:
    """The paper's X-TAIL 16-shot numbers (spec §4, secondary sources), for context."""
    from methods.lada.report import PAPER

    return [dict(zip(("method", "transfer", "average", "last"), row, strict=True)) for row in PAPER]
