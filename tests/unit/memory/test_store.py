from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from excerpt.embed import FloatMatrix, l2_normalise
from excerpt.errors import InputError
from excerpt.memory import InMemoryBackend, MemoryStore, SQLiteBackend


def test_unknown_conversation_is_empty() -> None:
    store = MemoryStore(embedder=None)
    assert store.read("x") == [] and store.last("x", 3) == []
    assert store.search("x", "q") == [] and store.summary("x") == ("", 0)
    assert store.delete("x", 0) is False
    stats = store.stats("x")
    assert stats["utterances"] == 0 and stats["config"]["buffer_size"] == 20
    assert store.conversations() == []


def test_bad_input_is_refused() -> None:
    store = MemoryStore(embedder=None)
    with pytest.raises(InputError, match="speaker"):
        store.add("c", "robot", 1, "hi")
    with pytest.raises(InputError, match="turn"):
        store.add("c", "user", -1, "hi")
    with pytest.raises(InputError, match="conversation"):
        store.add("", "user", 1, "hi")
    with pytest.raises(InputError, match="speaker"):
        store.read("c", speaker="robot")
    with pytest.raises(InputError):
        store.last("c", -1)
    with pytest.raises(InputError):
        store.summary("c", token_limit=-5)
    with pytest.raises(InputError):
        store.config("c", buffer_size=0)
    assert store.conversations() == []


def test_indexes_are_never_reused() -> None:
    store = MemoryStore(embedder=None)
    store.config("c", buffer_size=2)
    for n in range(3):
        store.add("c", "user", n, f"u{n}")
    assert store.delete("c", 2) and not store.delete("c", 2) and not store.delete("c", 0)
    assert store.add("c", "user", 9, "next").utterance_index == 3
    assert store.stats("c")["deleted"] == 1
    assert store.last("c", 0) == [] and len(store.last("c", 10)) == 2


def test_smaller_limits_evict_at_once() -> None:
    store = MemoryStore(embedder=None)
    for n in range(6):
        store.add("c", "user", n, f"Message number {n} about Berlin.")
    assert store.config("c") == store.config("c", buffer_size=None)
    store.config("c", buffer_size=2)
    assert [u.utterance_index for u in store.read("c")] == [4, 5]
    stats = store.stats("c")
    assert stats["evicted"] == 4 and stats["summary_tokens"] > 0


def test_search_is_bm25_ranked_and_deterministic() -> None:
    store = MemoryStore(embedder=None)
    store.add("c", "user", 1, "The train to Busan leaves at noon.")
    store.add("c", "assistant", 1, "Trains, trains, trains: the Busan train is fast.")
    store.add("c", "user", 2, "I like coffee.")
    store.add("c", "system", 2, "The train to Busan leaves at noon.")
    found = store.search("c", "train")
    assert [r.utterance.utterance_index for r in found] == [1, 0, 3]
    assert found[1].relevance_score == found[2].relevance_score
    assert store.search("c", "train", k=1)[0].utterance.utterance_index == 1
    assert store.search("c", "zebra") == [] and store.search("c", "  ") == []
    assert [r.utterance.speaker for r in store.search("c", "train", speaker="system")] == [
        "system"]
    # the index follows evictions and deletes
    store.delete("c", 1)
    assert [r.utterance.utterance_index for r in store.search("c", "train")] == [0, 3]
    store.config("c", buffer_size=1)
    assert [r.utterance.utterance_index for r in store.search("c", "train")] == [3]


def test_search_in_korean() -> None:
    store = MemoryStore(embedder=None)
    store.add("c", "user", 1, "부산 가는 기차표를 예매하고 싶어요.")
    store.add("c", "assistant", 1, "서울에서 출발하는 비행기도 있어요.")
    found = store.search("c", "기차표 예매")
    assert [r.utterance.utterance_index for r in found] == [0]


FAKE_WORDS = {"hotel": (1.0, 0.0, 0.0), "inn": (0.95, 0.3, 0.0), "coffee": (0.0, 0.0, 1.0)}


