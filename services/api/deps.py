"""Dependencies shared by the API routes: DB session, API key, job submission."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, Header, HTTPException, Request, status
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from core.config import get_settings
from core.db import crud
from core.db.models import ApiKey, Job
from core.db.session import session_scope
from core.jobs.lifecycle import EnqueueError, submit_job
from core.jobs.registry import InvalidParams, UnknownMethod


def get_session() -> Iterator[Session]:
    with session_scope() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


ADMIN_SCOPE = "admin"


class _KeyCache:
    """Verified keys for ``settings.api_key_cache_s`` seconds, so a burst of requests costs one lookup.

    Keyed by the key's SHA-256 digest (the plaintext is never stored); holds detached rows. Only
    live keys are cached: a wrong key always asks the database. A revocation through this process
    (:func:`forget_api_keys`) applies at once; one made by another process within the TTL.
    """

    def __init__(self) -> None:
        self._rows: dict[str, tuple[float, ApiKey]] = {}
        self._lock = threading.Lock()

    def get(self, digest: str) -> ApiKey | None:
        with self._lock:
            hit = self._rows.get(digest)
            if hit is None:
                return None
            if hit[0] < time.monotonic():
                del self._rows[digest]
                return None
            return hit[1]

    def put(self, digest: str, row: ApiKey, ttl_s: float) -> None:
        with self._lock:
            if len(self._rows) >= 1024:  # bounded: drop the oldest entries
                for k in sorted(self._rows, key=lambda k: self._rows[k][0])[:256]:
                    del self._rows[k]
            self._rows[digest] = (time.monotonic() + ttl_s, row)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


_key_cache = _KeyCache()


def forget_api_keys() -> None:
    """Drop every cached key (after a revocation in this process, and between tests)."""
    _key_cache.clear()


def cached_key(authorization: str | None) -> ApiKey | str | None:
    """What :func:`authenticate` answers without the database: a malformed header's 401 message, a
    key verified within ``settings.api_key_cache_s``, or ``None`` (the database has to be asked).
    Cheap enough for the event loop (one SHA-256 and a dict lookup)."""
    if not authorization or not authorization.lower().startswith("bearer "):
        return "missing API key: send 'Authorization: Bearer <key>'"
    key = authorization.split(" ", 1)[1].strip()
    if not key or len(key) > 200:
        return "invalid or revoked API key"
    settings = get_settings()
    if settings.api_key_cache_s <= 0:
        return None
    return _key_cache.get(f"{settings.database_url}|{crud.hash_key(key)}")  # one cache entry per database


def authenticate(session: Session | None, authorization: str | None) -> ApiKey | str:
    """The live key named by an ``Authorization: Bearer <key>`` header, else the 401 message.

    ``session`` may be ``None``: one is opened only when the key is not in the short-lived cache.
    """
    found = cached_key(authorization)
    if found is not None:
        return found
    key = authorization.split(" ", 1)[1].strip()  # cached_key returned None: a well-formed header
    settings = get_settings()
    ttl = settings.api_key_cache_s
    digest = f"{settings.database_url}|{crud.hash_key(key)}"
    if session is None:
        with session_scope() as own:
            return authenticate(own, authorization)
    row = crud.verify_api_key(session, key=key)
    if row is None:
        return "invalid or revoked API key"
    session.expunge(row)
    if ttl > 0:
        _key_cache.put(digest, row, ttl)
    return row


async def require_api_key(request: Request, authorization: Annotated[str | None, Header()] = None) -> ApiKey:
    """``Authorization: Bearer <key>``; 401 when missing or not a live key.

    :class:`services.api.auth.AuthenticateFirst` has normally checked the key already, before any
    body was read, and left the row in ``request.state.api_key``; otherwise the key is looked up
    here (a session is opened only on a cache miss). No session dependency: a route that needs
    none (``POST /v1/jobs``) costs no session set-up and tear-down in the thread pool.
    """
    row = getattr(request.state, "api_key", None)
    if isinstance(row, ApiKey):
        return row  # in the event loop: no thread hop for the common case
    found = cached_key(authorization)
    if found is None:
        found = await run_in_threadpool(authenticate, None, authorization)
    if isinstance(found, str):
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, found, headers={"WWW-Authenticate": "Bearer"})
    return found


ApiKeyDep = Annotated[ApiKey, Depends(require_api_key)]


def is_admin(key: ApiKey) -> bool:
    """Keys with the ``admin`` scope see and cancel every owner's jobs, reports and artifacts."""
    return ADMIN_SCOPE in (key.scopes or "").split()


