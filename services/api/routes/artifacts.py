"""``GET /v1/artifacts/{id}``: the bytes of a stored artifact."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from core.artifacts import get_artifact_store
from core.db import crud
from services.api.deps import ApiKeyDep, SessionDep, may_access

router = APIRouter(tags=["artifacts"])


@router.get("/artifacts/{artifact_id}")
def get_artifact(artifact_id: str, session: SessionDep, key: ApiKeyDep) -> FileResponse:
    """An artifact belongs to its job's owner; other keys get a 404 (an artifact of no job: admin only)."""
    row = crud.get_artifact(session, artifact_id=artifact_id) if len(artifact_id) <= 64 else None
    job = crud.get_job(session, job_id=row.job_id) if row is not None and row.job_id else None
    if row is None or not may_access(key, job.owner if job is not None else None):
        raise HTTPException(404, f"no artifact {artifact_id!r}")
    path = get_artifact_store().path_for(row.sha256)
    if not path.exists():
        raise HTTPException(410, f"artifact {artifact_id} is recorded but its file is gone")
    safe_name = "".join(c for c in row.name if c.isalnum() or c in "._-") or "artifact"
    return FileResponse(path, media_type=row.mime, filename=safe_name)
