"""Which store backend a home or URL means."""

from __future__ import annotations

from pathlib import Path

from excerpt.errors import InputError
from excerpt.store.base import Store

SCHEMES = ("postgresql://", "postgres://")


def open_store(home: Path, url: str | None = None) -> Store:
    """PostgreSQL for a ``postgresql://`` URL (``home`` keeps the scratch files of imports being
    built), else the embedded store in ``home``."""
    if url:
        if not url.startswith(SCHEMES):
            raise InputError(f"--store {url!r}: give a postgresql://user@host:port/db URL")
        from excerpt.store.postgres import PostgresStore

        return PostgresStore(url, home)
    from excerpt.store.sqlite import SQLiteStore

    return SQLiteStore(home)
