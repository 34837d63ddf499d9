"""Server-sent events for ``POST /v1/ask/stream``, and no work left behind when a client goes.

The ask runs in a worker thread; each provenance stage it reaches is sent as a ``stage`` event
the moment it happens, each checked sentence of a model reader's answer as a ``sentence``
event (``{"text": "… [2]", "supported_by": [2]}``) the moment it is judged, and the last
event, ``answer``, is exactly the ``POST /v1/ask`` response (or ``error`` with the error
shape). When the client disconnects, Starlette cancels
the event generator; its ``finally`` sets the ask's cancel flag, and the worker stops at the
next stage it reaches (it never composes an answer for nobody). :class:`StreamWork` counts
asks running, finished and cancelled, so that tests and operators can see nothing is left.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool

from excerpt.edge.errors import reply

Run = Callable[[Callable[[Any], None], Callable[[Any], None]], Any]
"""Runs the ask with a stage callback and a sentence callback (compose.synthesis's
``KeptSentence``) and returns its result (an object with ``to_json``)."""


class Cancelled(Exception):
    """Raised inside the worker at a stage boundary once its client has gone."""


@dataclass
class StreamWork:
    """Streamed asks of one app: how many run now, how many finished or were cancelled."""

    running: int = 0
    finished: int = 0
    cancelled: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _tasks: set[asyncio.Future[None]] = field(default_factory=set, repr=False)

    def keep(self, task: asyncio.Future[None]) -> None:
        """Holds the worker's task until it is done (the event loop keeps only weak ones)."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def count(self, name: str, delta: int) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + delta)

    def to_json(self) -> dict[str, int]:
        with self._lock:
            return {"running": self.running, "finished": self.finished,
                    "cancelled": self.cancelled}


def sse(event: str, data: dict[str, Any]) -> str:
    """One server-sent event with a JSON payload."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def ask_events(run: Run, explain: bool, work: StreamWork) -> AsyncIterator[str]:
    """The event stream of one ask; cancelling this generator cancels the ask."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
    cancel = threading.Event()

    def put(item: tuple[str, dict[str, Any]] | None) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def on_stage(event: Any) -> None:
        if cancel.is_set():
            raise Cancelled
        put(("stage", {"stage": event.stage}))

    def on_sentence(kept: Any) -> None:
        if cancel.is_set():
            raise Cancelled
        put(("sentence", {"text": kept.text, "supported_by": list(kept.supported_by)}))

    def worker() -> None:
        try:
            put(("answer", run(on_stage, on_sentence).to_json(explain)))
            work.count("finished", 1)
        except Cancelled:
            work.count("cancelled", 1)
        except Exception as exc:  # a store failure's message (server paths) to the log only
            put(("error", reply(exc)[1]))  # out of open files: unavailable, not internal
            work.count("finished", 1)
        finally:
            work.count("running", -1)
            put(None)

    work.count("running", 1)  # from now: the worker thread takes it back when it ends
    work.keep(asyncio.ensure_future(run_in_threadpool(worker)))
    try:
        yield sse("stage", {"stage": "started"})
        while (item := await queue.get()) is not None:
            yield sse(*item)
    finally:
        cancel.set()  # a no-op once the worker is done; otherwise it stops at its next stage
