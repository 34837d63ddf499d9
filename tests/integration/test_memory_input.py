"""Text that one memory backend could keep and another not (issue 15): a NUL character
(PostgreSQL's text cannot hold it) and a lone surrogate (not UTF-8) are refused alike, on every
backend, before anything is written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from excerpt.errors import InputError
from excerpt.memory import InMemoryBackend, MemoryStore, SQLiteBackend


@pytest.fixture(params=["in-memory", "durable", "postgresql"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    database: Any = None
    if request.param == "postgresql":
        from excerpt.memory.pg_backend import PostgresMemoryBackend
        from excerpt.store.postgres import PostgresStore

        database = PostgresStore(request.getfixturevalue("pg_url"), tmp_path)
        store = MemoryStore(PostgresMemoryBackend(database), embedder=None)
    elif request.param == "durable":
        store = MemoryStore(SQLiteBackend.at_home(tmp_path), embedder=None)
    else:
        store = MemoryStore(InMemoryBackend(), embedder=None)
    yield store
    store.close()
    if database is not None:
        database.close()


@pytest.mark.parametrize(("text", "reason"), [
    ("before\x00after", "NUL"),
    ("half a pair \ud800 here", "surrogate"),
])
def test_text_no_store_can_keep_is_refused_on_every_backend(
        memory: MemoryStore, text: str, reason: str) -> None:
    memory.add("c", "user", 1, "kept")
    with pytest.raises(InputError, match=reason):
        memory.add("c", "user", 1, text)
    assert [u.text for u in memory.read("c")] == ["kept"]
    assert memory.add("c", "user", 2, "next").utterance_index == 1
