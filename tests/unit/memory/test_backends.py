"""One conformance suite for every MemoryBackend, plus SQLite specifics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from excerpt.memory import (
    ConversationConfig,
    ConversationState,
    InMemoryBackend,
    MemoryBackend,
    SQLiteBackend,
    Utterance,
    copy_into,
)


def utt(i: int, text: str = "") -> Utterance:
    return Utterance(i, "user", 1, f"2026-01-01T00:00:{i:02d}.000000+00:00", text or f"t{i}", 2)


@pytest.fixture(params=["memory", "sqlite"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryBackend]:
    made: MemoryBackend = (InMemoryBackend() if request.param == "memory"
                           else SQLiteBackend(tmp_path / "m.db"))
    yield made
    made.close()


def test_protocol(backend: MemoryBackend) -> None:
    assert isinstance(backend, MemoryBackend)


def test_unknown_conversation(backend: MemoryBackend) -> None:
    assert backend.state("nope") is None
    assert backend.utterances("nope") == []
    assert backend.conversations() == []


def test_commit_adds_removes_and_saves_state(backend: MemoryBackend) -> None:
    state = ConversationState(ConversationConfig(buffer_size=3), next_index=3, summary="s")
    backend.commit("a", state, added=[utt(2), utt(0), utt(1)])
    assert [u.utterance_index for u in backend.utterances("a")] == [0, 1, 2]
    assert backend.state("a") == state
    later = ConversationState(ConversationConfig(buffer_size=3), 4, 1, "s2", 0)
    backend.commit("a", later, added=[utt(3)], removed=[0])
    assert [u.utterance_index for u in backend.utterances("a")] == [1, 2, 3]
    assert backend.state("a") == later
    backend.commit("b", ConversationState())
    assert backend.conversations() == ["a", "b"]
    assert backend.utterances("b") == []


def test_text_is_kept_exactly(backend: MemoryBackend) -> None:
    text = "  ünïcode\x00 한국어\r\n\ttabs ☕ " * 1000
    backend.commit("a", ConversationState(next_index=1), added=[utt(0, text)])
    assert backend.utterances("a")[0].text == text


def test_copy_into_replaces_the_target(backend: MemoryBackend, tmp_path: Path) -> None:
    backend.commit("a", ConversationState(next_index=2, summary="x"), added=[utt(0), utt(1)])
    target = SQLiteBackend(tmp_path / "target.db")
    target.commit("a", ConversationState(next_index=9), added=[utt(7)])
    assert copy_into(backend, target) == 1
    assert target.utterances("a") == backend.utterances("a")
    assert target.state("a") == backend.state("a")
    target.close()


def test_sqlite_is_wal_and_synchronous_full(tmp_path: Path) -> None:
    backend = SQLiteBackend.at_home(tmp_path / "home")
    assert backend.path == tmp_path / "home" / "memory.db"
    db = backend._db
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    backend.close()


def test_backends_by_name(tmp_path: Path) -> None:
    from excerpt.errors import InputError
    from excerpt.memory import open_backend

    assert isinstance(open_backend("in-memory"), InMemoryBackend)
    durable = open_backend("durable", tmp_path)
    assert isinstance(durable, SQLiteBackend) and durable.path == tmp_path / "memory.db"
    durable.close()
    with pytest.raises(InputError, match="home"):
        open_backend("durable")
    with pytest.raises(InputError, match="unknown memory backend"):
        open_backend("redis")


def test_a_failed_write_is_rolled_back(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "m.db")
    backend.commit("a", ConversationState(next_index=1), added=[utt(0)])
    with pytest.raises(RuntimeError), backend.writing("a") as write:
        assert write.state() == ConversationState(next_index=1)
        write.commit(ConversationState(next_index=2), added=[utt(1)], removed=[0])
        raise RuntimeError("the caller failed after its change")
    assert backend.state("a") == ConversationState(next_index=1)
    assert [u.utterance_index for u in backend.utterances("a")] == [0]
    with backend.writing("a") as write:  # the file is not left locked
        write.commit(ConversationState(next_index=2), added=[utt(1)])
    assert backend.state("a") == ConversationState(next_index=2)
    backend.close()


def test_a_writer_waits_for_another_processs_transaction(tmp_path: Path) -> None:
    """BEGIN IMMEDIATE: a second connection (as another process would have) cannot write
    while a write transaction is open, and sees its change once it commits."""
    first, second = SQLiteBackend(tmp_path / "m.db"), SQLiteBackend(tmp_path / "m.db")
    second._db.execute("PRAGMA busy_timeout=50")
    from excerpt.errors import StoreError

    with first.writing("a") as write:
        write.commit(ConversationState(next_index=1), added=[utt(0)])
        with pytest.raises(StoreError, match="locked"), second.writing("a"):
            pass
    with second.writing("a") as write:
        assert write.state() == ConversationState(next_index=1)
    first.close()
    second.close()
