"""The FastAPI application: generic routes plus every module in ``services/api/routes``.

Serve it with ``uvicorn --factory services.api.main:create_app``.

A routes module exports ``router``; it is mounted under ``/v1`` behind the API key,
unless it sets ``PUBLIC = True`` (health checks).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from core.jobs.registry import InvalidParams, UnknownMethod, load_all
from services.api import routes
from services.api.auth import AuthenticateFirst
from services.api.docs import install as install_docs
from services.api.limits import BodySizeLimit
from services.api.openapi import install as install_openapi
from services.api.uploads import strict_utf8_multipart

log = logging.getLogger(__name__)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{loc}: {e.get('msg')}")
    return "; ".join(parts)[:2000]


def create_app() -> FastAPI:
    load_all()
    app = FastAPI(
        title="paperworks",
        version="0.1.0",
        description="Nineteen ICML 2025 methods as jobs, reports and agent endpoints.",
        docs_url=None,  # served from local assets by install_docs (FastAPI's own pages load from a CDN)
        redoc_url=None,
    )
    install_docs(app)
    # routes are matched in the order they are added: the hot paths (health checks, job submission and
    # polling) go first, so they do not walk every method's routes on each request
    hot = ("health", "jobs")
    for info in sorted(pkgutil.iter_modules(routes.__path__), key=lambda i: (i.name not in hot, i.name)):
        try:
            mod = importlib.import_module(f"services.api.routes.{info.name}")
        except Exception:
            log.exception("could not load API routes %s", info.name)
            continue
        router = getattr(mod, "router", None)
        if router is None:
            continue
        app.include_router(router, prefix="" if getattr(mod, "PUBLIC", False) else "/v1")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            {
                "detail": _validation_message(exc),
                "errors": [{"loc": list(map(str, e.get("loc", ()))), "msg": str(e.get("msg"))} for e in exc.errors()],
            },
            status_code=422,
        )

    @app.exception_handler(UnknownMethod)
    async def _unknown(_: Request, exc: UnknownMethod) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(InvalidParams)
    async def _params(_: Request, exc: InvalidParams) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    install_openapi(app)
    strict_utf8_multipart()
    app.add_middleware(BodySizeLimit)
    app.add_middleware(AuthenticateFirst)  # outermost: no body is read before the key is checked
    return app
