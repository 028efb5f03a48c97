"""``POST /v1/<method>/<job>``: a submission route per registered job, generated from its params model.

The body is the job's params model itself (so the OpenAPI document shows every field with its type,
default, range and description, and FastAPI answers 422 with one error per field, cross-field rules
included, before anything is stored); the answer is the job, exactly as ``POST /v1/jobs`` gives it:
``201`` and the job, or ``200`` and the earlier job when the ``Idempotency-Key`` header (or the
``idempotency_key`` query parameter) was used before for the same params by the same key, ``409``
when it was used for other params. Authentication, body size limits, the LLM allow-list, ownership
of named objects and the device's queue are those of ``POST /v1/jobs`` (:func:`services.api.deps.submit`).

Paths: ``/v1/`` + the method name with ``/`` for ``.`` (``nonlinear_sdr.fit`` → ``/v1/nonlinear_sdr/fit``),
plus the older per-method paths a routes module lists in ``JOB_PATHS`` (``{"/clinical/trace":
"clinical_got.case"}``), which answer the same way. Where a hand-written route already serves a path:

* an upload route (multipart) shares it: the generated route takes JSON bodies and leaves multipart
  ones to the upload route (both are documented as one operation with two request bodies);
* a JSON route (a synchronous answer, a choice of queue) keeps the path, and the generated one is at
  ``<path>/job`` (``POST /v1/lms3/select`` answers at once, ``POST /v1/lms3/select/job`` submits the job).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query, Response, status
from fastapi.routing import APIRoute
from starlette.routing import Match

from core.jobs.registry import MethodSpec, list_methods
from services.api.deps import ApiKeyDep, submit
from services.api.schemas import JobPublic

IDEMPOTENCY_HELP = (
    "Submitting again with the same key and the same params returns the earlier job (200) instead of a new one; "
    "the same key with other params is a 409."
)


JOB_SUFFIX = "/job"


def method_path(name: str) -> str:
    """``/v1/nonlinear_sdr/fit`` for ``nonlinear_sdr.fit``."""
    return "/v1/" + name.replace(".", "/")


def _content_type(scope: Mapping[str, Any]) -> str:
    for k, v in scope.get("headers") or ():
        if k == b"content-type":
            return v.decode("latin-1").split(";")[0].strip().lower()
    return ""


class JobRoute(APIRoute):
    """A generated job route: it serves JSON bodies, and leaves multipart ones to an upload route on its path."""

    paperworks_method: str = ""

    def matches(self, scope: Any) -> tuple[Match, dict[str, Any]]:
        match, child = super().matches(scope)
        if match is Match.FULL and _content_type(scope) == "multipart/form-data":
            return Match.NONE, {}
        return match, child


def endpoint(spec: MethodSpec):
    """The route function of ``spec``: body = its params model, the job's answer as ``POST /v1/jobs``."""
    model = spec.params_model

    def submit_job(
        params: Any, key: Any, response: Response, idempotency_key_header: Any = None, idempotency_key: Any = None
    ) -> JobPublic:
        job, created = submit(
            spec.name,
            params.model_dump(mode="json"),
            key=key,
            idempotency_key=idempotency_key_header or idempotency_key,
        )
        if not created:
            response.status_code = status.HTTP_200_OK
        return JobPublic.model_validate(job)

    p = inspect.Parameter
    submit_job.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            p("params", p.POSITIONAL_OR_KEYWORD, annotation=model),
            p("key", p.POSITIONAL_OR_KEYWORD, annotation=ApiKeyDep),
            p("response", p.POSITIONAL_OR_KEYWORD, annotation=Response),
            p(
                "idempotency_key_header",
                p.POSITIONAL_OR_KEYWORD,
                annotation=Annotated[
                    str | None,
                    Header(alias="Idempotency-Key", min_length=1, max_length=200, description=IDEMPOTENCY_HELP),
                ],
                default=None,
            ),
            p(
                "idempotency_key",
                p.POSITIONAL_OR_KEYWORD,
                annotation=Annotated[
                    str | None,
                    Query(min_length=1, max_length=200, description="The same as the Idempotency-Key header."),
                ],
                default=None,
            ),
        ],
        return_annotation=JobPublic,
    )
    submit_job.__name__ = f"submit_{spec.name.replace('.', '_')}"
    submit_job.__doc__ = (
        f"{spec.description or spec.title}\n\nSubmits the `{spec.name}` job: the body is its params model "
        f'(`{model.__name__}`); the answer is the job, as `POST /v1/jobs` with `method = "{spec.name}"` gives it.'
    )
    return submit_job


def _json_routes(app: FastAPI) -> dict[str, Any]:
    """Hand-written POST routes taking a JSON body, by path (they keep their path; upload routes share theirs)."""
    from fastapi.routing import iter_route_contexts

    out = {}
    for ctx in iter_route_contexts(app.router.routes):
        route = ctx.original_route
        if not isinstance(route, APIRoute) or isinstance(route, JobRoute) or "POST" not in (ctx.methods or ()):
            continue
        body = route.body_field
        if body is not None and getattr(body.field_info, "media_type", "application/json") == "application/json":
            out[ctx.path] = route
    return out


def install(
    app: FastAPI,
    aliases: Mapping[str, str] | None = None,
    methods: Iterable[MethodSpec] | None = None,
    at: int | None = None,
) -> list[JobRoute]:
    """Add a :class:`JobRoute` per method (its ``/v1/<method>/<job>`` path and the ``aliases`` naming it).

    ``aliases`` maps a path under ``/v1`` (``/clinical/trace``) to a method name. The routes go at position
    ``at`` of the app's routes (default: the end), which must be before the routers of upload routes sharing
    their paths (those then get the multipart bodies). Returns the routes.
    """
    aliases = aliases or {}
    specs = {s.name: s for s in (methods if methods is not None else list_methods())}
    unknown = {m for m in aliases.values() if m not in specs}
    if unknown:
        raise ValueError(f"JOB_PATHS name unknown methods: {sorted(unknown)}")
    wanted: list[tuple[str, MethodSpec, bool]] = [(method_path(n), s, True) for n, s in specs.items()]
    wanted += [("/v1" + path, specs[m], False) for path, m in aliases.items()]
    taken = _json_routes(app)
    added = []
    at = len(app.router.routes) if at is None else at
    for path, spec, canonical in wanted:
        if path in taken:
            if not canonical:
                raise ValueError(f"{path}: a hand-written JSON route serves it; it cannot also be {spec.name}'s")
            path += JOB_SUFFIX  # POST /v1/lms3/select answers synchronously; /v1/lms3/select/job submits the job
        route = JobRoute(
            path,
            endpoint(spec),
            methods=["POST"],
            response_model=JobPublic,
            status_code=status.HTTP_201_CREATED,
            tags=[spec.package or spec.name.split(".")[0]],
            summary=spec.title if canonical else f"{spec.title} (also POST {method_path(spec.name)})",
        )
        route.paperworks_method = spec.name
        app.router.routes.insert(at + len(added), route)
        added.append(route)
    return added


def job_routes(app: FastAPI) -> dict[str, list[str]]:
    """``{method: [paths]}`` of the generated routes in ``app`` (tests, docs)."""
    out: dict[str, list[str]] = {}
    for r in app.router.routes:
        if isinstance(r, JobRoute):
            out.setdefault(r.paperworks_method, []).append(r.path)
    return out
