"""Serve every PAE site from one local HTTP server (uvicorn in a background thread or in the foreground).

``SiteServer`` binds 127.0.0.1 on a free port (or a given one), mounts each site
under ``/<name>/`` and a portal page at ``/`` that links them. Used by tests, the
rollout workers and ``paperworks sites serve``.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from agents.pae.sites import build_sites
from agents.pae.sites.base import Site, esc, page

log = logging.getLogger(__name__)


def create_app(seed: int = 0, sites: dict[str, Site] | None = None) -> FastAPI:
    """The ASGI app serving every site under ``/<name>/`` plus a portal at ``/``."""
    sites = sites or build_sites(seed)
    app = FastAPI(title="PAE sites", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/", response_class=HTMLResponse)
    def portal() -> HTMLResponse:
        items = "".join(
            f"<li><a href='/{s.name}/'>{esc(s.title)}</a>: {esc(s.description)}</li>" for s in sites.values()
        )
        return HTMLResponse(page("Local sites", "/", f"<h1>Local websites</h1><ul>{items}</ul>"))

    for s in sites.values():
        app.include_router(s.router(), prefix=f"/{s.name}")
    app.state.sites = sites
    return app


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class SiteServer:
    """A running sites server; use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self, seed: int = 0, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.seed, self.host = seed, host
        self.port = port or free_port(host)
        self._server = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout_s: float = 20.0) -> SiteServer:
        import uvicorn

        config = uvicorn.Config(
            create_app(self.seed), host=self.host, port=self.port, log_level="warning", access_log=False, lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True, name=f"pae-sites-{self.port}")
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not getattr(self._server, "started", False):
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"sites server did not start on {self.base_url}")
            time.sleep(0.05)
        log.info("PAE sites serving at %s", self.base_url)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(seed: int = 0, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve in the foreground (``paperworks sites serve``)."""
    import uvicorn

    uvicorn.run(create_app(seed), host=host, port=port, log_level="info")
