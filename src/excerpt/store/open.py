"""Which store backend a home or URL means."""

from __future__ import annotations

from pathlib import Path

from excerpt.errors import InputError
from excerpt.settings import Settings
from excerpt.store.base import Store

SCHEMES = ("postgresql://", "postgres://")


def open_store(home: Path, url: str | None = None, settings: Settings | None = None) -> Store:
    """PostgreSQL for a ``postgresql://`` URL (``home`` keeps the scratch files of imports being
    built; the setting ``pg_dense_index`` chooses the exact scan or the HNSW index), else the
    embedded store in ``home`` (mapping at most ``segment_open_files`` segment files)."""
    if url:
        if not url.startswith(SCHEMES):
            raise InputError(f"--store {url!r}: give a postgresql://user@host:port/db URL")
        from excerpt.store.pg_hnsw import hnsw_config
        from excerpt.store.postgres import PostgresStore

        given = settings or Settings()
        return PostgresStore(url, home, dense_index=hnsw_config(given.pg_dense_index,
                                                                given.pg_hnsw_ef_search))
    from excerpt.store.sqlite import SQLiteStore

    return SQLiteStore(home, (settings or Settings()).segment_open_files)
