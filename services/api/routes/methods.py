"""``GET /v1/methods``: every registered job type with its parameter JSON schema."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException

from core.jobs.registry import UnknownMethod, get_method, list_methods
from services.api.deps import ApiKeyDep
from services.api.schemas import MethodPublic

router = APIRouter(tags=["methods"])


def _public(spec) -> MethodPublic:
    return MethodPublic(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        queue=spec.queue,
        params_schema=spec.json_schema(),
    )


@router.get("/methods", response_model=list[MethodPublic])
def methods(_: ApiKeyDep) -> list[MethodPublic]:
    return [_public(m) for m in list_methods()]


@router.get("/methods/{name}", response_model=MethodPublic)
def method(name: str, _: ApiKeyDep) -> MethodPublic:
    try:
        return _public(get_method(name))
    except UnknownMethod as exc:
        raise HTTPException(404, str(exc)) from None
