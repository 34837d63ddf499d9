"""The memory daemon's HTTP API (``excerpt memory serve``).

``POST /v1/memory/{conversation}/query`` with ``{"intent": ..., "data": {...}}`` runs one
operation through :func:`excerpt.memory.intents.handle` and returns its JSON; ``GET
/-/health`` answers ``{"status": "ok", "backend": ...}``. Errors come back as ``{"error",
"kind"}`` with 400 for bad input and 500 for anything else. One store serves every request; it
serialises writes per store, so parallel clients neither lose nor reorder an acknowledged
write. The daemon binds to loopback by default: it has no authentication of its own (the
service issue adds keys).
"""

from __future__ import annotations

from typing import Any

from excerpt.errors import ExcerptError, InputError
from excerpt.memory.intents import INTENTS, handle
from excerpt.memory.store import MemoryStore


def create_memory_app(store: MemoryStore, backend_name: str) -> Any:
    """The FastAPI app over ``store``; ``backend_name`` is reported by the health check."""
    from fastapi import Body, FastAPI
    from fastapi.responses import JSONResponse

    app = FastAPI(title="excerpt memory", version="1")

    @app.get("/-/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "backend": backend_name}

    @app.post("/v1/memory/{conversation}/query")
    def query(conversation: str, body: dict[str, Any] = Body(...)) -> Any:  # noqa: B008
        intent, data = body.get("intent"), body.get("data") or {}
        try:
            if not isinstance(intent, str) or not isinstance(data, dict):
                raise InputError(f"body must be {{'intent': one of {INTENTS}, 'data': {{...}}}}")
            return handle(store, conversation, intent, data)
        except InputError as exc:
            return JSONResponse({"error": str(exc), "kind": exc.kind}, status_code=400)
        except ExcerptError as exc:
            return JSONResponse({"error": str(exc), "kind": exc.kind}, status_code=500)

    return app


def serve(store: MemoryStore, backend_name: str, host: str, port: int) -> None:
    """Run the daemon until interrupted (uvicorn, one worker: the store is in this process)."""
    import uvicorn

    uvicorn.run(create_memory_app(store, backend_name), host=host, port=port,
                log_level="warning")
