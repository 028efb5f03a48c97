"""``POST /v1/rf/edit`` and ``POST /v1/rf/reconstruct``: RF-Solver jobs on an uploaded image.

Multipart form: ``image`` (PNG/JPEG/...; at most ``settings.max_upload_bytes`` and
``settings.max_image_pixels``) plus the job's fields. The image is validated by decoding it
(415 for a non-image, 413 when too large), stored in the artifact store, and the job is
submitted with the image's SHA-256 (jobs take references, not blobs). Returns the job (201);
the report (source, reconstruction and edit images with their errors) is at
``GET /v1/jobs/{id}/report``. Bad fields are a 422 with the validation message.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, HTTPException, UploadFile, status

from services.api.deps import ApiKeyDep, submit
from services.api.schemas import JobPublic
from services.api.uploads import read_image

router = APIRouter(prefix="/rf", tags=["rf_solver"])


async def _store(image: UploadFile) -> str:
    from core.artifacts import get_artifact_store

    img = await read_image(image)  # 413 / 415 on bad uploads
    return get_artifact_store().put_bytes(img.data, name=img.filename).sha256


@router.post("/edit", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
async def rf_edit(key: ApiKeyDep,
                  image: Annotated[UploadFile, File(description="The image to edit.")],
                  source_label: Annotated[str, Form(max_length=20, description="Label of the source image.")],
                  target_label: Annotated[str, Form(max_length=20, description="Label to edit towards.")],
                  steps: Annotated[int, Form()] = 15,
                  inject: Annotated[int, Form()] = 2,
                  order: Annotated[int, Form()] = 2,
                  guidance: Annotated[float, Form()] = 2.0,
                  model: Annotated[str, Form(max_length=10)] = "auto",
                  shift: Annotated[bool, Form()] = True) -> JobPublic:
    """Invert the image under ``source_label`` and resample it under ``target_label`` (RF-Edit)."""
    sha = await _store(image)
    params = {"image_sha256": sha, "source_label": source_label, "target_label": target_label, "steps": steps,
              "inject": inject, "order": order, "guidance": guidance, "model": model, "shift": shift}
    job, _ = submit("rf.edit", params, key=key)
    return JobPublic.model_validate(job)


@router.post("/reconstruct", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
async def rf_reconstruct(key: ApiKeyDep,
                         image: Annotated[UploadFile, File(description="The image to invert and reconstruct.")],
                         label: Annotated[str, Form(max_length=20)],
                         nfes: Annotated[str, Form(max_length=100, description="Comma-separated even NFEs.")] = "4,10,20,50",
                         model: Annotated[str, Form(max_length=10)] = "auto",
                         shift: Annotated[bool, Form()] = True) -> JobPublic:
    """Reconstruction error vs NFE, Euler vs RF-Solver-2 at equal NFE."""
    try:
        budgets = [int(x) for x in nfes.split(",") if x.strip()]
    except ValueError:
        raise HTTPException(422, f"nfes must be comma-separated integers, not {nfes!r}") from None
    sha = await _store(image)
    job, _ = submit("rf.reconstruct", {"image_sha256": sha, "label": label, "nfes": budgets, "model": model,
                                       "shift": shift}, key=key)
    return JobPublic.model_validate(job)
