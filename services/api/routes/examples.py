"""``GET /v1/examples``: one small offline example per method (the home page's "Getting started")."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from services.api.deps import ApiKeyDep
from services.examples import examples

router = APIRouter(tags=["methods"])


class ExamplePublic(BaseModel):
    name: str
    method: str
    title: str
    params: dict[str, Any]
    about: str
    seconds: int
    paper: str = ""  # the README method it introduces ("" for the platform's own examples)
    first_use: int = 0  # extra seconds of its first run on a machine (a model trained once, then cached)


@router.get("/examples", response_model=list[ExamplePublic])
def list_examples(_: ApiKeyDep) -> list[ExamplePublic]:
    """Each example runs as ``POST /v1/jobs {method, params}`` (or ``paperworks try NAME``) without any data set."""
    return [ExamplePublic(**e.public()) for e in examples()]
