"""``/v1/vlm``: browse the shared VLM datasets and zero-shot classify an uploaded image.

* ``GET /v1/vlm/datasets`` — names, descriptions, splits and class names;
* ``GET /v1/vlm/datasets/{name}/{split}/items?start=&count=`` — captions, labels and boxes (JSON, ≤ 64 items);
* ``GET /v1/vlm/datasets/{name}/{split}/grid.png?start=&count=`` — those images tiled as a PNG (boxes drawn);
* ``POST /v1/vlm/zeroshot`` — multipart ``image`` (size-limited, decoded to validate) plus the fields of
  ``methods/vlm/jobs.py:ZeroShotParams`` minus the image references (read from the model by
  :func:`services.api.forms.form_model`; ``device``/``amp`` included: the job is routed by its device, a
  422 for ``cuda`` where no GPU worker is declared); ``classnames`` as comma-separated text. Returns the
  ``vlm.zeroshot`` job (201); its report holds the probabilities. A JSON body (an image named by reference:
  a dataset item) goes to the generated route on the same path (:mod:`services.api.job_routes`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, HTTPException, Query, Response, UploadFile, status
from pydantic import BaseModel, Field

from methods.vlm.jobs import DatasetName, ZeroShotParams
from services.api.deps import ApiKeyDep, submit
from services.api.forms import form_model
from services.api.schemas import JobPublic
from services.api.uploads import read_image, store_upload

router = APIRouter(prefix="/vlm", tags=["vlm"])
Split = Literal["train", "val", "test"]
MAX_ITEMS = 64


class DatasetPublic(BaseModel):
    name: str
    description: str
    splits: list[str]


def _load(name: str, split: str):
    from methods.vlm.data import load_dataset

    try:
        return load_dataset(name, split)
    except ValueError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except FileNotFoundError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None


@router.get("/datasets", response_model=list[DatasetPublic])
def datasets(key: ApiKeyDep) -> list[DatasetPublic]:
    """The named datasets every VLM method shares."""
    from methods.vlm.data import DATASETS

    return [DatasetPublic(name=d.name, description=d.description, splits=list(d.splits)) for d in DATASETS.values()]


class ItemsPublic(BaseModel):
    name: str
    split: str
    size: int
    classnames: list[str]
    start: int
    items: list[dict] = Field(default_factory=list)


@router.get("/datasets/{name}/{split}/items", response_model=ItemsPublic)
def items(
    key: ApiKeyDep,
    name: DatasetName,
    split: Split,
    start: Annotated[int, Query(ge=0, le=100_000)] = 0,
    count: Annotated[int, Query(ge=1, le=MAX_ITEMS)] = 16,
) -> ItemsPublic:
    """Labels, captions and boxes of ``count`` items from ``start``."""
    ds = _load(name, split)
    rows = []
    for i in range(start, min(start + count, len(ds))):
        label = int(ds.labels[i])
        rows.append(
            {
                "index": i,
                "label": label,
                "class": ds.classnames[label] if 0 <= label < len(ds.classnames) else None,
                "captions": ds.captions[i][:6],
                "boxes": [] if ds.boxes is None else [[float(v) for v in b] for b in ds.boxes[i]],
            }
        )
    return ItemsPublic(name=name, split=split, size=len(ds), classnames=list(ds.classnames), start=start, items=rows)


@router.get("/datasets/{name}/{split}/grid.png", response_class=Response)
def grid(
    key: ApiKeyDep,
    name: DatasetName,
    split: Split,
    start: Annotated[int, Query(ge=0, le=100_000)] = 0,
    count: Annotated[int, Query(ge=1, le=MAX_ITEMS)] = 16,
) -> Response:
    """The images as one PNG (8 per row, ×3 nearest-neighbour, ground-truth boxes in green)."""
    from methods.vlm.plots import grid_png

    ds = _load(name, split)
    try:
        return Response(grid_png(ds, start, count), media_type="image/png")
    except ValueError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None


ZeroShotForm = form_model(ZeroShotParams, exclude=("image_sha256", "dataset", "split", "index"), name="VlmZeroShotForm")


@router.post("/zeroshot", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
async def zeroshot(
    key: ApiKeyDep,
    image: Annotated[UploadFile, File(description="The image to classify.")],
    fields: Annotated[ZeroShotForm, Form()],
) -> JobPublic:
    """Store the upload (413/415 on bad images) and submit ``vlm.zeroshot`` on it (the other fields: the job's)."""
    img = await read_image(image)
    sha = store_upload(img.data, name=img.filename or "image", owner=key.id)
    job, _ = submit("vlm.zeroshot", {**fields.model_dump(mode="json"), "image_sha256": sha}, key=key)
    return JobPublic.model_validate(job)
