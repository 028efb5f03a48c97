"""``/healthz`` (process is up) and ``/readyz`` (database, broker and vector store reachable)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from core.config import get_settings
from core.db.session import get_engine

router = APIRouter(tags=["health"])
PUBLIC = True  # mounted without the /v1 prefix and without an API key


@router.get("/healthz")
def healthz() -> dict:
    return {"status": "ok"}


def _check_db() -> str:
    with get_engine().connect() as conn:
        conn.execute(text("SELECT 1"))
    return "ok"


def _check_broker() -> str:
    from services.worker.celery_app import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=3)
    return "ok"


def _check_vectorstore() -> str:
    from core.vectorstore import get_vectorstore

    get_vectorstore().heartbeat()
    return "ok"


@router.get("/readyz")
def readyz() -> JSONResponse:
    checks = {}
    for name, fn in (("database", _check_db), ("broker", _check_broker), ("vectorstore", _check_vectorstore)):
        try:
            checks[name] = fn()
        except Exception as exc:  # report, don't crash
            checks[name] = f"error: {type(exc).__name__}: {exc}"[:300]
    ok = all(v == "ok" for v in checks.values())
    s = get_settings()
    return JSONResponse(
        {
            "status": "ok" if ok else "unavailable",
            "checks": checks,
            "database": "postgresql" if s.is_postgres else "sqlite",
            "llm_model": s.llm_model,
        },
        status_code=200 if ok else 503,
    )
