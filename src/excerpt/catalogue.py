"""The catalogue: which snapshots and sets exist, as a principal may know them, and which
snapshots a read sees.

A caller learns a snapshot's id, source and counts only when it may see at least one of its
nodes, and the counts are of what it sees; a snapshot or set it may see nothing of is "not
found" with the very error a missing one gets, so nobody learns what exists beyond their rights.

Collections are known the same way: a caller's collections are those where it sees a node (all
of them with all access); a collection exists once one of its imports completed, so an import
interrupted before its first snapshot leaves none (every command says "no collection").  A
mistyped name is answered with the closest of THOSE names (``no collection 'bokks'; did you
mean 'books'?``), never with one it may not see.  Deleting a snapshot or a collection is the
store's one transaction (store/deletion.py): no half-deleted snapshot is ever visible.
"""

from __future__ import annotations

import difflib
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
        one of its nodes, with the counts of what it may see, and ``retired`` when a sync
        took its source out of the current view (its file was deleted); a set with only such
        members, and not at all when it has none."""
        if collection is not None and collection not in self.store.collections():
            raise self.missing_collection(collection, principal)
        snaps = self.store.snapshots(collection)
        counts = self.access.snapshot_counts(snaps, principal)
        if collection is not None and not counts and not principal.all_access:
            raise self.missing_collection(collection, principal)  # nothing it may see there
        sets = {name: [i for i in ids if i in counts]
                for name, ids in self.store.snapshot_sets(collection).items()}
        retired = {(name, source) for name in {s.collection for s in snaps}
                   for source in self.store.retired_sources(name)}
        return {
            "snapshots": [{**replace(s, documents=counts[s.snapshot_id][0],
                                     nodes=counts[s.snapshot_id][1],
                                     edges=counts[s.snapshot_id][2]).to_json(),
                           "retired": (s.collection, s.source) in retired}
                          for s in snaps if s.snapshot_id in counts],
            "sets": [{"name": n, "snapshot_ids": ids} for n, ids in sorted(sets.items()) if ids],
            **principal.describe(),
        }

    def visible_collections(self, principal: Principal) -> list[str]:
        """The collections ``principal`` may know: where it sees a node (every one with all
        access), sorted."""
        if principal.all_access:
            return self.store.collections()
        seen = self.access.snapshot_counts(self.store.snapshots(), principal)
        return sorted({s.collection for s in self.store.snapshots() if s.snapshot_id in seen})

    def missing_collection(self, name: str, principal: Principal | None) -> NotFoundError:
        """The error for a collection that is not there (or not for ``principal``), naming
        the closest collection the caller may see, if one is close."""
        known = self.visible_collections(principal or Principal.anonymous())
        hint = self.suggestion(name, principal) or (
            "; ingest something first" if not known else
            f"; the collections you may see: {', '.join(known[:8])}"
            + (", …" if len(known) > 8 else ""))
        return NotFoundError(f"no collection {name!r}{hint}")

    def suggestion(self, name: str, principal: Principal | None) -> str:
        """``; did you mean 'books'?`` for the collection ``principal`` may see closest to
        ``name`` (difflib's ratio at least 0.6), else ``""``."""
        known = self.visible_collections(principal or Principal.anonymous())
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        return f"; did you mean {close[0]!r}?" if close else ""

    def collections(self, principal: Principal) -> dict[str, Any]:
        """Each collection ``principal`` may know with what it sees there: its snapshots, and
        the documents and nodes of the latest snapshot of every source (what a read sees)."""
        snaps = self.store.snapshots()
        counts = self.access.snapshot_counts(snaps, principal)
        rows = []
        for name in self.visible_collections(principal):
            latest = {s.snapshot_id for s in self.store.latest_snapshots(name)}
            mine = [s.snapshot_id for s in snaps if s.collection == name
                    and s.snapshot_id in counts]
            rows.append({"name": name, "snapshots": len(mine),
                         "documents": sum(counts[i][0] for i in mine if i in latest),
                         "nodes": sum(counts[i][1] for i in mine if i in latest)})
        return {"collections": rows, **principal.describe()}

    def delete_snapshot(self, snapshot_id: str) -> dict[str, Any]:
        """Delete one snapshot whole (its sets lose it; a set left empty goes)."""
        info = self.store.snapshot(snapshot_id)
        self.store.delete_snapshots(info.collection, [snapshot_id])
        return {"deleted": "snapshot", "snapshot_id": snapshot_id,
                "collection": info.collection, "nodes": info.nodes}

    def delete_collection(self, name: str) -> dict[str, Any]:
        """Delete a collection with every snapshot and set of it, in one transaction."""
        if name not in self.store.collections():
            raise self.missing_collection(name, Principal.admin())
        ids = [s.snapshot_id for s in self.store.snapshots(name)]
        self.store.delete_snapshots(name, ids, drop_collection=True)
        return {"deleted": "collection", "collection": name, "snapshots": len(ids)}

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
        if not (filters.snapshot_id or filters.snapshot_set):
            latest = self.store.latest_snapshots(filters.collection)
            if latest:  # a snapshot's collection exists: one query, not two, per search
                return latest
        if filters.collection not in self.store.collections():
            raise self.missing_collection(filters.collection, principal)
        if filters.snapshot_id:
            missing = NotFoundError(f"no snapshot {filters.snapshot_id!r} in collection "
                                    f"{filters.collection!r}")
            infos = self._one(filters.snapshot_id, filters.collection, missing)
        elif filters.snapshot_set:
            missing = NotFoundError(f"no snapshot set {filters.snapshot_set!r} in collection "
                                    f"{filters.collection!r}")
            infos = self._set(filters.snapshot_set, filters.collection, missing)
        else:
            return []  # a collection with no live source
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
