"""``/mcp`` on ``excerpt serve``: the MCP server over Streamable HTTP, each request with the
rights of its bearer key.

A request reaches the SDK only with a valid key of the server's :class:`KeyRing` (or a valid
token of its identity provider, :mod:`excerpt.edge.oidc`): no key, a wrong or revoked one is
401 and an unreadable keys file 503, with the REST routes' bodies (``{"error", "kind"}``).
The key's rights ride in the ASGI scope to the tools
(:func:`from_request`); the key's name is also the SDK's session owner, and conversations are
the key's own (``NAME/CONVERSATION``, as ``/v1/memory`` and ``/v1/ask`` keep them).

The transport is stateless with JSON responses: every POST is answered on its own, with the
rights of its own key, so no session outlives a revoked key or carries one key's rights to
another's requests; any number of workers could answer. No DNS-rebinding check on Host or
Origin: every request must carry a key, which a foreign page cannot.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from excerpt.edge.keys import KeyRing, Unavailable, digest, sign_in
from excerpt.edge.uploads import Uploads
from excerpt.engine import Engine
from excerpt.errors import Forbidden
from excerpt.mcp.server import build_server
from excerpt.mcp.tools import Ingest
from excerpt.memory.store import MemoryStore
from excerpt.scope import Rights

PATH = "/mcp"
RIGHTS = "excerpt.rights"
"""The ASGI scope key under which an authenticated request carries its :class:`Rights`."""


def from_request(ctx: Context) -> Rights:
    """The rights of the HTTP request behind a tool call (refused when it has none)."""
    request = ctx.request_context.request
    rights = getattr(request, "scope", {}).get(RIGHTS)
    if not isinstance(rights, Rights):
        raise Forbidden("a valid API key is required (Authorization: Bearer KEY)")
    return rights


class Keyed:
    """ASGI: lets a request through to ``app`` only with a valid key, its rights attached."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        self.app, self.keys = app, keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        auth = next((v.decode("latin-1") for k, v in scope.get("headers", ())
                     if k == b"authorization"), None)
        token = auth.removeprefix("Bearer ").strip() if auth else None
        try:  # an API key (its file re-read when changed), or the identity provider's JWT
            caller = await sign_in(self.keys, token)
        except Unavailable as exc:
            refused = JSONResponse({"error": exc.message, "kind": "unavailable"},
                                   status_code=503)
            await refused(scope, receive, send)
            return
        if caller is None or token is None:
            refused = JSONResponse(
                {"error": "a valid API key is required (Authorization: Bearer KEY)",
                 "kind": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
            await refused(scope, receive, send)
            return
        user = AuthenticatedUser(AccessToken(token=digest(token), client_id=caller.name,
                                             scopes=[caller.role]))
        await self.app({**scope, RIGHTS: caller.rights(), "user": user}, receive, send)


def mount(app: Any, engine: Engine, keys: KeyRing, memory: MemoryStore, uploads: Uploads,
          ingest_roots: Sequence[Path] = ()) -> None:
    """Serve MCP at ``/mcp`` of the FastAPI ``app``; the SDK's session manager runs inside
    the app's lifespan. ``memory`` is the app's conversation store (one writer); ``uploads``
    and ``ingest_roots`` are the app's, for the ingest tool (ingester and admin keys)."""
    ingest = Ingest(uploads, tuple(ingest_roots))
    server = build_server(engine, from_request, memory, private_errors=True, ingest=ingest)
    server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    manager = server.session_manager
    app.router.routes.append(Route(PATH, endpoint=Keyed(StreamableHTTPASGIApp(manager), keys),
                                   methods=["GET", "POST", "DELETE"]))
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi: Any) -> AsyncIterator[Any]:
        async with manager.run(), inner(asgi) as state:
            yield state

    app.router.lifespan_context = lifespan
