"""``/v1/continual/*``: what the class-incremental harness can run (for the UI's pickers).

Runs themselves are ordinary jobs: ``POST /v1/jobs`` with ``method = "continual.run"``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/continual", tags=["continual"])


class ContinualMethodPublic(BaseModel):
    name: str
    description: str
    heads: list[str]
    presets: dict[str, dict[str, Any]]
    options_schema: dict[str, Any]


@router.get("/methods", response_model=list[ContinualMethodPublic])
def continual_methods(_: ApiKeyDep) -> list[ContinualMethodPublic]:
    """Every registered continual method: its heads (evaluated arms), option presets and options schema."""
    from methods.continual.learner import list_learners

    return [
        ContinualMethodPublic(
            name=s.name,
            description=s.description,
            heads=list(s.heads),
            presets=s.presets,
            options_schema=s.options_model.model_json_schema(),
        )
        for s in list_learners("class_incremental")
    ]


@router.get("/datasets", response_model=list[str])
def continual_datasets(_: ApiKeyDep) -> list[str]:
    """Names accepted by ``continual.run``'s ``dataset`` parameter."""
    from methods.continual.data import DATASETS

    return sorted(DATASETS)
