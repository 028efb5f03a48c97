"""``GET /v1/artifacts/{id}``: the bytes of a stored artifact."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from core.artifacts import get_artifact_store
from core.db import crud
from services.api.deps import ApiKeyDep, SessionDep

router = APIRouter(tags=["artifacts"])


@router.get("/artifacts/{artifact_id}")
def get_artifact(artifact_id: str, session: SessionDep, _: ApiKeyDep) -> FileResponse:
    row = crud.get_artifact(session, artifact_id=artifact_id) if len(artifact_id) <= 64 else None
    if row is None:
        raise HTTPException(404, f"no artifact {artifact_id!r}")
    path = get_artifact_store().path_for(row.sha256)
    if not path.exists():
        raise HTTPException(410, f"artifact {artifact_id} is recorded but its file is gone")
    safe_name = "".join(c for c in row.name if c.isalnum() or c in "._-") or "artifact"
    return FileResponse(path, media_type=row.mime, filename=safe_name)
