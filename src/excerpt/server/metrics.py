"""``GET /metrics`` on ``excerpt serve``: Prometheus text of the server's own registry.

- ``excerpt_http_request_duration_seconds{method, route, status}``: a histogram per route
  *template* (``/v1/collections/{collection}/overview``, never the path sent; a path no route
  matched is ``unmatched``, a mounted app its mount: ``/mcp``, ``/static``);
- ``excerpt_stage_duration_seconds{stage}``: the search and ask stages, fed from the one seam
  that fills ``timings_ms`` (:mod:`excerpt.telemetry`);
- ``excerpt_errors_total{kind}``: refusals by the ``kind`` of the one error shape;
- ``excerpt_imports_total{outcome}``: import runs completed, unchanged or failed;
- ``excerpt_open_segment_maps``: segment arrays memory-mapped now (each an open file).

Labels are names the server chose, never anything a request carried: no path, query, id or
collection. Who may read it: an admin key, unless the setting ``metrics_public`` opens it
(counts and timings tell an outsider how busy the server is and which routes fail; a
Prometheus scrape job sends the admin key as its bearer token, ``authorization:
credentials_file``). With ``serve --workers N`` each worker keeps its own counters and a
scrape reads the one that answers it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import Depends, FastAPI, Response
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from excerpt import telemetry
from excerpt.edge.keys import Caller
from excerpt.engine import Engine
from excerpt.errors import Forbidden
from excerpt.server.openapi import errors

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_STAGE_BUCKETS = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1.0, 2.5, 5.0, 10.0)
_ERROR_BODY_MAX = 64 * 1024


class Metrics:
    """One registry and its instruments (one per app, so tests may build several apps)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Histogram(
            "excerpt_http_request_duration_seconds", "HTTP requests by route template.",
            ("method", "route", "status"), registry=self.registry)
        self.stages = Histogram(
            "excerpt_stage_duration_seconds", "Search and ask stages (timings_ms).",
            ("stage",), buckets=_STAGE_BUCKETS, registry=self.registry)
        self.errors = Counter("excerpt_errors", "Refused or failed requests by error kind.",
                              ("kind",), registry=self.registry)
        self.imports = Counter("excerpt_imports", "Import runs by outcome.", ("outcome",),
                               registry=self.registry)
        self.maps = Gauge("excerpt_open_segment_maps",
                          "Segment arrays memory-mapped now (open files).",
                          registry=self.registry)

    def stage(self, name: str, ms: float) -> None:
        self.stages.labels(name).observe(ms / 1000)

    def imported(self, outcome: str) -> None:
        self.imports.labels(outcome).inc()


def mount(app: FastAPI, engine: Engine, caller: Callable[..., Any]) -> None:
    """``GET /metrics`` on ``app`` and the middleware that times every request; stage times and
    imports flow in through :func:`excerpt.telemetry.install_sink`."""
    metrics = Metrics()
    metrics.maps.set_function(lambda: _open_maps(engine))
    telemetry.install_sink(metrics)
    app.add_middleware(_Timing, metrics=metrics)
    if engine.settings.metrics_public:
        @app.get("/metrics", include_in_schema=False)
        def scrape_public() -> Response:
            return _exposition(metrics)
        return

    @app.get("/metrics", response_class=Response, summary="Prometheus metrics",
             responses={200: {"description": "Prometheus text exposition format",
                              "content": {CONTENT_TYPE_LATEST.split(";")[0]: {}}},
                        **errors(401, 403, 503)})
    def scrape(who: Caller = Depends(caller)) -> Response:  # noqa: B008
        """Prometheus text (server/metrics.py): admin keys, or anyone with the setting
        ``metrics_public``."""
        if who.role != "admin":
            raise Forbidden("/metrics needs an admin key (or the setting metrics_public)")
        return _exposition(metrics)


def _exposition(metrics: Metrics) -> Response:
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)


def _open_maps(engine: Engine) -> float:
    from excerpt.store.segment import SHARED_MAPS

    maps = getattr(engine._store, "maps", None)  # the store opened (embedded: it maps)
    return float(SHARED_MAPS.open + (maps.open if maps is not None else 0))


class _Timing:
    """Times each HTTP request by its route template and status, and counts error kinds."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        seen: dict[str, Any] = {"status": 500, "body": b"", "json": False}
        if telemetry.tracing():
            await self._traced(scope, receive, send, seen, started)
            return
        await self._timed(scope, receive, send, seen, started)

    async def _traced(self, scope: Scope, receive: Receive, send: Send, seen: dict[str, Any],
                      started: float) -> None:
        """The request as a server span (``METHOD /route``: OTel's HTTP conventions), the
        root of the engine's spans, under the caller's ``traceparent`` when it sends one."""
        method = scope["method"]
        token = telemetry.continued({k.decode("latin-1"): v.decode("latin-1")
                                     for k, v in scope.get("headers", ())})
        try:
            with telemetry.stage(method, None, {"http.request.method": method}, started,
                                 root=True) as span:
                try:
                    await self._timed(scope, receive, send, seen, started)
                finally:
                    route = _route(scope)
                    span.rename(f"{method} {route}")
                    span.set("http.route", route)
                    span.set("http.response.status_code", int(seen["status"]))
        finally:
            telemetry.detach(token)

    async def _timed(self, scope: Scope, receive: Receive, send: Send, seen: dict[str, Any],
                     started: float) -> None:

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
                seen["json"] = any(k.lower() == b"content-type" and v.startswith(
                    b"application/json") for k, v in message.get("headers", ()))
            elif (message["type"] == "http.response.body" and seen["status"] >= 400
                  and seen["json"] and len(seen["body"]) < _ERROR_BODY_MAX):
                seen["body"] += message.get("body", b"")
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self._observe(scope, seen, time.perf_counter() - started)

    def _observe(self, scope: Scope, seen: dict[str, Any], seconds: float) -> None:
        status = int(seen["status"])
        self.metrics.requests.labels(scope["method"], _route(scope), str(status)).observe(
            seconds)
        if status >= 400:
            self.metrics.errors.labels(_kind(seen["body"], status)).inc()


def _route(scope: Scope) -> str:
    """The route template that answered (FastAPI puts the route in the scope), a mount's
    prefix, or ``unmatched``: never the path as sent."""
    route = scope.get("route")
    if route is not None and isinstance(getattr(route, "path", None), str):
        return str(route.path)
    root = scope.get("root_path", "") or scope.get("app_root_path", "")
    if isinstance(root, str) and root in ("/mcp", "/static"):
        return root
    return "unmatched"


_KINDS = frozenset({"error", "input", "corpus", "not_found", "forbidden", "store",
                    "dependency", "service", "unavailable", "busy", "unauthorized",
                    "method_not_allowed", "http", "internal", "too_large"})
"""The kinds of the error shape (errors.py's tree, edge/errors.py, app.py's own): a body
naming another is counted by its status instead, so no label comes from a request."""


def _kind(body: bytes, status: int) -> str:
    """The error shape's ``kind`` when the body has one the server names; else the status."""
    try:
        kind = json.loads(body).get("kind")
    except (ValueError, AttributeError):
        kind = None
    return kind if isinstance(kind, str) and kind in _KINDS else f"status_{status}"
