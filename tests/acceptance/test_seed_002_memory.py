"""Seed 002 (conversation history), tests 7.1-7.19, against the library: ``excerpt.memory``.

The seed speaks of a daemon answering ``query()``; here each test calls the
:class:`~excerpt.memory.MemoryStore` methods that the daemon will serve (``add``, ``read``,
``last``, ``search``, ``summary``, ``delete``, ``stats``, ``config``).  Every seed test
concerns the library, so none is skipped; with the daemon, next: the same tests through
``POST /v1/memory/{conversation}/query`` (the seed's single-entry ``query()`` form) and the
``excerpt memory`` commands.

Every backend runs the tests that do not name one (``in-memory``, ``durable`` and
``postgresql``, the last on a real PostgreSQL server).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from excerpt.errors import DependencyError
from excerpt.memory import (
    InMemoryBackend,
    MemoryStore,
    SQLiteBackend,
    entity_retention,
    key_entities,
)
from excerpt.memory.backends import MemoryBackend
from excerpt.tokens import count_tokens

DIALOGUE = [
    ("user", 1, "Hi, I'm Alice Moreau and I'm planning a trip to Lisbon in October."),
    ("assistant", 1, "Great choice, Alice. The Belém Tower and the Alfama district are worth a "
                     "visit, and TAP Air Portugal flies there from Paris every day."),
    ("user", 2, "My colleague Kenji Watanabe will join me; he wants to try the pastéis at "
                "Manteigaria."),
    ("assistant", 2, "I can book a table at Time Out Market for you and Kenji on Friday."),
    ("user", 3, "Please also reserve a room at Hotel Avenida Palace for four nights."),
    ("assistant", 3, "Done: Hotel Avenida Palace, four nights from October 12."),
]


@pytest.fixture(params=["in-memory", "durable", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    """Each backend: in memory, SQLite, and PostgreSQL (a real server, a fresh database)."""
    database = None
    if request.param == "postgresql":
        from excerpt.memory.pg_backend import PostgresMemoryBackend
        from excerpt.store.postgres import PostgresStore

        database = PostgresStore(request.getfixturevalue("pg_url"), tmp_path)
        backend: MemoryBackend = PostgresMemoryBackend(database)
    elif request.param == "durable":
        backend = SQLiteBackend.at_home(tmp_path)
    else:
        backend = InMemoryBackend()
    memory = MemoryStore(backend, embedder=None)
    yield memory
    memory.close()
    if database is not None:
        database.close()


def add_numbered(store: MemoryStore, count: int, conversation: str = "c") -> None:
    for n in range(1, count + 1):
        store.add(conversation, "user", n, f"utterance {n}")


# -- rolling buffer ----------------------------------------------------------------------------

def test_7_1_buffer_keeps_the_last_n(store: MemoryStore) -> None:
    store.config("c", buffer_size=5)
    add_numbered(store, 7)
    texts = [u.text for u in store.read("c")]
    assert texts == [f"utterance {n}" for n in range(3, 8)]
    assert store.stats("c")["utterances"] == 5


def test_7_2_fifo_eviction(store: MemoryStore) -> None:
    store.config("c", buffer_size=3)
    for letter in "ABCDE":
        store.add("c", "user", 1, letter)
    assert [u.text for u in store.read("c")] == ["C", "D", "E"]


def test_7_3_utterance_indexes_are_sequential(store: MemoryStore) -> None:
    added = [store.add("c", "user", 1, f"u{n}") for n in range(5)]
    assert [u.utterance_index for u in added] == [0, 1, 2, 3, 4]
    assert [u.utterance_index for u in store.read("c")] == [0, 1, 2, 3, 4]


# -- speakers and turns ------------------------------------------------------------------------

def test_7_4_speaker_is_recorded(store: MemoryStore) -> None:
    for speaker in ("user", "assistant", "system"):
        store.add("c", speaker, 1, f"said by {speaker}")
    assert [(u.speaker, u.text) for u in store.read("c")] == [
        ("user", "said by user"), ("assistant", "said by assistant"),
        ("system", "said by system")]


def test_7_5_turn_number_is_tracked(store: MemoryStore) -> None:
    for turn in (1, 2, 3):
        store.add("c", "user", turn, f"question {turn}")
        store.add("c", "assistant", turn, f"answer {turn}")
    assert [u.turn_number for u in store.read("c")] == [1, 1, 2, 2, 3, 3]


# -- summaries ---------------------------------------------------------------------------------

def test_7_6_evicted_utterances_are_summarised(store: MemoryStore) -> None:
    store.config("c", buffer_size=3)
    for speaker, turn, text in DIALOGUE[:5]:
        store.add("c", speaker, turn, text)
    assert [u.utterance_index for u in store.read("c")] == [2, 3, 4]
    summary, tokens = store.summary("c")
    assert len(summary) >= 50 and tokens == count_tokens(summary)
    evicted = " ".join(text for _, _, text in DIALOGUE[:2])
    assert len(key_entities(evicted)) >= 8
    assert entity_retention(evicted, summary) >= 0.8


def test_7_7_summary_respects_the_token_limit(store: MemoryStore) -> None:
    store.config("c", buffer_size=2, summary_token_limit=100)
    for _ in range(4):
        for speaker, turn, text in DIALOGUE:
            store.add("c", speaker, turn, text)
    _, stored_tokens = store.summary("c")
    assert 0 < stored_tokens <= 100
    summary, tokens = store.summary("c", token_limit=40)
    assert 0 < tokens <= 40 and tokens == count_tokens(summary)
    # whole sentences only: every line of the trimmed summary is a line of the full one
    full = store.summary("c")[0].split("\n")
    assert all(line in full for line in summary.split("\n"))


def test_7_8_summaries_merge_incrementally(store: MemoryStore) -> None:
    store.config("c", buffer_size=2)
    for speaker, turn, text in DIALOGUE[:4]:
        store.add("c", speaker, turn, text)
    first, _ = store.summary("c")
    for speaker, turn, text in DIALOGUE[4:6]:
        store.add("c", speaker, turn, text)
    final, _ = store.summary("c")
    assert final.startswith(first)
    evicted = " ".join(text for _, _, text in DIALOGUE[:4])
    assert entity_retention(evicted, final) >= 0.75
    assert store.stats("c")["evicted"] == 4


# -- reads -------------------------------------------------------------------------------------

def test_7_9_last_n_returns_the_most_recent(store: MemoryStore) -> None:
    add_numbered(store, 10)
    assert [u.text for u in store.last("c", 5)] == [f"utterance {n}" for n in range(6, 11)]


def test_7_10_read_is_chronological(store: MemoryStore) -> None:
    add_numbered(store, 5)
    stamps = [u.timestamp for u in store.read("c")]
    assert all(a <= b for a, b in pairwise(stamps))
    assert all(s.endswith("+00:00") for s in stamps)


def test_7_11_search_finds_by_content(store: MemoryStore) -> None:
    for speaker, turn, text in DIALOGUE:
        store.add("c", speaker, turn, text)
    store.add("c", "user", 4, "What is the weather like in October there?")
    results = store.search("c", "October")
    assert {r.utterance.utterance_index for r in results} == {0, 5, 6}
    assert all("october" in r.utterance.text.lower() for r in results)
    scores = [r.relevance_score for r in results]
    assert scores == sorted(scores, reverse=True)


def test_7_11_search_with_embeddings_keeps_only_keyword_or_close_matches() -> None:
    store = MemoryStore(InMemoryBackend())
    try:
        from excerpt.embed import get_embedder

        model = get_embedder("minilm")
        model.embed_query("probe")
    except DependencyError as exc:
        pytest.skip(f"no English embedder: {exc}")
    for speaker, turn, text in DIALOGUE:
        store.add("c", speaker, turn, text)
    store.add("c", "user", 4, "Is there a good hotel close to the river?")
    results = store.search("c", "hotel")
    assert results
    for r in results:
        cosine = float(model.embed_query(r.utterance.text) @ model.embed_query("hotel"))
        assert "hotel" in r.utterance.text.lower() or cosine >= 0.85
    scores = [r.relevance_score for r in results]
    assert scores == sorted(scores, reverse=True)


def test_7_12_filter_by_speaker(store: MemoryStore) -> None:
    for speaker, turn, text in DIALOGUE:
        store.add("c", speaker, turn, text)
    store.add("c", "system", 4, "The user prefers hotels in Lisbon's centre.")
    users = store.read("c", speaker="user")
    assert users and all(u.speaker == "user" for u in users)
    found = store.search("c", "Lisbon hotel", speaker="user")
    assert found and all(r.utterance.speaker == "user" for r in found)
    assert all(u.speaker == "system" for u in store.last("c", 3, speaker="system"))


# -- backends ----------------------------------------------------------------------------------

def test_7_13_in_memory_backend() -> None:
    store = MemoryStore(InMemoryBackend(), embedder=None)
    for speaker, turn, text in DIALOGUE:
        store.add("c", speaker, turn, text)
    assert [u.text for u in store.read("c")] == [text for _, _, text in DIALOGUE]


CHILD = textwrap.dedent("""
    import sys
    from excerpt.memory import MemoryStore, SQLiteBackend
    store = MemoryStore(SQLiteBackend(sys.argv[1]), embedder=None)
    store.config("c", buffer_size=100000, max_tokens=10**9)
    n = 0
    while True:
        text = f"durable utterance {n}: café ☕ 부산 " + "x" * (n % 50)
        u = store.add("c", "user", n, text)
        print(u.utterance_index, flush=True)
        n += 1