def owner_filter(key: ApiKey) -> str | None:
    """The owner a listing is restricted to: the key's own id, or ``None`` (everyone) for an admin."""
    return None if is_admin(key) else key.id


def may_access(key: ApiKey, owner: str | None) -> bool:
    """Whether ``key`` may read or cancel something owned by ``owner`` (others get a 404, not a 403)."""
    return is_admin(key) or (owner is not None and owner == key.id)


def enqueue(job: Job) -> None:
    from services.worker.tasks.jobs import enqueue as send

    send(job)


def one_connection():
    """A block whose :func:`enqueue` calls share one broker producer (batch submissions)."""
    from services.worker.tasks.jobs import one_connection as block

    return block()


def submit(
    method: str, params: dict[str, Any] | None, *, key: ApiKey, idempotency_key: str | None = None
) -> tuple[Job, bool]:
    """Validate, record and enqueue a job for ``key``; unknown method → 404, bad params → 422, a stored object
    named in params that is not the key's → 404."""
    allowed_models_or_422(method, params)
    owned_or_404(method, params, key)
    try:
        job, created = submit_job(method, params, owner=key.id, idempotency_key=idempotency_key, enqueue=enqueue)
        if not created:
            same_request_or_409(job, method, params)
        return job, created
    except UnknownMethod as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except InvalidParams as exc:
        raise HTTPException(422, {"message": str(exc), "errors": _jsonable(exc.errors)}) from None
    except EnqueueError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None


def allowed_models_or_422(method: str, params: dict[str, Any] | None) -> None:
    """Clients may only name LLMs on the server's allow-list (no choosing where the worker connects)."""
    from core.jobs.registry import get_method
    from core.llm.allowlist import ModelNotAllowed, check_params

    try:
        schema = get_method(method).json_schema()
    except UnknownMethod:
        return  # submit_job answers the 404
    try:
        check_params(params or {}, schema)
    except ModelNotAllowed as exc:
        raise HTTPException(
            422,
            {
                "message": str(exc),
                "errors": [{"loc": ["params", *(exc.field or "model").split(".")], "msg": str(exc), "type": "model"}],
                "allowed_models": exc.allowed,
            },
        ) from None


def owned_or_404(method: str, params: dict[str, Any] | None, key: ApiKey) -> None:
    """Params may name only stored objects of the key (uploads, artifacts, checkpoints, server files): another
    key's answers 404, exactly like one that does not exist (:mod:`core.ownership`)."""
    from core.ownership import NotOwned, check

    try:
        check(method, params, owner=key.id, admin=is_admin(key))
    except NotOwned as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None


def same_request_or_409(job: Job, method: str, params: dict[str, Any] | None) -> None:
    """A reused idempotency key must name the same method and (validated) params as its first use."""
    from core.jobs.registry import get_method

    spec = get_method(method)
    if job.method != spec.name or job.params != spec.validate(params).model_dump(mode="json"):
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"idempotency key already used for job {job.id} with a different method or params",
        )


def _jsonable(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validation errors as JSON; ``msg`` is the model's own sentence (without pydantic's ``Value error, ``)."""
    return [
        {
            "loc": list(map(str, e.get("loc", ()))),
            "msg": str(e.get("msg")).removeprefix("Value error, ").removeprefix("Assertion failed, "),
            "type": str(e.get("type")),
        }
        for e in errors
    ]
