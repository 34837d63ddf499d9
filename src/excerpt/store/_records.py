"""The system-of-record reads both stores answer with the same SQL.

A backend gives :meth:`RecordQueries._select` (``?`` placeholders; PostgreSQL rewrites them)
and the column lists whose spelling differs (timestamps are text in SQLite and formatted from
``timestamptz`` in PostgreSQL); everything else here is shared, so the two stores cannot drift
apart on runs, snapshots, sets, edges, evaluation runs or migrations.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from excerpt.errors import NotFoundError
from excerpt.store.base import RAN_WITH_ALL_ACCESS, RunInfo, SnapshotInfo, eval_header

RUN_FIELDS = ("id", "collection", "source", "format", "status", "started_at", "finished_at",
              "seconds", "documents", "nodes", "edges", "errors", "message", "snapshot_id")
SNAPSHOT_FIELDS = ("id", "collection", "source", "run_id", "created_at", "status", "documents",
                   "nodes", "edges", "name", "embed_model")


def decoded(value: Any) -> Any:
    """A JSON column as Python: SQLite hands back its text, PostgreSQL the parsed value."""
    return json.loads(value) if isinstance(value, str) else value


class RecordQueries:
    """Reads of runs, snapshots, sets, edges, evaluation runs and migrations."""

    RUN_COLUMNS = ", ".join(RUN_FIELDS)
    SNAPSHOT_COLUMNS = ", ".join(SNAPSHOT_FIELDS)
    CREATED_AT = "created_at"
    PRINCIPAL = "json_extract(data, '$.principal')"  # the run's principal, not its whole data

    def _select(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    # -- import runs ----------------------------------------------------------------------------

    def run(self, run_id: int) -> RunInfo:
        runs = self._runs("WHERE id = ?", (run_id,))
        if not runs:
            raise NotFoundError(f"no import run {run_id}")
        return runs[0]

    def runs(self, collection: str | None = None) -> list[RunInfo]:
        if collection is None:
            return self._runs("", ())
        return self._runs("WHERE collection = ?", (collection,))

    def _runs(self, where: str, args: tuple[Any, ...]) -> list[RunInfo]:
        rows = self._select(f"SELECT {self.RUN_COLUMNS} FROM import_runs {where} ORDER BY id",
                            args)
        return [RunInfo(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
                        decoded(r[11]), r[12], r[13]) for r in rows]

    # -- snapshots and sets ---------------------------------------------------------------------

    def collections(self) -> list[str]:
        """Collections with a snapshot: the row an import run adds when it begins is not a
        collection until the run publishes (an interrupted first import leaves none)."""
        return [r[0] for r in self._select(
            "SELECT name FROM collections c WHERE EXISTS (SELECT 1 FROM snapshots s "
            "WHERE s.collection = c.name) ORDER BY name")]

    def _snapshots(self, where: str, args: tuple[Any, ...]) -> list[SnapshotInfo]:
        rows = self._select(
            f"SELECT {self.SNAPSHOT_COLUMNS} FROM snapshots {where} ORDER BY run_id", args)
        return [SnapshotInfo(*r) for r in rows]

    def snapshots(self, collection: str | None = None) -> list[SnapshotInfo]:
        if collection is None:
            return self._snapshots("", ())
        return self._snapshots("WHERE collection = ?", (collection,))

    def snapshot(self, snapshot_id: str) -> SnapshotInfo:
        found = self._snapshots("WHERE id = ?", (snapshot_id,))
        if not found:
            raise NotFoundError(f"no snapshot {snapshot_id!r}")
        return found[0]

    def latest_snapshots(self, collection: str) -> list[SnapshotInfo]:
        """The default read view: the latest completed snapshot of every source."""
        return self._snapshots(
            "WHERE collection = ? AND run_id = (SELECT MAX(s2.run_id) FROM snapshots s2 "
            "WHERE s2.collection = snapshots.collection AND s2.source = snapshots.source)",
            (collection,))

    def snapshot_set(self, collection: str, name: str) -> list[str]:
        sets = self.snapshot_sets(collection)
        if name not in sets:
            raise NotFoundError(f"no snapshot set {name!r} in collection {collection!r}")
        return sets[name]

    def snapshot_sets(self, collection: str | None = None) -> dict[str, list[str]]:
        where, args = ("WHERE s.collection = ?", (collection,)) if collection else ("", ())
        rows = self._select(
            "SELECT s.name, m.snapshot_id FROM snapshot_sets s LEFT JOIN snapshot_set_members m "
            f"ON m.collection = s.collection AND m.set_name = s.name {where} "
            "ORDER BY s.name, m.position", args)
        out: dict[str, list[str]] = {}
        for name, sid in rows:
            out.setdefault(name, [])
            if sid is not None:
                out[name].append(sid)
        return out

    # -- content --------------------------------------------------------------------------------

    def edge_triples(self, snapshot_id: str) -> list[tuple[str, str, str]]:
        """(from_id, relation, to_id) of every edge, sorted; what graph expansion reads."""
        rows = self._select("SELECT DISTINCT from_id, relation, to_id FROM edges WHERE "
                            "snapshot_id = ? ORDER BY from_id, relation, to_id", (snapshot_id,))
        return [(r[0], r[1], r[2]) for r in rows]

    def node_documents(self, snapshot_id: str) -> list[str]:
        """The document id of every node, in ordinal order (counting what a caller sees)."""
        return [r[0] for r in self._select(
            "SELECT document_id FROM nodes WHERE snapshot_id = ? ORDER BY ordinal",
            (snapshot_id,))]

    def edge_sources(self, snapshot_id: str) -> list[str]:
        """The from_id of every edge (one per edge, repeats kept)."""
        return [r[0] for r in self._select("SELECT from_id FROM edges WHERE snapshot_id = ?",
                                           (snapshot_id,))]

    # -- evaluation runs and migrations ---------------------------------------------------------

    def eval_runs(self) -> list[dict[str, Any]]:
        rows = self._select(f"SELECT id, {self.CREATED_AT}, kind, dataset, collection, mode, "
                            f"summary, {self.PRINCIPAL} FROM eval_runs ORDER BY id")
        return [eval_header(r[:6], decoded(r[6]), decoded(r[7]) if r[7] else None)
                for r in rows]

    def eval_run(self, run_id: int) -> dict[str, Any]:
        rows = self._select(f"SELECT id, {self.CREATED_AT}, data FROM eval_runs WHERE id = ?",
                            (run_id,))
        if not rows:
            raise NotFoundError(f"no evaluation run {run_id}")
        data = decoded(rows[0][2])
        return {"id": rows[0][0], "created_at": rows[0][1],
                "principal": dict(RAN_WITH_ALL_ACCESS), **data}


    def migrations(self) -> list[str]:
        """Names of the schema migrations applied, in order."""
        return [r[0] for r in self._select("SELECT name FROM migrations ORDER BY name")]
