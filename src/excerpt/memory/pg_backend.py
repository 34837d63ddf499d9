"""Conversation memory in PostgreSQL: the same tables as the SQLite backend's (migration
``002_memory`` of store/pg_schema.py), for a service whose store is PostgreSQL.

Several processes (service workers, CLI calls) may write one conversation: a write runs in one
transaction that first takes a transaction-scoped advisory lock on the conversation, so the
next one waits, then reads what is committed (a conversation that does not exist yet has no row
to lock, hence an advisory lock rather than ``SELECT ... FOR UPDATE``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from excerpt.memory.backends import ConversationWrite
from excerpt.memory.model import ConversationConfig, ConversationState, Utterance
from excerpt.store.postgres import PostgresStore

# First key of the advisory lock a memory write holds: (MEMORY_LOCK, hashtext(conversation)).
# Two names with one hash only wait for each other.
MEMORY_LOCK = 7_316_003


class PostgresMemoryBackend:
    """Conversations on a PostgreSQL store's pooled connections; each commit is one
    transaction, durable when it returns."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store  # its pool, its migrations, its error mapping

    def state(self, conversation: str) -> ConversationState | None:
        with self._store.transaction() as conn:
            return _state(conn, conversation)

    def utterances(self, conversation: str) -> list[Utterance]:
        with self._store.transaction() as conn:
            return _utterances(conn, conversation)

    def commit(self, conversation: str, state: ConversationState,
               added: Sequence[Utterance] = (), removed: Sequence[int] = ()) -> None:
        with self.writing(conversation) as write:
            write.commit(state, added, removed)

    @contextmanager
    def writing(self, conversation: str) -> Iterator[ConversationWrite]:
        with self._store.transaction() as conn:
            # READ COMMITTED whatever the server's default: each read after the lock sees
            # what the previous writer committed (a snapshot taken before the wait would not).
            conn.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
            conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                         (MEMORY_LOCK, conversation))
            yield ConversationWrite(
                lambda: _state(conn, conversation), lambda: _utterances(conn, conversation),
                lambda state, added, removed: _save(conn, conversation, state, added, removed))

    def conversations(self) -> list[str]:
        return [r[0] for r in self._store.query("SELECT name FROM conversations ORDER BY name")]

    def close(self) -> None:
        """The store owns the connections."""


def _state(conn: Any, conversation: str) -> ConversationState | None:
    row = conn.execute(
        "SELECT buffer_size, max_tokens, summary_token_limit, next_index, evicted, summary, "
        "deleted FROM conversations WHERE name = %s", (conversation,)).fetchone()
    if row is None:
        return None
    return ConversationState(ConversationConfig(row[0], row[1], row[2]), row[3], row[4], row[5],
                             row[6])


def _utterances(conn: Any, conversation: str) -> list[Utterance]:
    rows = conn.execute(
        "SELECT utterance_index, speaker, turn_number, timestamp, text, tokens FROM "
        "utterances WHERE conversation = %s ORDER BY utterance_index", (conversation,)).fetchall()
    return [Utterance(*row) for row in rows]


def _save(conn: Any, conversation: str, state: ConversationState, added: Sequence[Utterance],
          removed: Sequence[int]) -> None:
    config = state.config
    with conn.cursor() as cur:
        if removed:
            cur.execute("DELETE FROM utterances WHERE conversation = %s AND "
                        "utterance_index = ANY(%s)", (conversation, list(removed)))
        cur.executemany(
            "INSERT INTO utterances VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT "
            "(conversation, utterance_index) DO UPDATE SET speaker = EXCLUDED.speaker, "
            "turn_number = EXCLUDED.turn_number, timestamp = EXCLUDED.timestamp, "
            "text = EXCLUDED.text, tokens = EXCLUDED.tokens",
            [(conversation, u.utterance_index, u.speaker, u.turn_number, u.timestamp, u.text,
              u.tokens) for u in added])
        cur.execute(
            "INSERT INTO conversations VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT "
            "(name) DO UPDATE SET buffer_size = EXCLUDED.buffer_size, max_tokens = "
            "EXCLUDED.max_tokens, summary_token_limit = EXCLUDED.summary_token_limit, "
            "next_index = EXCLUDED.next_index, evicted = EXCLUDED.evicted, "
            "summary = EXCLUDED.summary, deleted = EXCLUDED.deleted",
            (conversation, config.buffer_size, config.max_tokens, config.summary_token_limit,
             state.next_index, state.evicted, state.summary, state.deleted))
