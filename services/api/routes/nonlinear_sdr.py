"""``POST /v1/sdr/fit``: sufficient dimension reduction of an uploaded CSV (``methods/nonlinear_sdr``).

Multipart form: ``table`` (a CSV; at most ``settings.max_upload_bytes``) plus the fields of the
``nonlinear_sdr.fit`` params model (``methods/nonlinear_sdr/jobs.py``: ``FitParams``) minus the data
source the upload replaces: ``response`` (the response column, required), ``method``, ``n_components``,
``loss``, ``lam``, ``n_slices``, ``response_type``, ``multiclass``, ``evaluate``. The CSV is parsed
before anything is queued (422 with the reason: missing response column, non-numeric predictors, too
many rows or columns, too few complete rows), stored in the artifact store, and the job is submitted
with its SHA-256. Returns the job (201); the report (eigenvalues, directions, the sufficient plot,
k-NN score against PCA) is at ``GET /v1/jobs/{id}/report``. A bundled dataset needs no upload:
``POST /v1/jobs`` with ``{"method": "nonlinear_sdr.fit", "params": {"dataset": "wine"}}``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, HTTPException, UploadFile, status

from methods.nonlinear_sdr.jobs import FitParams
from services.api.deps import ApiKeyDep, submit
from services.api.forms import form_model
from services.api.schemas import JobPublic
from services.api.uploads import read_upload, store_upload, text_or_error

router = APIRouter(prefix="/sdr", tags=["nonlinear_sdr"])

SdrFitForm = form_model(FitParams, exclude=("dataset", "csv_sha256"), name="SdrFitForm")


@router.post("/fit", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
async def sdr_fit(
    key: ApiKeyDep,
    table: Annotated[
        UploadFile, File(description="A CSV with a header row: the response column and numeric predictors.")
    ],
    fields: Annotated[SdrFitForm, Form()],
) -> JobPublic:
    """Find the sufficient predictors of the uploaded table (linear / kernel / neural principal machine, or SIR...)."""
    from methods.nonlinear_sdr.fit import read_csv
    from methods.nonlinear_sdr.jobs import check_components

    data = await read_upload(table)  # 413 / 400 on bad uploads
    name = table.filename or "table"
    if not fields.response:
        raise HTTPException(422, "response: the name of the response column is required")
    try:
        text_or_error(data, name, "a CSV table")  # a renamed image: a sentence, not a codec error
        parsed = read_csv(data, fields.response)
    except ValueError as exc:
        raise HTTPException(422, str(exc) if str(exc).startswith(name) else f"{name}: {exc}") from None
    try:
        check_components(fields.n_components, len(parsed.features), f"the columns of {name}")
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    sha = store_upload(data, name=table.filename or "table.csv", owner=key.id)
    job, _ = submit("nonlinear_sdr.fit", {**fields.model_dump(), "dataset": None, "csv_sha256": sha}, key=key)
    return JobPublic.model_validate(job)
