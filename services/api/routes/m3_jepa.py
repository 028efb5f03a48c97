"""M3-JEPA (``methods/m3_jepa``): study, single training run, caption → digits retrieval, variants, paper claims.

* ``POST /v1/m3_jepa/study`` — body ``StudyParams`` (variants, seeds ≤ 10, epochs ≤ 500) → the job (201);
* ``POST /v1/m3_jepa/train`` — body ``TrainParams`` (one variant × seed) → the job (201);
* ``POST /v1/m3_jepa/retrieve`` — body ``RetrieveParams`` (caption ≤ 200 chars, k ≤ 32) → the job (201);
  its report holds the nearest test digits (image grid + table) and the caption's expert routing;
* ``GET /v1/m3_jepa/variants`` and ``GET /v1/m3_jepa/paper`` — static descriptions.

Everything is validated by the params models before anything is queued (422); reports and artifacts are
read through the generic job routes, which check ownership (``may_access``).
"""

from __future__ import annotations

from fastapi import APIRouter, status

from methods.m3_jepa.config import PAPER_CLAIMS
from methods.m3_jepa.jobs import RetrieveParams, StudyParams, TrainParams
from methods.m3_jepa.report import variants_table
from services.api.deps import ApiKeyDep, submit
from services.api.schemas import JobPublic

router = APIRouter(prefix="/m3_jepa", tags=["m3_jepa"])


@router.post("/study", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def study(key: ApiKeyDep, params: StudyParams) -> JobPublic:
    """Train every (variant, seed); retrieval mean ± std, zero-shot, expert usage and the §7 checks."""
    job, _ = submit("m3_jepa.study", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.post("/train", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def train(key: ApiKeyDep, params: TrainParams) -> JobPublic:
    """Train one variant and seed (its weights are cached for the retrieval demo)."""
    job, _ = submit("m3_jepa.train", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.post("/retrieve", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def retrieve(key: ApiKeyDep, params: RetrieveParams) -> JobPublic:
    """Type a caption, get the nearest test digits (trains the model once if it is not cached)."""
    job, _ = submit("m3_jepa.retrieve", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.get("/variants")
def variants(key: ApiKeyDep) -> list[dict[str, str]]:
    """The model and its ablations/baselines, by name."""
    return variants_table()


@router.get("/paper")
def paper(key: ApiKeyDep) -> list[dict[str, str]]:
    """The paper's headline claims (spec §4; exact table values were not retrievable offline)."""
    return [{"what": w, "claim": c} for w, c in PAPER_CLAIMS]
