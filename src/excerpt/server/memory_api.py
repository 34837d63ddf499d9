"""The memory daemon's HTTP API (``excerpt memory serve``).

``POST /v1/memory/{conversation}/query`` with ``{"intent": ..., "data": {...}}`` runs one
operation through :func:`excerpt.memory.intents.handle` and returns its JSON; ``GET
/-/health`` answers ``{"status": "ok", "backend": ...}``; ``GET /openapi.json`` describes both
(there is no ``/docs`` page: it would load its scripts from a CDN). One store serves every
request; it serialises writes per store, so parallel clients neither lose nor reorder an
acknowledged write.

The daemon has no authentication of its own and binds to loopback by default. A web page could
still reach it by DNS rebinding (its own name made to resolve to 127.0.0.1), so every request
must carry a ``Host`` that names this machine's loopback (``localhost``, ``127.0.0.1``,
``[::1]``, any port), the address it is bound to, or a name allowed with ``--allow-host``;
any other is refused with 400 before a route runs.

Every error, whatever raised it (bad input, bad JSON, an unknown route or method, a foreign
Host, a store failure), has one shape, ``{"error", "kind"}``: 400 for bad input, 404 for an
unknown route, 405 for a method a route does not take, 500 for anything else.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from excerpt.errors import ExcerptError
from excerpt.memory.intents import INTENTS, handle
from excerpt.memory.store import MemoryStore
from excerpt.server.openapi import install as install_openapi

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
_STATUS = {"input": 400, "corpus": 400, "not_found": 404}
_log = logging.getLogger(__name__)


class Error(BaseModel):
    """Every error the daemon answers."""

    error: str = Field(description="what went wrong, for a person")
    kind: str = Field(description="input, host, not_found, method_not_allowed, store, internal")


class QueryBody(BaseModel):
    """One memory operation: the intent and its data (the CLI's option names)."""

    intent: str = Field(description=f"one of {', '.join(INTENTS)}")
    data: dict[str, Any] = Field(default_factory=dict)


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": Error, "description": "Bad input (a field, or a body that is not JSON), or "
                                         "a Host header that is not a loopback name"},
    404: {"model": Error, "description": "No such route"},
    405: {"model": Error, "description": "The route does not take this method"},
    500: {"model": Error, "description": "The memory store failed"},
}


def error(message: str, kind: str, status: int,
          headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "kind": kind}, status_code=status, headers=headers)


def host_name(header: str) -> str:
    """The name in a ``Host`` header, lower case, without its port ('' when malformed)."""
    value = header.strip().lower()
    if value.startswith("["):  # an IPv6 literal: [::1]:8765
        name, bracket, rest = value.partition("]")
        if not bracket:
            return ""
        name += "]"
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
    if rest and not (rest.startswith(":") and rest[1:].isdigit()):
        return ""
    return name


def allowed_hosts(bound: str | None = None, extra: Iterable[str] = ()) -> frozenset[str]:
    """The loopback names, the address the daemon is bound to, and ``extra``, as
    :func:`host_name` gives them."""
    names = set(LOOPBACK_HOSTS) | {host_name(h) for h in extra}
    if bound:
        names.add(host_name(f"[{bound}]" if ":" in bound and "[" not in bound else bound))
    return frozenset(n for n in names if n)


class LoopbackHosts:
    """ASGI middleware: refuse a request whose one ``Host`` header names no allowed host."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            hosts = [v.decode("latin-1") for k, v in scope["headers"] if k == b"host"]
            if len(hosts) != 1 or host_name(hosts[0]) not in self.allowed:
                refused = error("the Host header must name this machine's loopback "
                                "(localhost, 127.0.0.1 or [::1])", "host", 400)
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ExcerptError)
    def excerpt_error(_: Request, exc: ExcerptError) -> JSONResponse:
        status = _STATUS.get(exc.kind, 500)
        if status < 500:
            return error(str(exc), exc.kind, status)
        _log.error("memory daemon: %s", exc)  # it may name files: the log only
        return error(f"the memory store failed ({exc.kind} error; the daemon's log says why)",
                     exc.kind, status)

    @app.exception_handler(RequestValidationError)
    def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        if first.get("type") == "json_invalid":
            reason = first.get("ctx", {}).get("error", "")
            return error(f"the body is not valid JSON: {reason}".rstrip(": "), "input", 400)
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        return error(f"{where}: {first.get('msg', 'invalid request')}", "input", 400)

    @app.exception_handler(HTTPException)
    def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        kinds = {404: "not_found", 405: "method_not_allowed"}
        return error(str(exc.detail), kinds.get(exc.status_code, "http"), exc.status_code,
                     exc.headers)

    @app.exception_handler(Exception)
    def internal(_: Request, exc: Exception) -> JSONResponse:
        _log.error("memory daemon: %s", exc, exc_info=exc)
        return error("internal error (the daemon's log says more)", "internal", 500)


def create_memory_app(store: MemoryStore, backend_name: str,
                      hosts: frozenset[str] | None = None) -> FastAPI:
    """The FastAPI app over ``store``; ``backend_name`` is reported by the health check;
    ``hosts`` are the Host names served (:func:`allowed_hosts`: loopback by default)."""
    app = FastAPI(title="excerpt memory", version="1", docs_url=None, redoc_url=None,
                  responses=ERRORS)
    app.add_middleware(LoopbackHosts, allowed=hosts or allowed_hosts())
    _install_error_handlers(app)
    install_openapi(app, bearer=False)  # validation errors answer 400: no 422 entries

    @app.get("/-/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "backend": backend_name}

    @app.post("/v1/memory/{conversation}/query")
    def query(conversation: str, body: QueryBody) -> Any:
        """Run one operation; its JSON as `excerpt memory CONVERSATION INTENT` prints it."""
        return handle(store, conversation, body.intent, body.data)

    return app


def serve(store: MemoryStore, backend_name: str, host: str, port: int,
          allow_hosts: Iterable[str] = ()) -> None:
    """Run the daemon until interrupted (uvicorn, one worker: the store is in this process)."""
    import uvicorn

    app = create_memory_app(store, backend_name, allowed_hosts(host, allow_hosts))
    uvicorn.run(app, host=host, port=port, log_level="warning")
