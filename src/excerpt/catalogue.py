"""The catalogue: which snapshots and sets exist, as a principal may know them, and which
snapshots a read sees.

A caller learns a snapshot's id, source and counts only when it may see at least one of its
nodes, and the counts are of what it sees; a snapshot or set it may see nothing of is "not
found" with the very error a missing one gets, so nobody learns what exists beyond their rights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from excerpt.errors import InputError, NotFoundError
from excerpt.retrieve.access import Access
from excerpt.store.base import SnapshotInfo, Store
from excerpt.types import Filters, Principal

__all__ = ["Catalogue"]


class Catalogue:
    def __init__(self, store: Store, access: Access) -> None:
        self.store = store
        self.access = access

    def listing(self, collection: str | None, principal: Principal) -> dict[str, Any]:
        """Snapshots and sets as ``principal`` may know them: a snapshot only when it may see
        one of its nodes, with the counts of what it may see; a set with only such members,
        and not at all when it has none."""
        snaps = self.store.snapshots(collection)
        counts = self.access.snapshot_counts(snaps, principal)
        sets = {name: [i for i in ids if i in counts]
                for name, ids in self.store.snapshot_sets(collection).items()}
        return {
            "snapshots": [replace(s, documents=counts[s.snapshot_id][0],
                                  nodes=counts[s.snapshot_id][1],
                                  edges=counts[s.snapshot_id][2]).to_json()
                          for s in snaps if s.snapshot_id in counts],
            "sets": [{"name": n, "snapshot_ids": ids} for n, ids in sorted(sets.items()) if ids],
            **principal.describe(),
        }

    def create_set(self, name: str, snapshot_ids: Sequence[str],
                   collection: str) -> dict[str, Any]:
        self.store.create_set(collection, name, snapshot_ids)
        return {"name": name, "snapshot_ids": self.store.snapshot_set(collection, name)}

    def resolve(self, filters: Filters, principal: Principal | None = None
                ) -> list[SnapshotInfo]:
        """The snapshots a read sees: one, a named set, or the latest of every source. Given a
        principal, a snapshot or set of which it may see no node is absent to it."""
        if filters.snapshot_id and filters.snapshot_set:
            raise InputError("give either a snapshot or a snapshot set, not both")
        if filters.collection not in self.store.collections():
            raise NotFoundError(f"no collection {filters.collection!r}; ingest something first")
        if filters.snapshot_id:
            missing = NotFoundError(f"no snapshot {filters.snapshot_id!r} in collection "
                                    f"{filters.collection!r}")
            infos = self._one(filters.snapshot_id, filters.collection, missing)
        elif filters.snapshot_set:
            missing = NotFoundError(f"no snapshot set {filters.snapshot_set!r} in collection "
                                    f"{filters.collection!r}")
            infos = self._set(filters.snapshot_set, filters.collection, missing)
        else:
            return self.store.latest_snapshots(filters.collection)
        if principal is not None and not self.access.seen_snapshots(infos, principal):
            raise missing
        return infos

    def _one(self, snapshot_id: str, collection: str,
             missing: NotFoundError) -> list[SnapshotInfo]:
        try:
            info = self.store.snapshot(snapshot_id)
        except NotFoundError:
            raise missing from None
        if info.collection != collection:
            raise missing
        return [info]

    def _set(self, name: str, collection: str, missing: NotFoundError) -> list[SnapshotInfo]:
        try:
            ids = self.store.snapshot_set(collection, name)
        except NotFoundError:
            raise missing from None
        return [self.store.snapshot(i) for i in ids]
