"""POST /v1/ask/stream over real HTTP: stages arrive as they happen, and a client that
disconnects mid-stream leaves no work running (the ask stops at its next stage and never
composes an answer)."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.aio import run_async

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app

# Late interaction over 300 fetched passages takes seconds: long enough to leave mid-stream.
SLOW = {"question": "What does Lord Henry say about youth and beauty?", "collection": "books",
        "mode": "bm25", "rerank": "late-interaction", "fetch_limit": 300}


@pytest.fixture(scope="module")
def streaming(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
              serving: Callable[[Any], AbstractContextManager[str]]
              ) -> Iterator[tuple[str, str, Any]]:
    home = tmp_path_factory.mktemp("stream") / "home"
    engine = Engine(home)
    engine.ingest(shared_data("books", "pg174_dorian_gray.txt"), collection="books",
                  embedder="none")
    out = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", "ana", "--json"])
    app = create_app(engine, KeyRing.load(home / "keys.yaml"))
    with serving(app) as url:
        yield url, json.loads(out.output)["key"], app.state.streams


def open_stream(url: str, key: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{url}/v1/ask/stream", json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    return urllib.request.urlopen(request, timeout=60)


def next_event(response: Any) -> tuple[str, dict[str, Any]]:
    lines = []
    while (line := response.readline().decode()) not in ("\n", ""):
        lines.append(line.rstrip("\n"))
    name = lines[0].removeprefix("event: ")
    return name, json.loads(lines[1].removeprefix("data: "))


def wait_idle(work: Any, seconds: float = 60) -> dict[str, int]:
    deadline = time.monotonic() + seconds
    while work.to_json()["running"] and time.monotonic() < deadline:
        time.sleep(0.02)
    return work.to_json()  # type: ignore[no-any-return]


def test_stages_stream_as_they_happen_and_end_with_the_answer(
        streaming: tuple[str, str, Any]) -> None:
    url, key, work = streaming
    before = wait_idle(work)
    with open_stream(url, key, {**SLOW, "fetch_limit": 20}) as response:
        events = [next_event(response)]
        while events[-1][0] == "stage":
            events.append(next_event(response))
    assert [e[1]["stage"] for e in events[:-1]] == [
        "started", "question", "grounding", "exploration", "focus", "synthesis"]
    assert events[-1][0] == "answer" and "[1]" in events[-1][1]["answer"]
    after = wait_idle(work)
    assert after["finished"] == before["finished"] + 1 and after["running"] == 0


def test_a_client_leaving_mid_stream_leaves_no_work_running(
        streaming: tuple[str, str, Any]) -> None:
    url, key, work = streaming
    before = wait_idle(work)
    started = time.monotonic()
    with open_stream(url, key, SLOW) as response:
        assert next_event(response) == ("stage", {"stage": "started"})
        assert work.to_json()["running"] == 1
    # the connection is closed: the ask must stop at its next stage, not run to the answer
    after = wait_idle(work)
    assert after == {"running": 0, "finished": before["finished"],
                     "cancelled": before["cancelled"] + 1}
    stopped = time.monotonic() - started
    with open_stream(url, key, SLOW) as response:  # the same ask, read to the end
        while next_event(response)[0] == "stage":
            pass
    assert wait_idle(work)["finished"] == before["finished"] + 1
    full = time.monotonic() - started - stopped
    assert stopped < full  # leaving saved the rest of the work


def test_a_store_failure_in_a_stream_is_answered_like_the_routes_without_its_message() -> None:

    from excerpt.errors import InputError, StoreError
    from excerpt.server.stream import StreamWork, ask_events

    def events(error: Exception) -> list[str]:
        def run(_: Any, __: Any) -> Any:
            raise error

        async def collect() -> list[str]:
            return [e async for e in ask_events(run, False, StreamWork())]

        result: list[str] = run_async(collect)  # a thread of its own (tests/aio.py)
        return result

    failed = events(StoreError("/srv/excerpt/home/store.db: database disk image is malformed"))
    assert failed[-1] == 'event: error\ndata: {"error": "internal error", "kind": "internal"}\n\n'
    refused = events(InputError("no such mode"))
    assert refused[-1] == 'event: error\ndata: {"error": "no such mode", "kind": "input"}\n\n'
