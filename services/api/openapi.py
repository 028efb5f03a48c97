"""The OpenAPI document states every error a route can answer, in the shape it is answered.

FastAPI documents only ``200``/``201`` and a ``422`` whose body is a list of validation errors. This
API answers errors as ``{"detail": <text or object>, "errors": [...]?}`` and, on any ``/v1`` route,
``401`` (no or a revoked key: checked before the body is read), ``404`` (unknown — or another key's —
job, report or artifact), ``409`` (conflict: reused idempotency key, report not ready), ``413``
(body, upload or image too large), ``415`` (not a readable image), ``422`` (invalid input) and
``503`` (the job queue is unavailable). :func:`install` documents them on every ``/v1`` operation,
so a contract test (schemathesis) can hold the server to its schema, and answers ``405`` with an
``Allow`` header listing every method of the path (Starlette lists only the first route's).
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

ERROR_SCHEMA: dict[str, Any] = {
    "title": "Error",
    "type": "object",
    "required": ["detail"],
    "properties": {
        "detail": {
            "description": "What went wrong: a message, or an object with a message and its details.",
            "anyOf": [{"type": "string"}, {"type": "object"}, {"type": "array"}],
        },
        "errors": {
            "type": "array",
            "description": "Validation errors, one per offending field.",
            "items": {
                "type": "object",
                "properties": {
                    "loc": {"type": "array", "items": {"type": "string"}},
                    "msg": {"type": "string"},
                    "type": {"type": "string"},
                },
            },
        },
    },
}

ERRORS: dict[str, str] = {
    "400": "Malformed request (a body that cannot be parsed as its content type).",
    "401": "Missing, malformed or revoked API key (checked before the body is read).",
    "404": "No such resource — or one that belongs to another API key.",
    "409": "Conflict: an idempotency key reused with other method/params, or a report not ready yet.",
    "413": "Body, upload or image (pixels) larger than the server's limits.",
    "415": "An upload that is not a readable image (or a corrupt one).",
    "422": "Invalid input: the fields and what is wrong with each.",
    "503": "The job queue (broker) is unavailable; nothing was queued.",
}


def _document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    schema.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    for path, item in schema.get("paths", {}).items():
        if not path.startswith("/v1/"):
            continue
        for method, op in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = op.setdefault("responses", {})
            if "201" in responses and "200" not in responses:
                # submissions answer 200 with the earlier job when an idempotency key is reused
                responses["200"] = {**responses["201"], "description": "An earlier job with the same idempotency key."}
            for code, text in ERRORS.items():
                responses[code] = {"description": text, **ref}
    return schema


def _methods_of(app: FastAPI, path: str) -> set[str]:
    """Every documented method of the path template ``path`` matches (from the OpenAPI document)."""
    table = getattr(app.state, "path_methods", None)
    if table is None:
        table = []
        for template, item in app.openapi().get("paths", {}).items():
            rx = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")
            table.append((rx, {m.upper() for m in item if m in ("get", "post", "put", "patch", "delete")}))
        app.state.path_methods = table
    # the most specific templates win: ``/runs/stream`` is its own resource, not an instance of ``/runs/{id}``
    matches = [(rx.pattern.count("[^/]+"), methods) for rx, methods in table if rx.match(path)]
    if not matches:
        return set()
    fewest = min(n for n, _ in matches)
    return set().union(*(m for n, m in matches if n == fewest))


def _generate(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, where a generated job route and an upload route on one path are one operation.

    FastAPI documents one operation per path and method, the last route's. A generated job route
    (:class:`services.api.job_routes.JobRoute`, JSON) and an upload route (multipart) share a path; the
    document is built twice, with the job routes first and last, and the shared operations keep the job
    route's description and both request bodies.
    """
    from services.api.job_routes import JobRoute

    def build(routes: list[Any]) -> dict[str, Any]:
        return get_openapi(title=app.title, version=app.version, description=app.description, routes=routes)

    routes = list(app.routes)
    jobs = [r for r in routes if isinstance(r, JobRoute)]
    others = [r for r in routes if not isinstance(r, JobRoute)]
    uploads_win = build([*jobs, *others])
    jobs_win = build([*others, *jobs])
    for path, item in jobs_win.get("paths", {}).items():
        for method, op in item.items():
            other = uploads_win["paths"].get(path, {}).get(method)
            if not isinstance(op, dict) or not other or other.get("operationId") == op.get("operationId"):
                continue
            body = op.setdefault("requestBody", {"content": {}, "required": True})
            for media, content in other.get("requestBody", {}).get("content", {}).items():
                body["content"].setdefault(media, content)
            if other.get("description"):
                op["description"] = (op.get("description", "") + "\n\nAs multipart: " + other["description"]).strip()
    for name, schema in uploads_win.get("components", {}).get("schemas", {}).items():
        jobs_win.setdefault("components", {}).setdefault("schemas", {}).setdefault(name, schema)
    _restore_defaults(jobs_win, jobs)
    return jobs_win


def _restore_defaults(doc: dict[str, Any], jobs: list[Any]) -> None:
    """Put back the defaults FastAPI's document drops from a job's body schema (``null``, a factory's value).

    FastAPI serialises the document without ``None`` values, so ``"default": null`` of an optional field
    vanished, and pydantic leaves ``default_factory`` values out; the job's own schema
    (:meth:`core.jobs.registry.MethodSpec.json_schema`) has both, and the body shows what the job will use.
    """
    from core.jobs.registry import get_method

    schemas = doc.get("components", {}).get("schemas", {})
    for route in jobs:
        op = doc.get("paths", {}).get(route.path, {}).get("post", {})
        ref = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")
        body = schemas.get(ref.rsplit("/", 1)[-1]) if ref else None
        if body is None:
            continue
        own = get_method(route.paperworks_method).json_schema().get("properties", {})
        for name, prop in body.get("properties", {}).items():
            if "default" not in prop and "default" in own.get(name, {}):
                prop["default"] = own[name]["default"]


def install(app: FastAPI) -> None:
    """Document the error responses on every ``/v1`` operation; 405 answers with the path's full ``Allow``."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _document_errors(_generate(app))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            allowed = _methods_of(app, request.url.path)
            if allowed:
                headers["Allow"] = ", ".join(sorted(allowed))
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers or None)
