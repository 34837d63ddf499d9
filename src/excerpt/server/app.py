"""`excerpt serve`: the engine over HTTP, each request with the rights of its API key.

Routes return the CLI's JSON: ``GET /v1/search``, ``POST /v1/ask`` (and ``/v1/ask/stream``,
server-sent events whose last event is the same answer), ``POST /v1/graph``, ``POST
/v1/context``, ``POST /v1/memory/{conversation}/query`` (the memory daemon's form; a key's
conversations are its own), ``POST /v1/ingest`` (an upload: ingester or admin keys),
``POST /v1/ingest/path`` (admin keys, inside the server's ingest roots), ``GET
/v1/snapshots``, ``GET /v1/collections/{collection}/overview`` (the web UI's start page),
``GET /-/health`` (no key), ``GET /-/version``; the OpenAPI document is
``/openapi.json`` (see :mod:`excerpt.server.openapi`), rendered at ``/docs`` by a local script.
``Authorization: Bearer KEY`` is required everywhere else: no key, a wrong key or a revoked one
is 401; with ``oidc_issuer`` set, a JWT of that issuer is taken as a key of the rights its
claims map to (:mod:`excerpt.edge.oidc`). A request may narrow its rights with ``acl_tag`` /
``clearance`` (never widen them); ``all_access`` needs an admin key (403 otherwise). Every error
has one shape, ``{"error", "kind"}``, mapped from excerpt's error tree in
:mod:`excerpt.edge.errors`; an unexpected exception is a bare 500 (details in the server's log
only). Limits: a query of at most ``MAX_QUERY`` characters, ``k`` and limits at most ``MAX_K``.
``GET /v1/whoami`` says what the caller's key may do (its role; whether it may upload).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from excerpt import service
from excerpt.edge import oidc
from excerpt.edge.bodies import (
    MAX_K,
    MAX_QUERY,
    AskBody,
    ContextBody,
    GraphBody,
    IngestPathBody,
    MemoryBody,
    choice,
    no_nul,
    param_of,
    refusal_of,
)
from excerpt.edge.errors import reply, unexpected
from excerpt.edge.keys import Caller, KeyRing, Unavailable, sign_in
from excerpt.edge.uploads import MAX_UPLOAD, Uploads, inside_roots, receive, staged, upload_name
from excerpt.embedder_names import EMBEDDERS
from excerpt.engine import MAX_AROUND, Engine
from excerpt.errors import ExcerptError
from excerpt.ingest import FORMATS
from excerpt.ingest.pipeline import check_labels
from excerpt.mcp.http import mount as mount_mcp
from excerpt.memory.intents import handle
from excerpt.memory.store import MemoryStore
from excerpt.scope import Scope
from excerpt.server import chat, metrics, sync_api
from excerpt.server.body_limits import BodyLimits
from excerpt.server.openapi import errors, event_stream
from excerpt.server.openapi import install as install_openapi
from excerpt.server.stream import StreamWork, ask_events
from excerpt.settings import Settings
from excerpt.types import Filters, Principal, SearchMode

_HTTP_KINDS = {400: "input", 404: "not_found", 405: "method_not_allowed", 413: "input"}
log = logging.getLogger(__name__)


def warm_reader(settings: Settings) -> None:
    """The settings' reader opened once, now: a local model is loaded before the first ask (and
    stays loaded, compose.local_llm), and a missing or broken model file stops ``serve`` at
    start with its error instead of failing every ask."""
    if settings.reader != "extractive":
        from excerpt.compose.readers import open_reader

        open_reader(settings.reader, settings)


def create_app(engine: Engine, keys: KeyRing,
               ingest_roots: Sequence[Path] = ()) -> Any:
    """The FastAPI app over ``engine``, authenticating with ``keys``; admin keys may ingest
    server-side paths inside ``ingest_roots`` (none: no path ingestion at all)."""

    warm_reader(engine.settings)
    # No /docs or /redoc from FastAPI: their pages load scripts from a CDN; /docs is ours.
    app = FastAPI(title="excerpt", version=version("excerpt"), docs_url=None, redoc_url=None,
                  dependencies=[Depends(no_nul)])
    install_openapi(app)
    app.add_middleware(BodyLimits, settings=engine.settings)  # 413 before a body is read
    # One store per process; its writes are memory.db transactions, which serialise every
    # request thread and every worker process of `serve --workers N` (memory/backends.py).
    memory_store = MemoryStore(engine.memory_backend())
    uploads = Uploads(engine.home / "uploads")
    uploads.clean_stale()  # copies left by a server killed mid-upload
    app.state.streams = StreamWork()
    keys.tokens = oidc.verifier(engine.settings)  # bearer JWTs beside keys, when configured
    mount_mcp(app, engine, keys, memory_store, uploads, ingest_roots)  # /mcp: MCP over HTTP

    @app.exception_handler(ExcerptError)
    @app.exception_handler(PermissionError)  # the file system's (excerpt refuses: Forbidden)
    def refused(_: Request, exc: Exception) -> JSONResponse:
        status, body = reply(exc)  # a 500's message, which may name paths: logged
        return JSONResponse(body, status_code=status)

    @app.exception_handler(Exception)
    def internal(_: Request, exc: Exception) -> JSONResponse:
        # The last resort: no traceback or path to the caller; Starlette logs the traceback.
        status, body = unexpected(exc)  # 503 when the process ran out of open files
        return JSONResponse(body, status_code=status)

    @app.exception_handler(StarletteHTTPException)
    def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Starlette's own refusals (an unknown route, a method, a body it cannot parse).
        kind = _HTTP_KINDS.get(exc.status_code, "http")
        return JSONResponse({"error": str(exc.detail), "kind": kind},
                            status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        body = {"error": refusal_of(request, exc.errors()), "kind": "input"}
        param = param_of(exc.errors())
        return JSONResponse({**body, "param": param} if param else body, status_code=400)

    async def caller(authorization: str | None = Header(None)) -> Caller:
        # async: no thread hop for a stat and a digest on every request (a token's check has
        # one: it may fetch the issuer's JWKS)
        token = authorization.removeprefix("Bearer ").strip() if authorization else None
        try:
            found = await sign_in(keys, token)
        except Unavailable as exc:  # the server's log says why
            raise _KeysUnavailable(exc.message) from None
        if found is None:
            raise _Unauthorized()
        return found

    sync_api.mount(app, engine, uploads, caller)  # POST /v1/sync (excerpt sync of a zip)
    metrics.mount(app, engine, caller)  # GET /metrics (Prometheus), request timing

    @app.exception_handler(_Unauthorized)
    def unauthorized(_: Request, exc: _Unauthorized) -> JSONResponse:
        return JSONResponse({"error": "a valid API key is required (Authorization: Bearer KEY)",
                             "kind": "unauthorized"}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(_KeysUnavailable)
    def keys_unavailable(_: Request, exc: _KeysUnavailable) -> JSONResponse:
        return JSONResponse({"error": str(exc), "kind": "unavailable"}, status_code=503)

    chat.install(app, engine, keys)  # OpenAI-compatible: /v1/models, /v1/chat/completions
    static = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        """The web UI: search, ask with clickable [n] citations, provenance, dependencies."""
        return FileResponse(static / "index.html")

    @app.get("/docs", include_in_schema=False)
    def docs() -> FileResponse:
        """The routes of /openapi.json, rendered by a local script (no asset from elsewhere)."""
        return FileResponse(static / "docs.html")

    @app.get("/-/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/-/version", responses=errors(401, 503))
    def get_version(who: Caller = Depends(caller)) -> dict[str, str]:  # noqa: B008
        return {"version": version("excerpt")}

    @app.get("/v1/whoami", responses=errors(401, 503))
    def whoami(who: Caller = Depends(caller)) -> dict[str, Any]:  # noqa: B008
        """What the key may do, so that a client offers only what it may use (the web UI's
        upload panel): its role and whether it may upload (``/v1/ingest``, ``/v1/sync``).
        Never the key, its name or its tags."""
        return {"role": who.role, "may_ingest": who.rights().may_ingest}

    @app.get("/v1/search", responses=errors(400, 401, 403, 404, 502, 503))
    def search(q: str = Query(..., min_length=1, max_length=MAX_QUERY),
               collection: str = "default", mode: SearchMode = "hybrid",
               k: int | None = Query(None, ge=1, le=MAX_K),
               snapshot: str | None = None, snapshot_set: str | None = None,
               where: list[str] = Query([]),  # noqa: B008
               rerank: str | None = Query(None, min_length=1),
               acl_tag: list[str] | None = Query(None),  # noqa: B008
               clearance: list[str] | None = Query(None),  # noqa: B008
               all_access: bool = False,
               who: Caller = Depends(caller)) -> JSONResponse:  # noqa: B008
        """`excerpt search`: the same options (``where`` as KEY=VALUE, repeatable)."""
        filters, principal = _read(Scope(collection, snapshot, snapshot_set, where, acl_tag,
                                         clearance, all_access), who)
        request = service.SearchRequest.served(q, mode, k, rerank)
        return JSONResponse(service.search_json(engine, request, filters, principal))

    @app.get("/v1/passage", responses=errors(400, 401, 403, 404, 503))
    def passage(id: str = Query(..., min_length=1, max_length=MAX_QUERY),
                collection: str = "default",
                around: int = Query(1, ge=0, le=MAX_AROUND),
                snapshot: str | None = None, snapshot_set: str | None = None,
                acl_tag: list[str] | None = Query(None),  # noqa: B008
                clearance: list[str] | None = Query(None),  # noqa: B008
                all_access: bool = False,
                who: Caller = Depends(caller)) -> dict[str, Any]:  # noqa: B008
        """A node in its place: ``around`` nodes before and after it in its document, only
        those the key may see (the web UI's "in context"); hidden and unknown ids are 404."""
        filters, principal = _read(Scope(collection, snapshot, snapshot_set, (), acl_tag,
                                         clearance, all_access), who)
        return engine.passage(id, filters, principal, around)

    @app.post("/v1/ask", responses=errors(400, 401, 403, 404, 502, 503))
    def ask(body: AskBody, who: Caller = Depends(caller)) -> JSONResponse:  # noqa: B008
        filters, principal = _read(body.scope(), who)
        talk = service.Conversation.of(body.conversation, who.rights())
        request = _ask_request(engine, body, talk)
        return JSONResponse(service.ask_json(engine, request, filters, principal, memory_store,
                                             body.explain))

    @app.post("/v1/ask/stream", response_class=StreamingResponse,
              responses={**event_stream(), **errors(400, 401, 403, 404, 503)})
    def ask_stream(body: AskBody, who: Caller = Depends(caller)) -> Any:  # noqa: B008
        """Server-sent events: "stage" events as the pipeline runs, a "sentence" event for each
        checked sentence of a model reader's answer as it is written, then one "answer" event
        whose data is exactly the POST /v1/ask response (in a ``conversation`` too: the same
        stored turns, the follow-up resolved the same way; a client gone before the answer
        records no turn)."""
        filters, principal = _read(body.scope(), who)
        # What can be refused before the stream starts is an HTTP status, not an error event
        # (a conversation name included).
        talk = service.Conversation.of(body.conversation, who.rights())
        request = _ask_request(engine, body, talk)
        service.check(engine, filters, principal)

        def run(on_stage: Any, on_sentence: Any) -> Any:
            return service.ask(engine, request, filters, principal, memory_store,
                               on_sentence=on_sentence, on_stage=on_stage)

        return StreamingResponse(ask_events(run, body.explain, app.state.streams),
                                 media_type="text/event-stream")

    @app.post("/v1/graph", responses=errors(400, 401, 403, 404, 503))
    def graph(body: GraphBody, who: Caller = Depends(caller)) -> JSONResponse:  # noqa: B008
        filters, principal = _read(body.scope(), who)
        limits = engine.graph_limits(body.max_depth, body.max_nodes, body.allow or (),
                                     body.seed_only, body.direction)
        return JSONResponse(engine.graph(body.seeds, filters, principal, limits).to_json())

    @app.post("/v1/context", responses=errors(400, 401, 403, 404, 503))
    def context(body: ContextBody, who: Caller = Depends(caller)) -> JSONResponse:  # noqa: B008
        filters, principal = _read(body.scope(), who)
        limits = engine.graph_limits(body.max_depth, body.max_nodes, body.allow or (),
                                     direction=body.direction)
        return JSONResponse(engine.context(body.seeds, body.graph, filters, principal,
                                           body.budget_tokens, body.max_chars,
                                           body.prioritization, body.query, body.mode, body.k,
                                           limits).to_json())

    @app.post("/v1/memory/{conversation}/query", responses=errors(400, 401, 503))
    def memory(conversation: str, body: MemoryBody,
               who: Caller = Depends(caller)) -> dict[str, Any]:  # noqa: B008
        """Conversations are per key: a caller reads and writes only its own."""
        return handle(memory_store, who.rights().conversation(conversation), body.intent,
                      body.data)

    @app.post("/v1/ingest", responses=errors(400, 401, 403, 404, 503))
    async def ingest(request: Request, filename: str = Query(..., min_length=1),
                     collection: str = "default",
                     format: str = Query("auto", pattern=choice(FORMATS)),
                     acl_tag: list[str] = Query([]),  # noqa: B008
                     classification: list[str] = Query([]),  # noqa: B008
                     embedder: str = Query("auto", pattern=choice(EMBEDDERS)),
                     who: Caller = Depends(caller)) -> Any:  # noqa: B008
        """Upload one file (a book, a regulation book, a zip bundle) as the request body;
        it becomes a snapshot of the source ``upload:FILENAME``. Ingester or admin keys."""
        from starlette.concurrency import run_in_threadpool

        who.rights().check_ingest(paths=False)
        name = upload_name(filename)
        check_labels(acl_tag, classification)
        with staged(uploads, name) as folder:
            await receive(request.stream(), folder / name, MAX_UPLOAD)
            result = await run_in_threadpool(
                engine.ingest, folder / name, collection, format, acl_tag, classification,
                None, embedder, f"upload:{name}")
        return result.to_json()

    @app.post("/v1/ingest/path", responses=errors(400, 401, 403, 404, 503))
    def ingest_path(body: IngestPathBody, who: Caller = Depends(caller)) -> Any:  # noqa: B008
        who.rights().check_ingest(paths=True)
        path = Path(body.path)
        inside_roots(path, ingest_roots)
        # every file read must stay inside the roots too, not only the path named (links)
        result = engine.ingest(path.resolve(), body.collection, body.format, body.acl_tag,
                               body.classification, None, body.embedder,
                               ingest_roots=list(ingest_roots))
        return result.to_json()

    @app.get("/v1/snapshots", responses=errors(400, 401, 403, 404, 503))
    def snapshots(collection: str | None = None,
                  acl_tag: list[str] | None = Query(None),  # noqa: B008
                  clearance: list[str] | None = Query(None),  # noqa: B008
                  all_access: bool = False,
                  who: Caller = Depends(caller)) -> dict[str, Any]:  # noqa: B008
        """`excerpt snapshots`: only what the key's principal may see (issue 15); a snapshot
        of a source a sync retired is marked ``"retired": true``."""
        return engine.snapshots(collection, who.narrowed(acl_tag, clearance, all_access))

    @app.get("/v1/collections/{collection}/overview", responses=errors(400, 401, 403, 404, 503))
    def collection_overview(collection: str,
                            examples: int = Query(3, ge=0, le=service.MAX_EXAMPLES),
                            acl_tag: list[str] | None = Query(None),  # noqa: B008
                            clearance: list[str] | None = Query(None),  # noqa: B008
                            all_access: bool = False,
                            who: Caller = Depends(caller)) -> dict[str, Any]:  # noqa: B008
        """`excerpt collections overview`: the collection's sources (live or retired, the
        latest snapshot of each), snapshots, counts, last import, metadata keys with their
        most common values (for ``where`` filters) and ``examples`` questions made from its
        headings, all of what the key may see; a collection it sees nothing of is 404, as an
        unknown one."""
        principal = who.narrowed(acl_tag, clearance, all_access)
        return service.overview(engine, service.OverviewRequest(collection, examples),
                                principal)

    return app


def _ask_request(engine: Engine, body: AskBody,
                 talk: service.Conversation | None) -> service.AskRequest:
    """The service's ask of a POST /v1/ask body (and of its stream)."""
    return service.AskRequest.served(
        engine, body.question, body.mode, body.doc_limit, body.fetch_limit,
        body.max_quotes, body.mmr, body.reader, body.rerank, body.explain, talk)


def _read(scope: Scope, who: Caller) -> tuple[Filters, Principal]:
    """What a request reads and as whom: its scope against the key's rights."""
    return scope.filters(), scope.principal(who.rights())


class _Unauthorized(Exception):
    """No key, a wrong key or a revoked key."""


class _KeysUnavailable(Exception):
    """Nobody can sign in now: the keys file cannot be read (missing, broken), or the identity
    provider's signing keys cannot be fetched; the message says which."""
