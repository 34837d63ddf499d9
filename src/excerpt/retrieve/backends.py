"""The ranking backend of a store: SQL for one that ranks in SQL (PostgreSQL), segments
otherwise.  Both backends import retrieve/access.py (the seam and what they share); this
factory imports them, so neither imports the other."""

from __future__ import annotations

from excerpt.retrieve.access import Access, SegmentAccess
from excerpt.settings import Settings
from excerpt.store.ann import AnnConfig
from excerpt.store.base import Store


def access_for(store: Store, settings: Settings) -> Access:
    """SQL ranking for a store that offers it (PostgreSQL), segments otherwise (probing their
    IVF indexes as ``settings`` say)."""
    if store.ranks_in_sql:  # imported here: an embedded store's search never loads the SQL
        from excerpt.retrieve.sql_access import SqlAccess

        walk = store if getattr(store, "dense_index", None) is not None else None
        return SqlAccess(store.query, walk)  # type: ignore[attr-defined, arg-type]
    return SegmentAccess(store, AnnConfig.from_settings(settings))