""")


def durable_text(n: int) -> str:
    return f"durable utterance {n}: café ☕ 부산 " + "x" * (n % 50)


def test_7_14_durable_backend_survives_a_killed_process(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE,
                             text=True, env=env)
    assert child.stdout is not None
    acknowledged: list[int] = []
    try:
        while len(acknowledged) < 100:
            line = child.stdout.readline()
            assert line, "the writer died before acknowledging 100 adds"
            acknowledged.append(int(line))
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert acknowledged == list(range(len(acknowledged)))
    store = MemoryStore(SQLiteBackend(path), embedder=None)
    stored = store.read("c")
    assert [u.utterance_index for u in stored[:len(acknowledged)]] == acknowledged
    assert [u.text for u in stored[:len(acknowledged)]] == [
        durable_text(n) for n in acknowledged]
    # a restarted writer continues the sequence
    nxt = store.add("c", "user", 1, "after the restart")
    assert nxt.utterance_index == len(stored)
    store.close()


def test_7_14_durable_backend_persists_across_sessions(tmp_path: Path) -> None:
    first = MemoryStore(SQLiteBackend.at_home(tmp_path), embedder=None)
    for speaker, turn, text in DIALOGUE:
        first.add("c", speaker, turn, text)
    written = first.read("c")
    first.close()
    second = MemoryStore(SQLiteBackend.at_home(tmp_path), embedder=None)
    assert second.read("c") == written
    second.close()


def test_7_15_backend_switching_carries_the_data(tmp_path: Path) -> None:
    store = MemoryStore(InMemoryBackend(), embedder=None)
    store.config("c", buffer_size=4)
    for speaker, turn, text in DIALOGUE:
        store.add("c", speaker, turn, text)
    before, summary = store.read("c"), store.summary("c")
    store.switch_backend(SQLiteBackend.at_home(tmp_path))
    assert store.read("c") == before and store.summary("c") == summary
    assert store.add("c", "user", 4, "Thanks!").utterance_index == 6
    store.close()
    reopened = MemoryStore(SQLiteBackend.at_home(tmp_path), embedder=None)
    assert [u.utterance_index for u in reopened.read("c")] == [3, 4, 5, 6]
    reopened.close()


# -- token budget ------------------------------------------------------------------------------

def test_7_16_token_budget(store: MemoryStore) -> None:
    store.config("c", max_tokens=1000)
    paragraph = "The committee discussed the budget for the new library wing. " * 10
    for n in range(20):
        store.add("c", "user", n, paragraph)
    assert 20 * count_tokens(paragraph) > 1000
    assert store.total_tokens("c") <= 1000
    assert store.stats("c")["evicted"] > 0


# -- edge cases --------------------------------------------------------------------------------

def test_7_17_empty_buffer(store: MemoryStore) -> None:
    assert store.last("c", 5) == []
    assert store.read("c") == []
    assert store.summary("c") == ("", 0)
    assert store.search("c", "anything") == []


def test_7_18_single_utterance(store: MemoryStore) -> None:
    store.add("c", "user", 1, "Just one thing.")
    assert len(store.last("c", 1)) == 1
    assert len(store.read("c")) == 1
    assert store.delete("c", 0)
    assert store.read("c") == []


def test_7_19_large_utterances(store: MemoryStore) -> None:
    words = [f"word{n} " for n in range(6000)]
    large = "".join(words) + "Ünïcödé 한국어 텍스트 " * 50
    assert count_tokens(large) >= 10_000
    store.config("c", max_tokens=100_000)
    store.add("c", "user", 1, large)
    store.add("c", "assistant", 1, large[::-1])
    got = store.read("c")
    assert got[0].text == large and got[1].text == large[::-1]
    assert got[0].tokens == count_tokens(large) and got[1].tokens == count_tokens(large[::-1])


def test_7_19_an_utterance_over_max_tokens_stays_whole(store: MemoryStore) -> None:
    large = "".join(f"token{n} " for n in range(6000))
    store.add("c", "user", 1, "before")
    store.add("c", "user", 2, large)        # alone over the default max_tokens (8000)
    assert [u.text for u in store.read("c")] == [large]
    assert store.stats("c")["evicted"] == 1
