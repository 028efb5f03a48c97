"""M3-JEPA (``methods/m3_jepa``): study, single training run, caption → digits retrieval, variants, paper claims.

* ``POST /v1/m3_jepa/study`` — body ``StudyParams`` (variants, seeds ≤ 10, epochs ≤ 500) → the job (201);
* ``POST /v1/m3_jepa/train`` — body ``TrainParams`` (one variant × seed) → the job (201);
* ``POST /v1/m3_jepa/retrieve`` — body ``RetrieveParams`` (caption ≤ 200 chars, k ≤ 32) → the job (201);
  its report holds the nearest test digits (image grid + table) and the caption's expert routing;
* ``GET /v1/m3_jepa/variants`` and ``GET /v1/m3_jepa/paper`` — static descriptions.

The three POST routes are generated from the params models (:mod:`services.api.job_routes`).
Everything is validated by the params models before anything is queued (422); reports and artifacts are
read through the generic job routes, which check ownership (``may_access``).
"""

from __future__ import annotations

from fastapi import APIRouter

from methods.m3_jepa.config import PAPER_CLAIMS
from methods.m3_jepa.report import variants_table
from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/m3_jepa", tags=["m3_jepa"])


@router.get("/variants")
def variants(key: ApiKeyDep) -> list[dict[str, str]]:
    """The model and its ablations/baselines, by name."""
    return variants_table()


@router.get("/paper")
def paper(key: ApiKeyDep) -> list[dict[str, str]]:
    """The paper's headline claims (spec §4; exact table values were not retrievable offline)."""
    return [{"what": w, "claim": c} for w, c in PAPER_CLAIMS]
