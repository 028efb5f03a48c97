"""The API's documentation pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served from local files.

FastAPI's own pages load Swagger UI and ReDoc from a CDN, so offline they are blank. The JavaScript
and CSS bundles here come from the ``fastapi-offline`` wheel (MIT; it ships Swagger UI's
``swagger-ui-bundle.js``/``swagger-ui.css`` and ReDoc's ``redoc.standalone.js``), served under
:data:`STATIC_URL`; the pages are FastAPI's own HTML with those local URLs and without Google Fonts, and the
one remote image ReDoc's bundle loads (its sidebar logo) is pointed at the local icon.
"""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

log = logging.getLogger(__name__)

STATIC_URL = "/docs-assets"
"""Where the bundles are served (public, like the pages: no ``/v1`` prefix, no key)."""
ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")


def assets_dir() -> Path:
    """The folder holding the Swagger UI and ReDoc bundles; ``RuntimeError`` naming the fix when it is missing."""
    try:
        import fastapi_offline
    except ImportError as exc:  # pragma: no cover - a broken install
        raise RuntimeError("the API docs need the fastapi-offline package: pip install -e . (it is pinned)") from exc
    folder = Path(fastapi_offline.__file__).parent / "static"
    missing = [a for a in ASSETS if not (folder / a).is_file()]
    if missing:
        raise RuntimeError(f"fastapi-offline at {folder} lacks {missing}: reinstall it")
    return folder


REMOTE_IN_REDOC = "https://cdn.redoc.ly/redoc/logo-mini.svg"
"""The one remote URL ReDoc's bundle loads at run time (the sidebar's Redocly logo); served as the local icon."""


def _offline_redoc(path: Path) -> bytes:
    """ReDoc's bundle with its one remote image pointed at the local icon (the page loads nothing remote)."""
    text = path.read_text(encoding="utf-8")
    if REMOTE_IN_REDOC not in text:
        log.warning("ReDoc's bundle no longer names %s: check it loads nothing remote", REMOTE_IN_REDOC)
    return text.replace(REMOTE_IN_REDOC, f"{STATIC_URL}/favicon.png").encode("utf-8")


def install(app: FastAPI, *, docs_url: str = "/docs", redoc_url: str = "/redoc") -> None:
    """Serve ``docs_url`` and ``redoc_url`` with local assets. Create ``app`` with ``docs_url=None,
    redoc_url=None`` (else FastAPI's CDN pages are matched first)."""
    if app.docs_url or app.redoc_url:
        raise ValueError("create the app with docs_url=None and redoc_url=None: install() serves them offline")
    redoc_js = _offline_redoc(assets_dir() / "redoc.standalone.js")

    @app.get(f"{STATIC_URL}/redoc.standalone.js", include_in_schema=False)
    async def redoc_bundle() -> Response:  # before the mount: it wins
        return Response(redoc_js, media_type="text/javascript; charset=utf-8")

    app.mount(STATIC_URL, StaticFiles(directory=assets_dir()), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"
    oauth2_url = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @app.get(docs_url, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=f"{root}{oauth2_url}",
            swagger_js_url=f"{root}{STATIC_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{STATIC_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{STATIC_URL}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    @app.get(oauth2_url, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(redoc_url, include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{STATIC_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{STATIC_URL}/favicon.png",
            with_google_fonts=False,
        )
