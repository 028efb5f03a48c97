"""EcoLevels over HTTP.

* ``GET /v1/ecolevels/probes``: the probe registry, each with its level;
* ``GET /v1/ecolevels/targets``: the declared target tasks;
* ``POST /v1/ecolevels/classify``: level and EV of probe metadata for a target (synchronous, rules only;
  a free-text description needs the model: submit ``ecolevels.classify`` to ``POST /v1/jobs``);
* ``POST /v1/ecolevels/runs``: submit the flow (``ecolevels.run``; 201, the job): the generated job route
  (:mod:`services.api.job_routes`, also ``POST /v1/ecolevels/run``), kept at this path by ``JOB_PATHS``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from methods.ecolevels.registry import ProbeMetadata
from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/ecolevels", tags=["ecolevels"])
JOB_PATHS = {"/ecolevels/runs": "ecolevels.run"}


@router.get("/probes")
def probes(_: ApiKeyDep) -> list[dict[str, Any]]:
    from methods.ecolevels.classify import classify
    from methods.ecolevels.registry import load_probes

    return [p.model_dump(mode="json", by_alias=True) | {"level": classify(p.metadata)} for p in load_probes()]


@router.get("/targets")
def targets(_: ApiKeyDep) -> dict[str, Any]:
    from methods.ecolevels.validity import TARGETS

    return {k: t.model_dump() for k, t in TARGETS.items()}


class ClassifyBody(BaseModel):
    metadata: ProbeMetadata
    target: Literal["resume_screener", "letter_assistant"] = Field("resume_screener")


@router.post("/classify")
def classify(body: ClassifyBody, _: ApiKeyDep) -> dict[str, Any]:
    """The probe's level (§3.2) and EV for the target (§3.1)."""
    from methods.ecolevels.jobs import ClassifyParams, classify_probe

    try:
        return classify_probe(ClassifyParams(metadata=body.metadata, target=body.target))
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
