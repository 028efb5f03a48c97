"""Dependencies shared by the API routes: DB session, API key, job submission."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, Header, HTTPException, status
from sqlalchemy.orm import Session

from core.db import crud
from core.db.models import ApiKey, Job
from core.db.session import session_scope
from core.jobs.lifecycle import EnqueueError, submit_job
from core.jobs.registry import InvalidParams, UnknownMethod


def get_session() -> Iterator[Session]:
    with session_scope() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


def require_api_key(session: SessionDep, authorization: Annotated[str | None, Header()] = None) -> ApiKey:
    """``Authorization: Bearer <key>``; 401 when missing or not a live key."""
    if not authorization or not authorization.lower().startswith("bearer "):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing API key: send 'Authorization: Bearer <key>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    key = authorization.split(" ", 1)[1].strip()
    row = crud.verify_api_key(session, key=key)
    if row is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, "invalid or revoked API key", headers={"WWW-Authenticate": "Bearer"}
        )
    session.expunge(row)
    return row


ApiKeyDep = Annotated[ApiKey, Depends(require_api_key)]


def enqueue(job: Job) -> None:
    from services.worker.tasks.jobs import enqueue as send

    send(job)


def submit(
    method: str, params: dict[str, Any] | None, *, key: ApiKey, idempotency_key: str | None = None
) -> tuple[Job, bool]:
    """Validate, record and enqueue a job for ``key``; unknown method → 404, bad params → 422."""
    try:
        return submit_job(method, params, owner=key.id, idempotency_key=idempotency_key, enqueue=enqueue)
    except UnknownMethod as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except InvalidParams as exc:
        raise HTTPException(422, {"message": str(exc), "errors": _jsonable(exc.errors)}) from None
    except EnqueueError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None


def _jsonable(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"loc": list(map(str, e.get("loc", ()))), "msg": str(e.get("msg")), "type": str(e.get("type"))} for e in errors
    ]
