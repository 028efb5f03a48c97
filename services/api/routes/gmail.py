"""GMAIL (``methods/gmail``): align generated images to real ones, and look at the pairs.

* ``POST /v1/gmail/align`` (generated, :mod:`services.api.job_routes`) — body: the ``gmail.align`` params (``AlignParams``: artifact strength 0–2,
  ≤ 20k pairs, ≤ 20k steps, seed, backbone preset), validated before anything is queued (422). Returns the
  job (201); its report (gap table, stage-2 arms, captioning, the real-vs-generated embedding map with the
  PCA coordinates in ``data.embedding_map``) is at ``GET /v1/jobs/{id}/report``.
* ``GET /v1/gmail/pairs.png?start=&count=&strengths=`` — held-out pairs as a PNG: the real render on top,
  the generator's image at each strength below (≤ 16 pairs, ≤ 4 strengths in [0, 2]).
* ``GET /v1/gmail/paper`` — the paper's numbers quoted in the spec (context for the CPU-scale results).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Response

from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/gmail", tags=["gmail"])
MAX_PAIRS = 16
MAX_STRENGTHS = 4


@router.get("/pairs.png", response_class=Response)
def pairs(
    key: ApiKeyDep,
    start: Annotated[int, Query(ge=0, le=100_000)] = 0,
    count: Annotated[int, Query(ge=1, le=MAX_PAIRS)] = 8,
    strengths: Annotated[str, Query(max_length=40, description="Comma-separated strengths in [0, 2].")] = "0.5,1.0",
) -> Response:
    """Real renders and their generated twins at the given artifact strengths."""
    from methods.gmail.data import pairs_png

    try:
        values = tuple(float(s) for s in strengths.split(",") if s.strip())
    except ValueError:
        raise HTTPException(422, f"strengths must be numbers separated by commas, got {strengths!r}") from None
    if not values or len(values) > MAX_STRENGTHS or any(not 0 <= s <= 2 for s in values):
        raise HTTPException(422, f"give 1 to {MAX_STRENGTHS} strengths, each in [0, 2]")
    return Response(pairs_png("test", start, count, values), media_type="image/png")


@router.get("/paper")
def paper(key: ApiKeyDep) -> dict:
    """The paper's reported numbers (spec gmail.md §4)."""
    from methods.gmail.config import PAPER

    return {k: ({a: list(v) if isinstance(v, tuple) else v for a, v in d.items()} if isinstance(d, dict) else list(d))
            for k, d in PAPER.items()}  # fmt: skip
