"""The ranking backend of a store, from how the store says its views are ranked
(``Store.ranking``, store/base.py): segments for the embedded store, SQL for PostgreSQL.
Both backends import retrieve/access.py (the seam and what they share); this factory imports
them, so neither imports the other, and the store imports none of them."""

from __future__ import annotations

from typing import assert_never

from excerpt.retrieve.access import Access, SegmentAccess
from excerpt.settings import Settings
from excerpt.store.ann import AnnConfig
from excerpt.store.base import InSql, OverSegments, Store


def access_for(store: Store, settings: Settings) -> Access:
    """The ``Access`` of ``store``'s ranking: every kind handled (mypy checks it), segments
    probing their IVF indexes as ``settings`` say."""
    ranking = store.ranking
    if isinstance(ranking, OverSegments):
        return SegmentAccess(ranking.store, AnnConfig.from_settings(settings))
    if isinstance(ranking, InSql):  # imported here: an embedded store's search never loads SQL
        from excerpt.retrieve.sql_access import SqlAccess

        return SqlAccess(ranking.rows, ranking.hnsw)
    assert_never(ranking)
