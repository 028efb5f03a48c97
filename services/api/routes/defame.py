"""``POST /v1/factcheck``: submit a DEFAME fact-check (multipart: claim, optional images and metadata).

Returns the job (201); poll ``GET /v1/jobs/{id}`` (its message names each stage as
it finishes) and read the result at ``GET /v1/jobs/{id}/report`` (JSON body with
verdict, justification, evidence and per-stage usage, plus the Markdown document
with images as artifact links). Bad input is a 4xx with a message: empty claim or
malformed date 422, a non-image upload 415, an oversized upload or image 413.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from fastapi import APIRouter, File, Form, HTTPException, UploadFile, status

from services.api.deps import ApiKeyDep, submit
from services.api.schemas import JobPublic
from services.api.uploads import read_image

router = APIRouter(tags=["defame"])
MAX_IMAGES = 8
BENCHMARKS = ("default", "averitec", "mocheg", "verite", "claimreview")


@router.post("/factcheck", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
async def factcheck(
    key: ApiKeyDep,
    claim: Annotated[str, Form(max_length=5000, description="The claim text.")],
    images: Annotated[list[UploadFile], File(description="Images in the claim.")] = [],  # noqa: B006
    date: Annotated[str | None, Form(description="Claim date, YYYY-MM-DD.")] = None,
    author: Annotated[str | None, Form(max_length=300)] = None,
    benchmark: Annotated[str, Form()] = "default",
    corpus: Annotated[str, Form(max_length=200)] = "defame-default",
    max_iterations: Annotated[int, Form(ge=1, le=3)] = 3,
) -> JobPublic:
    from agents.defame.run import store_image

    if not claim.strip():
        raise HTTPException(422, "the claim text is empty")
    day = None
    if date:
        try:
            day = dt.date.fromisoformat(date.strip())
        except ValueError:
            raise HTTPException(422, f"malformed date {date!r}: use YYYY-MM-DD") from None
    if benchmark not in BENCHMARKS:
        raise HTTPException(422, f"unknown benchmark {benchmark!r}; choose one of {', '.join(BENCHMARKS)}")
    if len(images) > MAX_IMAGES:
        raise HTTPException(422, f"at most {MAX_IMAGES} images per claim")
    paths = []
    for f in images:
        img = await read_image(f)  # 413 / 415 on bad uploads
        try:
            paths.append(str(store_image(img.data)))
        except ValueError as exc:
            raise HTTPException(415, str(exc)) from None
    params = {
        "claim": claim,
        "images": paths,
        "date": day.isoformat() if day else None,
        "author": author,
        "benchmark": benchmark,
        "corpus": corpus,
        "max_iterations": max_iterations,
    }
    job, _ = submit("defame.check", params, key=key)
    return JobPublic.model_validate(job)
