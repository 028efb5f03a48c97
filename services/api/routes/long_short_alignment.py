"""Long-short alignment (``methods/long_short_alignment``): its jobs as dedicated routes.

* ``POST /v1/long_short_alignment/synthetic``: body ``SyntheticParams`` (task, PE, steps ≤ 20,000,
  seed, test sequences per length ≤ 5,000); MSE by test length for a model trained on l ≤ 10.
* ``POST /v1/long_short_alignment/lm``: body ``LMParams`` (l_train ≤ 512, width ≤ 256, ≤ 6 layers,
  ≤ 5,000 steps per stage, ≤ 6 α values, RoPE position-interpolation scale); the regularized byte LM.
* ``POST /v1/long_short_alignment/smollm2``: body ``SmolParams``; L_misalign of the local SmolLM2-135M
  on WikiText-2 (spec §6.3).
* ``GET /v1/long_short_alignment/paper``: the paper's numbers (spec §4, marked TO VERIFY there).

The three POST routes are the generated job routes of ``lsa.synthetic``, ``lsa.lm`` and ``lsa.smollm2``
(:mod:`services.api.job_routes`; also ``POST /v1/lsa/...``), kept at these paths by ``JOB_PATHS``.
Bodies are validated before anything is queued (422). Each POST returns the job (201); its report is at
``GET /v1/jobs/{id}/report`` (owner-checked there).
"""

from __future__ import annotations

from fastapi import APIRouter

from methods.long_short_alignment.config import PAPER
from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/long_short_alignment", tags=["long_short_alignment"])
JOB_PATHS = {
    "/long_short_alignment/synthetic": "lsa.synthetic",
    "/long_short_alignment/lm": "lsa.lm",
    "/long_short_alignment/smollm2": "lsa.smollm2",
}


@router.get("/paper")
def paper(key: ApiKeyDep) -> dict:
    """The paper's numbers as the spec lists them (from a third-party summary, TO VERIFY)."""
    return PAPER
