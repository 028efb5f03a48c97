"""``/v1/webagent``: start PAE runs and browse their trajectories step by step (``agents/pae``).

The module is named after its package (``pae``); the URL keeps the ``/webagent`` prefix clients use.

* ``GET  /webagent/sites`` — the local sites (name, title, description, example tasks);
* ``POST /webagent/runs`` — submit a ``pae.train`` job → the job (201); the body is ``pae.train``'s params
  model (:class:`agents.pae.jobs.TrainParams`: every RunConfig field with its default, bounds and
  description, plus ``run_id`` to resume), so it is typed in the OpenAPI schema;
* ``GET  /webagent/runs`` — recent runs; ``GET /webagent/runs/{id}`` — one run with its per-iteration history;
* ``GET  /webagent/runs/{id}/trajectories?phase=&iteration=&site=&limit=`` — trajectory rows;
* ``GET  /webagent/trajectories/{id}`` — steps (thought, action, URL, screenshots) and verdicts;
* ``GET  /webagent/screenshots/{sha256}`` — a stored step screenshot (PNG).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Response, status

from agents.pae.jobs import TrainParams
from services.api.deps import ApiKeyDep, is_admin, may_access, submit
from services.api.schemas import JobPublic

router = APIRouter(prefix="/webagent", tags=["pae"])


def _run_owners(run_ids: list[str]) -> dict[str, str]:
    """Each run's owner: the key that submitted the first ``pae.train`` job naming that ``run_id`` (issue #27)."""
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        return crud.job_owners_by_param(s, method="pae.train", param="run_id", values=run_ids)


def _screenshot_runs(sha256: str) -> list[str]:
    """The runs whose trajectories recorded this screenshot (a digest can repeat across runs)."""
    from sqlalchemy import select

    from agents.pae.models import PaeScreenshot, PaeStep, PaeTrajectory
    from core.db.session import session_scope

    with session_scope() as s:
        q = (
            select(PaeTrajectory.run_id)
            .join(PaeStep, PaeStep.trajectory_id == PaeTrajectory.id)
            .join(PaeScreenshot, PaeScreenshot.step_id == PaeStep.id)
            .where(PaeScreenshot.sha256 == sha256)
            .distinct()
        )
        return list(s.scalars(q))


def _visible(key, run_id: str) -> bool:
    return may_access(key, _run_owners([run_id]).get(run_id))


RunId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$", description="A PAE run id.")]


@router.get("/sites")
def sites(_: ApiKeyDep) -> list[dict[str, Any]]:
    from agents.pae.sites import build_sites

    return [
        {"name": s.name, "title": s.title, "description": s.description, "demos": list(s.demos)}
        for s in build_sites(0).values()
    ]


@router.post("/runs", response_model=JobPublic, status_code=status.HTTP_201_CREATED)
def start_run(
    body: TrainParams,
    key: ApiKeyDep,
    response: Response,
    idempotency_key: Annotated[str | None, Query(max_length=200)] = None,
) -> JobPublic:
    """Queue a ``pae.train`` job; an invalid configuration (unknown sites included) is a 422.

    The run belongs to the key: a new run gets its id here (recorded in the job's params), and
    resuming (``run_id``) another key's run is a 404.
    """
    params = body.model_dump(mode="json")
    if params.get("run_id"):
        from agents.pae import store

        known = store.get_run(run_id=params["run_id"]) is not None or params["run_id"] in _run_owners(
            [params["run_id"]]
        )
        if known and not _visible(key, params["run_id"]):
            raise HTTPException(404, f"no PAE run {params['run_id']}")
    elif idempotency_key:  # the same request again must name the same run (else it is a 409)
        params["run_id"] = hashlib.sha256(f"{key.id}:{idempotency_key}".encode()).hexdigest()[:32]
    else:
        params["run_id"] = uuid.uuid4().hex
    job, created = submit("pae.train", params, key=key, idempotency_key=idempotency_key)
    if not created:
        response.status_code = status.HTTP_200_OK
    return JobPublic.model_validate(job)


@router.get("/runs")
def runs(key: ApiKeyDep, limit: Annotated[int, Query(ge=1, le=200)] = 50) -> list[dict[str, Any]]:
    """This key's runs, newest first (an admin key sees all)."""
    from agents.pae import store

    if is_admin(key):
        return store.list_runs(limit=limit)
    rows = store.list_runs(limit=2000)
    owners = _run_owners([r["id"] for r in rows])
    return [r for r in rows if owners.get(r["id"]) == key.id][:limit]


@router.get("/runs/{run_id}")
def run(run_id: RunId, key: ApiKeyDep) -> dict[str, Any]:
    from agents.pae import store

    r = store.get_run(run_id=run_id)
    if r is None or not _visible(key, run_id):
        raise HTTPException(404, f"no PAE run {run_id}")
    return r


@router.get("/runs/{run_id}/trajectories")
def trajectories(
    run_id: RunId,
    key: ApiKeyDep,
    phase: Annotated[Literal["rollout", "test", "demo"] | None, Query()] = None,
    iteration: Annotated[int | None, Query(ge=0, le=100_000)] = None,
    site: Annotated[str | None, Query(max_length=40)] = None,
    limit: Annotated[int, Query(ge=1, le=2000)] = 500,
) -> list[dict[str, Any]]:
    from agents.pae import store

    if store.get_run(run_id=run_id) is None or not _visible(key, run_id):
        raise HTTPException(404, f"no PAE run {run_id}")
    rows = store.trajectory_rows(run_id=run_id, phase=phase, iteration=iteration)
    return [r for r in rows if site is None or r["site"] == site][:limit]


@router.get("/trajectories/{trajectory_id}")
def trajectory(trajectory_id: Annotated[str, Path(pattern=r"^[0-9a-f]{32}$")], key: ApiKeyDep) -> dict[str, Any]:
    from agents.pae import store

    d = store.trajectory_detail(trajectory_id=trajectory_id)
    if d is None or not _visible(key, d["run_id"]):
        raise HTTPException(404, f"no trajectory {trajectory_id}")
    return d


@router.get("/screenshots/{sha256}", response_class=Response, responses={200: {"content": {"image/png": {}}}})
def screenshot(sha256: Annotated[str, Path(pattern=r"^[0-9a-f]{64}$")], key: ApiKeyDep) -> Response:
    """Only digests recorded as PAE screenshots are served (not arbitrary artifacts)."""
    from agents.pae import store
    from core.artifacts import get_artifact_store

    if not store.screenshot_known(sha256=sha256) or not any(_visible(key, r) for r in _screenshot_runs(sha256)):
        raise HTTPException(404, "no such screenshot")
    path = get_artifact_store().path_for(sha256)
    if not path.exists():
        raise HTTPException(404, "screenshot file missing")
    return Response(path.read_bytes(), media_type="image/png", headers={"Cache-Control": "max-age=86400"})
