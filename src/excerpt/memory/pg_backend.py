"""Conversation memory in PostgreSQL: the same tables as the SQLite backend's (migration
``002_memory`` of store/pg_schema.py), for a service whose store is PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from excerpt.memory.model import ConversationConfig, ConversationState, Utterance


class PostgresMemoryBackend:
    """Conversations on a PostgreSQL store's pooled connections; each commit is one
    transaction, durable when it returns."""

    def __init__(self, store: Any) -> None:
        self._store = store  # a PostgresStore: its pool, its migrations, its error mapping

    def state(self, conversation: str) -> ConversationState | None:
        rows = self._store.query(
            "SELECT buffer_size, max_tokens, summary_token_limit, next_index, evicted, summary, "
            "deleted FROM conversations WHERE name = %s", (conversation,))
        if not rows:
            return None
        row = rows[0]
        return ConversationState(ConversationConfig(row[0], row[1], row[2]), row[3], row[4],
                                 row[5], row[6])

    def utterances(self, conversation: str) -> list[Utterance]:
        rows = self._store.query(
            "SELECT utterance_index, speaker, turn_number, timestamp, text, tokens FROM "
            "utterances WHERE conversation = %s ORDER BY utterance_index", (conversation,))
        return [Utterance(*row) for row in rows]

    def commit(self, conversation: str, state: ConversationState,
               added: Sequence[Utterance] = (), removed: Sequence[int] = ()) -> None:
        config = state.config
        with self._store.transaction() as conn, conn.cursor() as cur:
            if removed:
                cur.execute("DELETE FROM utterances WHERE conversation = %s AND "
                            "utterance_index = ANY(%s)", (conversation, list(removed)))
            cur.executemany(
                "INSERT INTO utterances VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT "
                "(conversation, utterance_index) DO UPDATE SET speaker = EXCLUDED.speaker, "
                "turn_number = EXCLUDED.turn_number, timestamp = EXCLUDED.timestamp, "
                "text = EXCLUDED.text, tokens = EXCLUDED.tokens",
                [(conversation, u.utterance_index, u.speaker, u.turn_number, u.timestamp,
                  u.text, u.tokens) for u in added])
            cur.execute(
                "INSERT INTO conversations VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT "
                "(name) DO UPDATE SET buffer_size = EXCLUDED.buffer_size, max_tokens = "
                "EXCLUDED.max_tokens, summary_token_limit = EXCLUDED.summary_token_limit, "
                "next_index = EXCLUDED.next_index, evicted = EXCLUDED.evicted, "
                "summary = EXCLUDED.summary, deleted = EXCLUDED.deleted",
                (conversation, config.buffer_size, config.max_tokens,
                 config.summary_token_limit, state.next_index, state.evicted, state.summary,
                 state.deleted))

    def conversations(self) -> list[str]:
        return [r[0] for r in self._store.query("SELECT name FROM conversations ORDER BY name")]

    def close(self) -> None:
        """The store owns the connections."""
