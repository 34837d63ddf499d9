"""Sources as ``excerpt sync`` keeps them: the latest view without retired sources, and the
content hash each source's latest snapshot was built from; the same SQL on both stores.

A source is *retired* when the file it mirrors is deleted: a row in ``retired_sources`` takes
it out of the latest view (what a read sees by default) while its snapshots stay, readable by
id or set, as history. Publishing a new snapshot of the source removes the row in the same
transaction, so a file that comes back is live again exactly when its new snapshot is.

The content hash (sha256, ``pipeline.content_hash``) is stored on the snapshot in the
publishing transaction: what the store says a source was built from is never ahead of or
behind what it holds, so comparing against it is enough to skip an unchanged file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from excerpt.store.base import SnapshotInfo, SourceState

__all__ = ["LATEST_VIEW", "SourceRecords", "SourceState"]

LATEST_VIEW = (
    "WHERE collection = ? AND run_id = (SELECT MAX(s2.run_id) FROM snapshots s2 "
    "WHERE s2.collection = snapshots.collection AND s2.source = snapshots.source) "
    "AND NOT EXISTS (SELECT 1 FROM retired_sources r WHERE r.collection = snapshots.collection "
    "AND r.source = snapshots.source)"
)
"""The latest completed snapshot of every source of a collection that is not retired."""




class SourceRecords:
    """The reads of sources; a backend gives ``_select`` and ``_snapshots`` (RecordQueries)."""

    if TYPE_CHECKING:  # given by RecordQueries, which comes after this class in the MRO
        def _select(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

        def _snapshots(self, where: str, args: tuple[Any, ...]) -> list[SnapshotInfo]: ...

    def latest_snapshots(self, collection: str) -> list[SnapshotInfo]:
        """The default read view: the latest completed snapshot of every live source."""
        return self._snapshots(LATEST_VIEW, (collection,))

    def source_states(self, collection: str) -> dict[str, SourceState]:
        """Every live source of ``collection`` with its latest snapshot's id and hash; one
        query, so a sync of a thousand unchanged files reads the store once."""
        rows = self._select(f"SELECT source, id, content_hash FROM snapshots {LATEST_VIEW}",
                            (collection,))
        return {r[0]: SourceState(r[1], r[2]) for r in rows}

    def retired_sources(self, collection: str) -> list[str]:
        """The retired sources of ``collection``, sorted."""
        return [r[0] for r in self._select(
            "SELECT source FROM retired_sources WHERE collection = ? ORDER BY source",
            (collection,))]
