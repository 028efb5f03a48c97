"""The two ways to reach the MCP server: stdio (a spawned process) and streamable HTTP (API-key protected).

Over HTTP every request must carry one of the API's keys (``Authorization: Bearer <key>`` or
``X-API-Key: <key>``; ``paperworks keys create`` makes one); the key's id becomes the owner of the
jobs it starts, as with ``POST /v1/jobs``. stdio needs no key: whoever can spawn the process can
already read the database it uses.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio

from core.db import crud
from core.db.session import session_scope
from services.mcp.jobs import Dispatch
from services.mcp.server import STATE_KEY, build_server

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"


def _caller(key: str) -> tuple[str, bool] | None:
    """``(key id, admin)`` of a live key (admin: the ``admin`` scope, which sees every owner's jobs)."""
    with session_scope() as s:
        row = crud.verify_api_key(s, key=key)
        if row is None:
            return None
        return row.id, "admin" in (getattr(row, "scopes", "") or "").split()


def _presented_key(scope: dict[str, Any]) -> str | None:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth.split(" ", 1)[1].strip()
    return headers.get("x-api-key") or None


class ApiKeyAuth:
    """ASGI middleware: HTTP requests need a live API key; ``(key id, admin)`` goes into ``scope["state"]``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = _presented_key(scope)
        caller = await anyio.to_thread.run_sync(_caller, key) if key else None
        if caller is None:
            detail = "invalid or revoked API key" if key else "missing API key: send 'Authorization: Bearer <key>'"
            body = json.dumps({"detail": detail}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b"Bearer"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        scope.setdefault("state", {})[STATE_KEY] = caller
        await self.app(scope, receive, send)


def http_app(*, dispatch: Dispatch = "inline", host: str = "127.0.0.1", allowed_hosts: list[str] | None = None):
    """The streamable-HTTP ASGI app, served at ``/mcp`` behind :class:`ApiKeyAuth`.

    ``host`` is the bind address: on a loopback address the SDK's DNS-rebinding protection only accepts
    loopback ``Host`` headers; ``allowed_hosts`` (``"name:port"`` patterns) widens that for a real host name.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    security = None
    if allowed_hosts:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts)
    server = build_server(dispatch=dispatch)
    starlette = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host, transport_security=security)
    return ApiKeyAuth(starlette)


def serve_http(*, host: str = "127.0.0.1", port: int = 8100, dispatch: Dispatch = "inline") -> None:
    import uvicorn

    uvicorn.run(http_app(dispatch=dispatch, host=host), host=host, port=port, log_level="info")


def serve_stdio(*, dispatch: Dispatch = "inline") -> None:
    """Serve one client on this process's stdin/stdout until it closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(dispatch=dispatch)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
