"""Authenticate before anything else: a ``/v1`` request without a live key gets its 401 before its body is read.

FastAPI reads and parses a request's body before it resolves the route's dependencies, so with
only the ``ApiKeyDep`` dependency an unauthenticated client could make the server read (and parse)
a 60 MB multipart body, and a malformed JSON body got a 422 instead of the 401. This ASGI
middleware checks the ``Authorization`` header first (in a worker thread: it queries the
database), answers 401 without calling ``receive``, and hands the key row to the dependency
through ``scope["state"]`` so it is looked up once.
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool

PROTECTED_PREFIX = "/v1/"


def _cached(authorization: str | None):
    from services.api.deps import cached_key

    return cached_key(authorization)


def _check(authorization: str | None):
    from services.api.deps import authenticate

    return authenticate(None, authorization)  # opens a session only on a cache miss


class AuthenticateFirst:
    """401 for ``/v1/...`` requests without a live API key, before the body is touched."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope.get("path", "").startswith(PROTECTED_PREFIX):
            return await self.app(scope, receive, send)
        raw = dict(scope.get("headers") or []).get(b"authorization")
        header = raw.decode("latin-1") if raw is not None else None
        found = _cached(header)  # a recently verified key needs no thread hop
        if found is None:
            found = await run_in_threadpool(_check, header)
        if isinstance(found, str):
            body = json.dumps({"detail": found}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b"Bearer"),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        scope.setdefault("state", {})["api_key"] = found
        await self.app(scope, receive, send)
