"""Conversation memory: a rolling buffer of utterances per conversation, a running extractive
summary of what it evicts, search, and swappable backends (in memory, durable SQLite).

>>> from excerpt.memory import MemoryStore, SQLiteBackend
>>> store = MemoryStore(SQLiteBackend.at_home(".excerpt"))      # doctest: +SKIP
>>> store.config("trip", buffer_size=5)                         # doctest: +SKIP
>>> store.add("trip", "user", 1, "Find me a hotel in Busan.")   # doctest: +SKIP
"""

from __future__ import annotations

from excerpt.memory.backends import (
    BACKENDS,
    MEMORY_DB,
    InMemoryBackend,
    MemoryBackend,
    SQLiteBackend,
    copy_into,
    open_backend,
)
from excerpt.memory.model import (
    SPEAKERS,
    ConversationConfig,
    ConversationState,
    ScoredUtterance,
    Utterance,
)
from excerpt.memory.store import MemoryStore
from excerpt.memory.summary import entity_retention, key_entities

__all__ = [
    "BACKENDS",
    "MEMORY_DB",
    "SPEAKERS",
    "ConversationConfig",
    "ConversationState",
    "InMemoryBackend",
    "MemoryBackend",
    "MemoryStore",
    "SQLiteBackend",
    "ScoredUtterance",
    "Utterance",
    "copy_into",
    "entity_retention",
    "key_entities",
    "open_backend",
]
