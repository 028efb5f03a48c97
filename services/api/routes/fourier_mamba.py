"""``POST /v1/fourier_mamba/derain`` (an uploaded image).

Derain: multipart form with ``image`` (at most ``settings.max_upload_bytes`` and
``settings.max_image_pixels``; decoded to the last pixel, 415 for non-images, 413 when too large)
plus the fields of ``DerainParams`` minus the image references the upload replaces (``add_rain``,
``rain_seed``, ``preset``, ``scan_order``). The image is stored in the artifact store and the job
takes its SHA-256. Sample images need no upload: ``POST /v1/jobs`` with ``fourier_mamba.derain``
and ``sample``.

``POST /v1/fourier_mamba/train`` (JSON ``TrainParams``) is the generated job route
(:mod:`services.api.job_routes`): like every job, its queue follows its ``device`` param
(:mod:`core.jobs.routing`). Both return the job (201); the report is at ``GET /v1/jobs/{id}/report``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, UploadFile, status

from methods.fourier_mamba.jobs import DerainParams
from services.api.deps import ApiKeyDep, submit
from services.api.forms import form_model
from services.api.schemas import JobPublic
from services.api.uploads import read_image, store_upload

router = APIRouter(prefix="/fourier_mamba", tags=["fourier_mamba"])

DerainForm = form_model(DerainParams, exclude=("image_sha256", "sample"), name="FourierMambaDerainForm")


@router.post("/derain", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
async def derain(
    key: ApiKeyDep,
    image: Annotated[UploadFile, File(description="The rainy image (or a clean one with add_rain set).")],
    fields: Annotated[DerainForm, Form()],
) -> JobPublic:
    """Derain an uploaded image with the trained FourierMamba model."""
    img = await read_image(image)  # 413 / 415 on bad uploads
    sha = store_upload(img.data, name=img.filename or "image", owner=key.id)
    job, _ = submit("fourier_mamba.derain", {**fields.model_dump(), "image_sha256": sha}, key=key)
    return JobPublic.model_validate(job)
