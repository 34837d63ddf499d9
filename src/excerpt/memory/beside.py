"""Where conversations live beside a store: memory chooses, so a store knows nothing of
conversations (the store package imports no memory module; memory imports the stores).

The embedded store's home gets a file of its own, ``<home>/memory.db`` (several writer
processes are safe, each write being one ``BEGIN IMMEDIATE`` transaction); a PostgreSQL
store's conversations go in its database's tables (migration 002_memory), on its pool.
"""

from __future__ import annotations

from excerpt.errors import StoreError
from excerpt.memory.backends import MemoryBackend, SQLiteBackend
from excerpt.memory.pg_backend import PostgresMemoryBackend
from excerpt.store.base import Store
from excerpt.store.postgres import PostgresStore
from excerpt.store.sqlite import SQLiteStore


def backend_beside(store: Store) -> MemoryBackend:
    """The conversation backend kept with ``store`` (StoreError for a store of another kind:
    there is no place known to be shared by every process that uses it)."""
    if isinstance(store, SQLiteStore):
        return SQLiteBackend.at_home(store.home)
    if isinstance(store, PostgresStore):
        return PostgresMemoryBackend(store)
    raise StoreError(f"no conversation memory is kept beside a {type(store).__name__}")
