"""The FastAPI application: generic routes plus every module in ``services/api/routes``.

Serve it with ``uvicorn --factory services.api.main:create_app``.

A routes module exports ``router``; it is mounted under ``/v1`` behind the API key,
unless it sets ``PUBLIC = True`` (health checks).

Every registered job also gets ``POST /v1/<method>/<job>`` (:mod:`services.api.job_routes`), generated
from its params model; a routes module keeps an older path of a job working by listing it in
``JOB_PATHS = {"/clinical/trace": "clinical_got.case"}`` instead of writing the route.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from core.jobs.registry import InvalidParams, UnknownMethod, error_sentences, load_all
from services.api import job_routes, routes
from services.api.auth import AuthenticateFirst
from services.api.docs import install as install_docs
from services.api.limits import BodySizeLimit
from services.api.openapi import install as install_openapi
from services.api.uploads import strict_utf8_multipart

log = logging.getLogger(__name__)


def _validation_message(exc: RequestValidationError) -> str:
    """One sentence per error (``field: what is wrong``; a cross-field rule's sentence alone), joined by ``; ``."""
    return "; ".join(error_sentences(exc.errors()))[:2000] or "invalid request"


def _msg(e: dict) -> str:
    """An error's message without pydantic's ``Value error, `` prefix (the model's own sentence)."""
    return str(e.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")


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
    aliases: dict[str, str] = {}
    after_hot = len(app.router.routes)
    for info in sorted(pkgutil.iter_modules(routes.__path__), key=lambda i: (i.name not in hot, i.name)):
        try:
            mod = importlib.import_module(f"services.api.routes.{info.name}")
        except Exception:
            log.exception("could not load API routes %s", info.name)
            continue
        aliases.update(getattr(mod, "JOB_PATHS", {}))
        router = getattr(mod, "router", None)
        if router is None:
            continue
        app.include_router(router, prefix="" if getattr(mod, "PUBLIC", False) else "/v1")
        if info.name in hot:
            after_hot = len(app.router.routes)
    # POST /v1/<method>/<job> for every job (and the older paths listed in JOB_PATHS), before the method
    # routers: a generated route takes the JSON bodies of a path it shares with an upload route
    job_routes.install(app, aliases, at=after_hot)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            {
                "detail": _validation_message(exc),
                "errors": [
                    {"loc": list(map(str, e.get("loc", ()))), "msg": _msg(e), "type": str(e.get("type", ""))}
                    for e in exc.errors()
                ],
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