class FakeEmbedder:
    """Vectors from a fixed table of words: a text's vector is the sum of its known words."""

    name = "fake"
    dim = 3

    def _one(self, text: str) -> FloatMatrix:
        vec = np.zeros(3, dtype=np.float32)
        for word, v in FAKE_WORDS.items():
            if word in text.lower():
                vec += np.asarray(v, dtype=np.float32)
        if not vec.any():
            vec[1] = 1.0
        return l2_normalise(vec)

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, 3), np.float32)

    def embed_query(self, text: str) -> FloatMatrix:
        return self._one(text)


def test_search_blends_embeddings_and_keeps_only_close_semantic_matches() -> None:
    store = MemoryStore(embedder=FakeEmbedder())
    store.add("c", "user", 1, "Which hotel is near the station?")
    store.add("c", "user", 1, "A small inn by the river.")      # cosine ~0.95: kept
    store.add("c", "user", 1, "Coffee first, please.")          # cosine 0: left out
    found = store.search("c", "hotel")
    assert [r.utterance.utterance_index for r in found] == [0, 1]
    assert found[0].relevance_score == pytest.approx(1.0)
    assert 0.45 < found[1].relevance_score < 0.5


def test_parallel_writers_lose_and_reorder_nothing(tmp_path: Path) -> None:
    store = MemoryStore(SQLiteBackend.at_home(tmp_path), embedder=None)
    store.config("c", buffer_size=1000)
    results: dict[str, list[int]] = {}

    def writer(name: str) -> None:
        results[name] = [store.add("c", "user", n, f"{name} {n}").utterance_index
                         for n in range(25)]

    threads = [threading.Thread(target=writer, args=(f"w{t}",)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = store.read("c")
    assert [u.utterance_index for u in stored] == list(range(100))
    for name, indexes in results.items():
        assert indexes == sorted(indexes)  # each writer's adds in its own order
        mine = [u.text for u in stored if u.text.startswith(name + " ")]
        assert mine == [f"{name} {n}" for n in range(25)]
    stamps = [u.timestamp for u in stored]
    assert stamps == sorted(stamps)
    store.close()


def test_a_second_store_on_the_same_file_sees_the_writes(tmp_path: Path) -> None:
    first = MemoryStore(SQLiteBackend.at_home(tmp_path), embedder=None)
    second = MemoryStore(SQLiteBackend.at_home(tmp_path), embedder=None)
    first.add("c", "user", 1, "one")
    assert [u.text for u in second.read("c")] == ["one"]
    first.add("c", "user", 1, "two")
    first.delete("c", 0)
    assert [u.text for u in second.read("c")] == ["two"]
    first.close()
    second.close()


def test_switch_backend_without_copy_starts_empty(tmp_path: Path) -> None:
    store = MemoryStore(InMemoryBackend(), embedder=None)
    store.add("c", "user", 1, "hi")
    old = store.switch_backend(SQLiteBackend.at_home(tmp_path), copy=False)
    assert store.read("c") == [] and [u.text for u in old.utterances("c")] == ["hi"]
    store.close()


def test_a_store_sees_what_another_store_on_the_file_wrote(tmp_path: Path) -> None:
    """Two stores on one memory.db (two processes, in effect): each write reads the stored
    conversation inside its transaction, so a stale cache neither reuses an index nor drops
    the other's utterances from the buffer or the summary."""
    first = MemoryStore(SQLiteBackend(tmp_path / "m.db"), embedder=None)
    second = MemoryStore(SQLiteBackend(tmp_path / "m.db"), embedder=None)
    first.config("c", buffer_size=2, summary_token_limit=1000)
    first.add("c", "user", 1, "Alpha goes first.")
    assert [u.text for u in second.read("c")] == ["Alpha goes first."]  # second caches
    first.add("c", "user", 2, "Bravo comes next.")
    first.add("c", "user", 3, "Charlie is third.")
    added = second.add("c", "user", 4, "Delta is last.")
    assert added.utterance_index == 3
    assert [u.text for u in first.read("c")] == ["Charlie is third.", "Delta is last."]
    summary, _ = first.summary("c")
    assert summary.split("\n") == ["user: Alpha goes first.", "user: Bravo comes next."]
    assert second.delete("c", 2) and first.stats("c")["deleted"] == 1
    first.close()
    second.close()
