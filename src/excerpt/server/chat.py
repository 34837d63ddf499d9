"""OpenAI-compatible chat on `excerpt serve` (issue 18 item 2), for the front ends that speak
OpenAI's API (Open WebUI, LibreChat, the ``openai`` client): ``GET /v1/models``,
``GET /v1/models/{model}`` and ``POST /v1/chat/completions``, streamed or not. The wire shapes
are in :mod:`excerpt.server.chat_wire`.

* **A model is a collection the key may read**: ``excerpt:<collection>``, listed only when the
  key sees at least one node of the collection's latest snapshots (what a chat reads). A model
  that does not exist and one the key may see nothing of get the same 404, so a key learns
  nothing about collections beyond its rights.
* **The messages are the conversation**: the last (a user's) is the question; a follow-up ("And
  who killed him?") is resolved from the user and assistant messages before it by the service
  (:class:`excerpt.service.Conversation`, sent), as ``ask --conversation`` resolves it from its
  memory. Nothing is stored: an OpenAI client sends the whole conversation each time.
* **The ask is /v1/ask's**: :func:`excerpt.service.ask` with the server's settings and the
  setting ``reranker`` (nothing hard-coded here), mode hybrid unless the request's ``excerpt`` field
  says otherwise (``mode``, ``snapshot``, ``snapshot_set``, ``where``, and the key's rights
  narrowed by ``acl_tag`` / ``clearance``; ``all_access`` for admin keys), within the key's
  rights: the answer, quotes and citations hold only what ``/v1/search`` would show that key.
* **Errors** are OpenAI's shape (``{"error": {"message", "type", "param", "code"}}``), from
  every stage of these routes (the key, the body, the engine): no key or a wrong one 401, an
  unknown model 404, a bad body 400. A streamed answer's failure after the stream began is a
  ``data: {"error": …}`` line, which the openai client raises as an APIError.
* **Streaming**: a first chunk with the role as soon as the request is accepted, the text in
  chunks of words once the ask is done (an extractive answer is composed whole), then a final
  chunk with ``finish_reason: "stop"`` whose delta carries the ``excerpt`` field (citations,
  quotes, cautious), then (asked by ``stream_options.include_usage``) a chunk with the usage,
  then ``data: [DONE]``. A client that goes away stops the ask at its next pipeline stage, as
  on ``/v1/ask/stream``, and the app's :class:`excerpt.server.stream.StreamWork` counts these
  asks with that route's.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Header, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from excerpt import service
from excerpt.edge.errors import reply
from excerpt.edge.keys import Caller, KeyRing, Unavailable, sign_in
from excerpt.engine import Engine
from excerpt.server import chat_wire as wire
from excerpt.server.stream import Cancelled, StreamWork
from excerpt.types import Principal, check_where

_TYPES = {400: "invalid_request_error", 403: "permission_error", 404: "invalid_request_error",
          502: "api_error", 503: "server_error"}


def install(app: FastAPI, engine: Engine, keys: KeyRing) -> None:
    """Adds the chat routes to ``app``, authenticating with ``keys`` (the service's keys)."""
    router = APIRouter(route_class=_OpenAIRoute)

    async def caller(authorization: str | None = Header(None)) -> Caller:
        token = authorization.removeprefix("Bearer ").strip() if authorization else None
        try:
            found = await sign_in(keys, token)  # an API key, or the identity provider's JWT
        except Unavailable as exc:
            message = "the server cannot read its API keys now" \
                if exc.code == "keys_unavailable" else exc.message
            raise wire.ChatError(503, message, "server_error", exc.code) from None
        if found is None:
            raise wire.ChatError(401, "a valid API key is required (Authorization: Bearer KEY)",
                                 "invalid_request_error", "invalid_api_key")
        return found

    @router.get("/v1/models", include_in_schema=False)
    def models(who: Caller = Depends(caller)) -> dict[str, Any]:  # noqa: B008
        """The collections the key may read, as OpenAI models."""
        found = (_model(engine, c, who.principal) for c in engine.store.collections())
        return {"object": "list", "data": [m for m in found if m is not None]}

    @router.get("/v1/models/{model}", include_in_schema=False)
    def model(model: str, who: Caller = Depends(caller)) -> dict[str, Any]:  # noqa: B008
        found = _model(engine, wire.collection_of(model), who.principal)
        if found is None:
            raise wire.unknown_model(model)
        return found

    @router.post("/v1/chat/completions", include_in_schema=False)
    async def completions(request: Request,
                          who: Caller = Depends(caller)) -> Response:  # noqa: B008
        body = wire.parse(await request.body())
        ask = await run_in_threadpool(_Ask, engine, body, who)  # the store, off the loop
        if not body.stream:
            answer = await run_in_threadpool(ask.run, None)
            return JSONResponse(ask.reply.completion(
                wire.content(answer.result), wire.structured(answer),
                wire.usage(answer)))
        # What can be refused before the stream starts is an HTTP status, not a data line.
        await run_in_threadpool(service.check, engine, ask.filters, ask.principal)
        return StreamingResponse(_chunks(ask, app.state.streams), media_type="text/event-stream")

    app.include_router(router)


class _Ask:
    """One chat request turned into the service's ask (its conversation the messages sent,
    resolved there as a stored one is): the principal, collection, filters and options;
    refused (400, 403, 404) before any work."""

    def __init__(self, engine: Engine, body: wire.ChatBody, who: Caller) -> None:
        extra = body.excerpt
        self.engine = engine
        collection = wire.collection_of(body.model)
        scope = extra.scope(collection or "")
        self.principal = scope.principal(who.rights())
        if collection is None or _model(engine, collection, self.principal) is None:
            raise wire.unknown_model(body.model)
        question, turns = wire.conversation(body.messages)
        self.filters = scope.filters()
        check_where(self.filters.metadata)
        self.request = service.AskRequest.served(  # reranker: the settings'
            engine, question, extra.mode, reader=extra.reader,
            conversation=service.Conversation.sent(turns))
        self.reply = wire.Reply(body.model)
        self.include_usage = bool((body.stream_options or {}).get("include_usage"))

    def run(self, on_stage: service.Stage | None,
            on_sentence: service.Stage | None = None) -> service.Answer:
        return service.ask(self.engine, self.request, self.filters, self.principal,
                           on_sentence=on_sentence, on_stage=on_stage)


async def _chunks(ask: _Ask, work: StreamWork) -> AsyncIterator[str]:
    """The stream of one completion; cancelling it (the client went) cancels the ask. The ask
    runs in a task of its own, counted in ``work`` as /v1/ask/stream's are: awaiting a worker
    thread directly would hold the cancellation until the thread ends, the whole ask. A model
    reader's checked sentences are sent the moment each is judged; the rest of the message
    (an extractive answer, the sources) when the ask ends."""
    yield ask.reply.chunk({"role": "assistant", "content": ""})
    loop = asyncio.get_running_loop()
    sentences: asyncio.Queue[str | None] = asyncio.Queue()
    cancel = threading.Event()

    def on_stage(_: Any) -> None:
        if cancel.is_set():
            raise Cancelled

    def on_sentence(kept: Any) -> None:
        on_stage(kept)
        loop.call_soon_threadsafe(sentences.put_nowait, kept.text)

    ended: list[service.Answer | Exception] = []

    def worker() -> None:
        try:
            ended.append(ask.run(on_stage, on_sentence))
            work.count("finished", 1)
        except Cancelled as exc:
            work.count("cancelled", 1)
            ended.append(exc)
        except Exception as exc:  # answered below, never left unretrieved in the task
            work.count("finished", 1)
            ended.append(exc)
        finally:
            work.count("running", -1)
            loop.call_soon_threadsafe(sentences.put_nowait, None)

    work.count("running", 1)  # from now: the worker thread takes it back when it ends
    task = asyncio.ensure_future(run_in_threadpool(worker))
    work.keep(task)
    streamed = ""
    try:
        while (sentence := await sentences.get()) is not None:
            piece = (" " if streamed else "") + sentence
            streamed += piece
            yield ask.reply.chunk({"content": piece})
        await asyncio.shield(task)
    finally:
        cancel.set()  # a no-op once the ask is done; otherwise it stops at its next stage
    outcome = ended[0]
    if isinstance(outcome, Exception):  # after the 200: a data line, as OpenAI streams it
        yield wire.data(_error(outcome).to_json())
        return
    text = wire.content(outcome.result)
    for piece in wire.pieces(text.removeprefix(streamed) if streamed else text):
        yield ask.reply.chunk({"content": piece})
    yield ask.reply.chunk({"excerpt": wire.structured(outcome)}, "stop")
    if ask.include_usage:
        yield ask.reply.usage_chunk(wire.usage(outcome))
    yield wire.data("[DONE]")


def _model(engine: Engine, collection: str | None,
           principal: Principal) -> dict[str, Any] | None:
    """The model of ``collection`` when ``principal`` sees a node of its latest snapshots."""
    if collection is None or collection not in engine.store.collections():
        return None
    latest = engine.store.latest_snapshots(collection)
    seen = engine.access.seen_snapshots(latest, principal)
    if not seen:
        return None
    created = min(_unix(s.created_at) for s in latest if s.snapshot_id in seen)
    return {"id": f"{wire.PREFIX}{collection}", "object": "model", "created": created,
            "owned_by": "excerpt"}


def _unix(stamp: str) -> int:
    try:
        return int(datetime.fromisoformat(stamp).timestamp())
    except ValueError:
        return 0


def _error(exc: Exception) -> wire.ChatError:
    """Any failure of a chat route as OpenAI's error: the status and message the service's
    other routes answer (:func:`excerpt.edge.errors.reply`; a 500's details go to the log
    only), in OpenAI's shape with OpenAI's type for the status."""
    if isinstance(exc, wire.ChatError):
        return exc
    if isinstance(exc, RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        param = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or None
        return wire.ChatError(400, f"{param}: {first.get('msg', 'invalid request')}",
                              "invalid_request_error", "invalid_body", param)
    code, body = reply(exc)
    return wire.ChatError(code, body["error"], _TYPES.get(code, "server_error"), body["kind"])


class _OpenAIRoute(APIRoute):
    """A route whose every failure (the key, the body, the engine) is answered in OpenAI's
    error shape, not the service's ``{"error", "kind"}``."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                error = _error(exc)
                headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
                return JSONResponse(error.to_json(), status_code=error.status, headers=headers)

        return guarded
