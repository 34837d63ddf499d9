"""Running a coroutine from a test: in a thread of its own, always. After the browser tests,
Playwright's sync API leaves an event loop running in the main thread, where ``asyncio.run``
and ``anyio.run`` refuse to start ("cannot be called from a running event loop"): a test that
passed alone would fail in the full suite."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio


def run_async(body: Callable[[], Awaitable[Any]]) -> Any:
    """``anyio.run(body)`` in a fresh thread; its result (or its exception)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, body).result()
