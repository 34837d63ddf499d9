"""The service's OpenAPI document as the routes really answer: every error in the one shape
``{"error", "kind"}`` under the statuses a route returns, a 400 (never FastAPI's 422) for a
request that does not validate, the bearer key as the security scheme, and
``text/event-stream`` for the streamed ask. schemathesis checks responses against it
(tests/integration/test_service_fuzz.py)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

_MEANING = {
    400: "Bad input: a parameter or body that does not validate, or a refused file",
    401: "No key, an unknown key or a revoked key",
    403: "The key's role or rights do not allow this (all_access needs an admin key)",
    404: "No such collection, snapshot or set (or one the key may not see)",
    409: "Another process holds this work (a sync of the same collection): retry when it ends",
    502: "A remote service the server calls (an LLM endpoint) failed",
    503: "The server cannot read its API keys, or a component is not installed",
}
_OPEN = ("/-/health",)  # the only route that needs no key


class ErrorBody(BaseModel):
    """Every error the service answers."""

    error: str
    kind: str
    param: str | None = None
    """The request's field at fault, when a 400 is about one (``k``, ``where``...)."""


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route: each status with its meaning and the error shape."""
    return {status: {"model": ErrorBody, "description": _MEANING[status]}
            for status in statuses}


_EVENT = {"type": "object", "required": ["event", "data"],  # one event of the stream
          "properties": {"event": {"type": "string", "enum": ["stage", "answer", "error"]},
                         "data": {"type": "string", "contentMediaType": "application/json"}}}


def event_stream() -> dict[int | str, dict[str, Any]]:
    """The 200 of a server-sent events route."""
    return {200: {"description": "Server-sent events: `stage` events, then one `answer` (or "
                                 "`error`) event whose data is the JSON of POST /v1/ask",
                  "content": {"text/event-stream": {"schema": _EVENT}}}}


def install(app: FastAPI, *, bearer: bool = True) -> None:
    """Replaces ``app.openapi`` with the corrected document (built once, then cached);
    ``bearer`` False for an app without keys (the memory daemon): no security scheme."""

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _corrected(get_openapi(
                title=app.title, version=app.version, description=app.description,
                routes=app.routes), bearer)
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]


def _corrected(doc: dict[str, Any], bearer: bool) -> dict[str, Any]:
    for path, item in doc.get("paths", {}).items():
        for operation in item.values():
            operation.get("responses", {}).pop("422", None)  # validation answers 400
            if bearer and path not in _OPEN:
                operation["security"] = [{"bearer": []}]
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    if bearer:
        doc["components"]["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer",
                       "description": "An API key from `excerpt keys add`"}}
    return doc
