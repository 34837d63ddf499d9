"""Several processes writing one conversation (issue 15, item 8): every acknowledged add is
stored once, indexes are unique and sequential, and eviction into the summary loses nothing,
on the durable SQLite store and on PostgreSQL.

Each writer is a real process with its own MemoryStore; it reads the conversation first (so it
holds a cached buffer that the others make stale), then waits for a common start signal so the
writes overlap.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from excerpt.memory import MemoryStore, SQLiteBackend
from excerpt.memory.backends import MemoryBackend
from excerpt.memory.summary import summary_lines

# The writers fork from one process that has imported excerpt already (a process each that
# imports it takes a second of CPU).
FORKS = multiprocessing.get_context("forkserver")
FORKS.set_forkserver_preload(["excerpt.memory", "excerpt.store.postgres"])


def writer(kind: str, location: str, scratch: Path, worker: str, count: int,
           ready: Any, go: Any) -> None:
    memory, database = open_memory(kind, location, scratch)
    memory.read("c")  # a cached buffer, made stale by the other writers
    ready.put(worker)
    go.wait()
    for i in range(count):
        if worker == "config":  # limits changing under the writers
            memory.config("c", buffer_size=2 + i % 3)
        else:
            memory.add("c", "user", int(worker), f"Writer {worker} line {i}.")
    memory.close()
    if database is not None:
        database.close()


@pytest.fixture(params=["durable", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(backend kind, location): a home folder, or a fresh PostgreSQL database."""
    if request.param == "postgresql":
        yield "postgresql", request.getfixturevalue("pg_url")
    else:
        yield "durable", str(tmp_path / "home")


def open_memory(kind: str, location: str, scratch: Path) -> tuple[MemoryStore, Any]:
    database = None
    if kind == "postgresql":
        from excerpt.memory.pg_backend import PostgresMemoryBackend
        from excerpt.store.postgres import PostgresStore

        database = PostgresStore(location, scratch)
        backend: MemoryBackend = PostgresMemoryBackend(database)
    else:
        backend = SQLiteBackend.at_home(location)
    return MemoryStore(backend, embedder=None), database


def run_writers(kind: str, location: str, tmp_path: Path, workers: list[str],
                count: int) -> None:
    ready, go = FORKS.Queue(), FORKS.Event()
    procs = [FORKS.Process(target=writer, args=(kind, location, tmp_path / f"scratch-{w}", w,
                                                count, ready, go)) for w in workers]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.get(timeout=60)
    go.set()
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0


def written(workers: int, count: int) -> list[str]:
    return [f"Writer {w} line {i}." for w in range(workers) for i in range(count)]


def test_parallel_writers_store_every_utterance_once(where: tuple[str, str],
                                                     tmp_path: Path) -> None:
    kind, location = where
    memory, database = open_memory(kind, location, tmp_path / "scratch")
    memory.config("c", buffer_size=500)
    run_writers(kind, location, tmp_path, ["0", "1", "2", "3"], 15)
    stored = memory.read("c")
    assert [u.utterance_index for u in stored] == list(range(60))
    assert sorted(u.text for u in stored) == sorted(written(4, 15))
    for w in range(4):  # each writer's own adds keep its order
        mine = [u.text for u in stored if u.turn_number == w]
        assert mine == [f"Writer {w} line {i}." for i in range(15)]
    memory.close()
    if database is not None:
        database.close()


def test_eviction_under_parallel_writers_keeps_everything(where: tuple[str, str],
                                                          tmp_path: Path) -> None:
    """A small buffer: what is not in the buffer is in the summary, each line exactly once,
    and the counters agree; a writer changing the limits meanwhile changes nothing of that."""
    kind, location = where
    memory, database = open_memory(kind, location, tmp_path / "scratch")
    memory.config("c", buffer_size=3, summary_token_limit=100_000)
    run_writers(kind, location, tmp_path, ["0", "1", "2", "config"], 12)
    stats = memory.stats("c")
    buffer = memory.read("c")
    summary, _ = memory.summary("c")
    kept = [f"user: {u.text}" for u in buffer]
    lines = summary_lines(summary)
    assert stats["next_index"] == 36 and stats["evicted"] + len(buffer) == 36
    assert len(lines) == stats["evicted"] == len(set(lines))
    assert sorted(lines + kept) == sorted(f"user: {t}" for t in written(3, 12))
    assert len(buffer) <= stats["config"]["buffer_size"]
    assert [u.utterance_index for u in buffer] == sorted({u.utterance_index for u in buffer})
    memory.close()
    if database is not None:
        database.close()


@pytest.mark.slow  # a process per add: about 2 s of imports each
def test_parallel_cli_adds_are_all_stored(where: tuple[str, str], tmp_path: Path) -> None:
    """The issue's reproduction: `excerpt memory CONV add` run by several processes at once."""
    kind, location = where
    home = location if kind == "durable" else str(tmp_path / "home")
    store = ["--store", location] if kind == "postgresql" else []
    procs = [subprocess.Popen([sys.executable, "-m", "excerpt", "--home", home, *store,
                               "memory", "c", "add", "--speaker", "user", "--turn", str(n),
                               f"Parallel line {n}.", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(6)]
    indexes = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        indexes.append(json.loads(out)["utterances"][0]["utterance_index"])
    assert sorted(indexes) == list(range(6))
    memory, database = open_memory(kind, location, tmp_path / "scratch")
    stored = memory.read("c")
    assert sorted(u.text for u in stored) == sorted(f"Parallel line {n}." for n in range(6))
    assert [u.utterance_index for u in stored] == list(range(6))
    memory.close()
    if database is not None:
        database.close()
