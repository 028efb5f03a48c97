"""Long-short alignment (``methods/long_short_alignment``): its jobs as dedicated routes.

* ``POST /v1/long_short_alignment/synthetic``: body ``SyntheticParams`` (task, PE, steps ≤ 20,000,
  seed, test sequences per length ≤ 5,000); MSE by test length for a model trained on l ≤ 10.
* ``POST /v1/long_short_alignment/lm``: body ``LMParams`` (l_train ≤ 512, width ≤ 256, ≤ 6 layers,
  ≤ 5,000 steps per stage, ≤ 6 α values, RoPE position-interpolation scale); the regularized byte LM.
* ``POST /v1/long_short_alignment/smollm2``: body ``SmolParams``; L_misalign of the local SmolLM2-135M
  on WikiText-2 (spec §6.3).
* ``GET /v1/long_short_alignment/paper``: the paper's numbers (spec §4, marked TO VERIFY there).

Bodies are validated before anything is queued (422). Each POST returns the job (201); its report is at
``GET /v1/jobs/{id}/report`` (owner-checked there).
"""

from __future__ import annotations

from fastapi import APIRouter, status

from methods.long_short_alignment.config import PAPER
from methods.long_short_alignment.jobs import LMParams, SmolParams, SyntheticParams
from services.api.deps import ApiKeyDep, submit
from services.api.schemas import JobPublic

router = APIRouter(prefix="/long_short_alignment", tags=["long_short_alignment"])


@router.post("/synthetic", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def synthetic(key: ApiKeyDep, params: SyntheticParams) -> JobPublic:
    """Mean / length / OutRep regression on l ~ U{1..10}; MSE at test lengths up to 50."""
    job, _ = submit("lsa.synthetic", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.post("/lm", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def lm(key: ApiKeyDep, params: LMParams) -> JobPublic:
    """Byte LM continued with L_CE + α·L_misalign per α; perplexity and misalignment by evaluation length."""
    job, _ = submit("lsa.lm", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.post("/smollm2", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def smollm2(key: ApiKeyDep, params: SmolParams) -> JobPublic:
    """L_misalign (SCE and SKL) of the local SmolLM2-135M on WikiText-2 windows."""
    job, _ = submit("lsa.smollm2", params.model_dump(), key=key)
    return JobPublic.model_validate(job)


@router.get("/paper")
def paper(key: ApiKeyDep) -> dict:
    """The paper's numbers as the spec lists them (from a third-party summary, TO VERIFY)."""
    return PAPER
