"""An ASGI middleware that refuses request bodies over the configured size (413), streamed or not."""

from __future__ import annotations

import json

from core.config import get_settings


class BodyTooLarge(Exception):
    pass


class BodySizeLimit:
    """JSON bodies up to ``max_body_bytes``; multipart up to ``max_upload_bytes`` × files + slack."""

    def __init__(self, app, *, max_files: int = 8) -> None:
        self.app = app
        self.max_files = max_files

    def _limit(self, scope) -> int:
        s = get_settings()
        headers = dict(scope.get("headers") or [])
        ctype = headers.get(b"content-type", b"").decode("latin-1").lower()
        if ctype.startswith("multipart/"):
            return s.max_upload_bytes * self.max_files + 64 * 1024
        return s.max_body_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self._limit(scope)
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return await _reject(send, limit)
        seen = 0
        exceeded = started = False

        async def limited_receive():
            nonlocal seen, exceeded
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    exceeded = True
                    raise BodyTooLarge()
            return msg

        async def guarded_send(message):
            # a framework that catches BodyTooLarge while parsing answers 400; the answer is 413
            nonlocal started
            if exceeded:
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await _reject(send, limit)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except BodyTooLarge:
            if not started:
                await _reject(send, limit)


async def _reject(send, limit: int) -> None:
    body = json.dumps({"detail": f"request body larger than {limit} bytes"}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
