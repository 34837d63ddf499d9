"""How many bytes a request body may hold, per route, refused before the route reads it.

Every route that takes a body reads it through this ASGI middleware: a declared
``Content-Length`` over the route's limit is a 413 at once (nothing read), and a body sent
without one (chunked) is counted as it arrives and cut off with the same 413 the moment it passes
the limit, so a client can never make a worker hold more than the limit in memory.

=============================================  ===============================================
route                                          limit
=============================================  ===============================================
``/v1/chat/completions``                       setting ``chat_body_max_kb`` (a conversation's
                                               history rides along with every question)
``/v1/ingest``, ``/v1/sync``                   :data:`excerpt.edge.uploads.MAX_UPLOAD` (the
                                               routes stream it to disk and count it too)
every other route (``/v1/ask``, ``/v1/memory``  setting ``body_max_kb``
…, ``/mcp``)
=============================================  ===============================================
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from excerpt.edge.uploads import MAX_UPLOAD
from excerpt.settings import Settings

__all__ = ["BodyLimits", "limit_for"]

UPLOAD_ROUTES = ("/v1/ingest", "/v1/sync")
CHAT_ROUTE = "/v1/chat/completions"


def limit_for(path: str, settings: Settings) -> tuple[int, str]:
    """The most bytes a body sent to ``path`` may hold, and what sets that limit."""
    if path in UPLOAD_ROUTES:
        return MAX_UPLOAD, "the upload limit"
    if path == CHAT_ROUTE:
        return settings.chat_body_max_kb * 1024, "setting chat_body_max_kb"
    return settings.body_max_kb * 1024, "setting body_max_kb"


class BodyLimits:
    """The ASGI middleware refusing bodies over their route's :func:`limit_for`."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, source = limit_for(scope["path"], self.settings)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(send, limit, source)
            return
        seen = 0
        started = refused = False

        async def counted() -> Message:
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit and not refused:
                    refused = True
                    if not started:
                        await _refuse(send, limit, source)
                    # the route sees the client gone; whatever it answers is dropped
                    return {"type": "http.disconnect"}
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except Exception:
            if not refused:
                raise  # a body cut off leaves the route's own failure unanswered, not logged


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


async def _refuse(send: Send, limit: int, source: str) -> None:
    body: dict[str, Any] = {"error": f"the request body is over {limit} bytes ({source})",
                            "kind": "too_large"}
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": data})
