"""``POST /v1/rf/edit`` and ``POST /v1/rf/reconstruct``: RF-Solver jobs on an uploaded image.

Multipart form: ``image`` (PNG/JPEG/...; at most ``settings.max_upload_bytes`` and
``settings.max_image_pixels``) plus the job's fields. The fields, their defaults, bounds, enums
and descriptions are those of the method's params models (``methods/rf_solver/jobs.py``:
``EditParams``, ``ReconstructParams``) minus the image references the upload replaces, so every
field a job accepts can be sent here (``nfes`` as comma-separated text or repeated fields). The
image is validated by decoding it (415 for a non-image, 413 when too large), stored in the
artifact store, and the job is submitted with the image's SHA-256 (jobs take references, not
blobs). Returns the job (201); the report (source, reconstruction and edit images with their
errors) is at ``GET /v1/jobs/{id}/report``. Bad fields are a 422 with the validation message.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, UploadFile, status

from methods.rf_solver.jobs import EditParams, ReconstructParams
from services.api.deps import ApiKeyDep, submit
from services.api.forms import form_model
from services.api.schemas import JobPublic
from services.api.uploads import read_image, store_upload

router = APIRouter(prefix="/rf", tags=["rf_solver"])

UPLOAD_REPLACES = ("image_sha256", "digit_index", "example")  # ImageRef's image sources: the upload is the image
EditForm = form_model(EditParams, exclude=UPLOAD_REPLACES, name="RfEditForm")
ReconstructForm = form_model(ReconstructParams, exclude=UPLOAD_REPLACES, name="RfReconstructForm")


async def _store(image: UploadFile, key: ApiKeyDep) -> str:
    img = await read_image(image)  # 413 / 415 on bad uploads
    return store_upload(img.data, name=img.filename or "image", owner=key.id)


@router.post("/edit", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
async def rf_edit(
    key: ApiKeyDep,
    image: Annotated[UploadFile, File(description="The image to edit.")],
    fields: Annotated[EditForm, Form()],
) -> JobPublic:
    """Invert the image under ``source_label`` and resample it under ``target_label`` (RF-Edit)."""
    sha = await _store(image, key)
    job, _ = submit("rf.edit", {**fields.model_dump(), "image_sha256": sha}, key=key)
    return JobPublic.model_validate(job)


@router.post("/reconstruct", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
async def rf_reconstruct(
    key: ApiKeyDep,
    image: Annotated[UploadFile, File(description="The image to invert and reconstruct.")],
    fields: Annotated[ReconstructForm, Form()],
) -> JobPublic:
    """Reconstruction error vs NFE, Euler vs RF-Solver-2 at equal NFE."""
    sha = await _store(image, key)
    job, _ = submit("rf.reconstruct", {**fields.model_dump(), "image_sha256": sha}, key=key)
    return JobPublic.model_validate(job)
