"""LMS3 demonstration selection over HTTP.

* ``POST /v1/lms3/select``: a problem → the chosen demonstrations with Sim, Stab and
  Score, whether rejection fired, and the final prompt (synchronous: one forward
  pass and an exact scan over the pool). 409 when the pool is not indexed yet.
* ``POST /v1/lms3/index``: submit an ``lms3.index`` job (201, the job; generated from ``IndexParams``,
  :mod:`services.api.job_routes`); follow it at ``GET /v1/jobs/{id}``. Indexing an indexed pool is a no-op job.
* ``GET /v1/lms3/pools``: the pools indexed for the current local model.

To run a prompt through the model, submit ``lms3.select`` with ``generate: true``
to ``POST /v1/jobs``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel

from methods.lms3.params import SelectParams
from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/lms3", tags=["lms3"])


class PoolInfo(BaseModel):
    """One indexed pool: its name (``mawps-full``, ``gsm8k-n2000s0``), representation and size."""

    pool: str
    mode: str
    layer: str
    items: int


@router.post("/select")
def select(body: SelectParams, _: ApiKeyDep) -> dict[str, Any]:
    """Choose demonstrations for ``query`` from an indexed pool (the ``lms3.select`` fields, without generation)."""
    from methods.lms3.config import RepresentationConfig, SelectionConfig
    from methods.lms3.selection import Lms3Service

    if body.generate or body.index_if_missing:
        raise HTTPException(422, "generate and index_if_missing run as a job: POST /v1/jobs with method lms3.select")
    svc = Lms3Service(
        representation=RepresentationConfig(mode=body.mode, layer=body.layer, orientation=body.orientation)
    )
    try:
        res = svc.select(
            body.query,
            body.pool(),
            subject=body.subject,
            arm=body.arm,
            selection=SelectionConfig(k=body.k, l=body.l, min_lambda=body.min_lambda),
            normalize=body.normalize,
        )
    except LookupError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    return res.to_dict()


@router.get("/pools", response_model=list[PoolInfo])
def pools(_: ApiKeyDep) -> list[PoolInfo]:
    """Pools indexed in the vector store for the current local model."""
    from core.llm import model_hash
    from core.vectorstore import get_vectorstore
    from methods.lms3.pool import indexed_pools

    return [
        PoolInfo(pool=p.pool, mode=p.mode, layer=p.layer, items=p.items)
        for p in indexed_pools(get_vectorstore(), model_hash())
    ]
