"""Request and response schemas of the generic API."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class MethodPublic(BaseModel):
    name: str
    title: str
    description: str
    queue: str
    params_schema: dict[str, Any]


class JobCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: str = Field(..., min_length=1, max_length=100)
    params: dict[str, Any] = Field(default_factory=dict)
    idempotency_key: str | None = Field(None, min_length=1, max_length=200)


class JobPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    method: str
    params: dict[str, Any]
    queue: str
    status: str
    progress: float
    message: str
    error: str | None = None
    idempotency_key: str | None = None
    attempts: int
    created_at: dt.datetime
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None


class ReportPublic(BaseModel):
    id: str
    job_id: str | None
    title: str
    summary: str
    body: dict[str, Any]
    markdown: str
