"""The store interface: what the engine needs from a system of record.

Two backends implement it: the embedded store (`SQLiteStore`, SQLite + memory-mapped numpy
segments) and PostgreSQL + pgvector (`PostgresStore`: the same tables, a segment's postings
and vectors as rows). :class:`Store` is the union of small roles, so a caller that needs one
says so in its annotation: :class:`ImportRuns` (writing), :class:`SnapshotRecords` (the
catalogue), :class:`NodeReads`, :class:`VectorStoreCache` and :class:`EvalRecords`. The
embedded store plays one more, :class:`Segments`, which a store ranking in SQL has no use
for; each store says how its views are ranked (:data:`Ranking`), and the retrieval layer
hands out the matching ``Access`` from that (retrieve/backends.py). Conversations are not a
store's: excerpt.memory chooses where they live beside it (memory/beside.py).

Every read takes the principal-free ids of snapshots; security is applied by the retrieval
layer on the segments' masks or in SQL and, for node fetches, by their callers through
`Principal.can_see`.

Lifecycle of an import run (atomic ingestion, HOUSE.md):
    begin_run -> (build outside the store) -> publish (one transaction: snapshot, nodes, edges,
    segment folder moved into place, run completed)  |  fail_run
A run left 'running' by a dead process is marked 'abandoned' when the store is next opened, and
its half-built segment is removed; nothing of it was ever visible.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from excerpt.store.segment import Segment
from excerpt.types import Document, Edge, IngestIssue, Node, Principal

if TYPE_CHECKING:
    from excerpt.store.ann import AnnConfig
    from excerpt.store.pg_hnsw import HnswConfig


@dataclass(frozen=True)
class SnapshotInfo:
    snapshot_id: str
    collection: str
    source: str
    run_id: int
    created_at: str
    status: str
    documents: int
    nodes: int
    edges: int
    name: str | None = None
    embed_model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "collection": self.collection,
            "source": self.source,
            "created_at": self.created_at,
            "status": self.status,
            "documents": self.documents,
            "nodes": self.nodes,
            "edges": self.edges,
            "name": self.name,
            "embed_model": self.embed_model,
        }


_Item = TypeVar("_Item")


class ViewKey:
    """What identifies a view: its snapshots' ids, sorted; hashed once (a view of 10,000
    synced files would hash 10,000 ids at every read)."""

    __slots__ = ("_hash", "ids")

    def __init__(self, ids: tuple[str, ...]) -> None:
        self.ids = ids
        self._hash = hash(ids)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, ViewKey) and self._hash == other._hash
                                 and self.ids == other.ids)

    def __len__(self) -> int:
        return len(self.ids)


class SharedList(list[_Item]):
    """A list shared by every read until the database changes (a view of 10,000 synced files
    would copy 10,000 items at every read), so read-only: changing one raises TypeError
    (copy it: ``list(...)``). Equal to, and serialised as, a list."""

    def _shared(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("this list is shared by every read: copy it first (list(...))")

    append = extend = insert = remove = pop = clear = sort = reverse = _shared
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _shared


class SnapshotList(SharedList["SnapshotInfo"]):
    """Snapshots as a store resolved a view from them (shared, read-only), with the view's
    key (:func:`view_key`), computed once."""

    _key: ViewKey | None = None

    def key(self) -> ViewKey:
        if self._key is None:
            self._key = ViewKey(tuple(sorted(s.snapshot_id for s in self)))
        return self._key


def view_key(snapshots: Sequence[SnapshotInfo]) -> ViewKey:
    """What identifies the view of ``snapshots``: their ids, sorted."""
    if isinstance(snapshots, SnapshotList):
        return snapshots.key()
    return ViewKey(tuple(sorted(s.snapshot_id for s in snapshots)))


@dataclass(frozen=True)
class SourceState:
    """A live source's latest snapshot and the content hash it was built from (None for a
    snapshot published before hashes were stored, or by a caller that gave none): what
    ``excerpt sync`` compares a file with (store/sources.py)."""

    snapshot_id: str
    content_hash: str | None


@dataclass(frozen=True)
class RunInfo:
    run_id: int
    collection: str
    source: str
    format: str
    status: str
    started_at: str
    finished_at: str | None
    seconds: float | None
    documents: int
    nodes: int
    edges: int
    errors: list[dict[str, Any]]
    message: str | None
    snapshot_id: str | None


@dataclass
class SnapshotPayload:
    """Everything an import run publishes; nodes are in segment ordinal order (sorted by id)."""

    collection: str
    source: str
    documents: list[Document]
    nodes: list[Node]
    edges: list[Edge]
    errors: list[IngestIssue]
    segment_dir: Path
    snapshot_id: str | None = None
    name: str | None = None
    embed_model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    content_hash: str | None = None
    """sha256 of what the snapshot was built from (files and import options), stored with it:
    an import of the same content into the same source is then a no-op (excerpt sync)."""


RAN_WITH_ALL_ACCESS = {"all_access": True}
"""The principal of a run stored before runs named theirs: evaluations then saw everything."""


def eval_header(columns: Sequence[Any], summary: Mapping[str, Any],
                principal: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A stored evaluation run's header, from (id, created_at, kind, dataset, collection,
    mode), its summary and the principal it ran as."""
    keys = ("id", "created_at", "kind", "dataset", "collection", "mode")
    return {**dict(zip(keys, columns, strict=True)),
            "principal": dict(principal or RAN_WITH_ALL_ACCESS), "summary": dict(summary)}


def set_members(store: SnapshotRecords, collection: str, name: str,
                snapshot_ids: Sequence[str]) -> list[str]:
    """The members a new set ``name`` may have: ``snapshot_ids`` once each, in order, every one
    an existing snapshot of ``collection`` (InputError / NotFoundError otherwise)."""
    from excerpt.errors import InputError

    if not name.strip():
        raise InputError("a snapshot set needs a non-empty name")
    if not snapshot_ids:
        raise InputError("a snapshot set needs at least one snapshot id")
    for sid in snapshot_ids:
        info = store.snapshot(sid)
        if info.collection != collection:
            raise InputError(f"snapshot {sid!r} belongs to collection {info.collection!r}, "
                             f"not {collection!r}")
    return list(dict.fromkeys(snapshot_ids))


# -- the store's roles: a caller that needs one annotates with it ------------------------------


class ImportRuns(Protocol):
    """What writes a collection: an import run's lifecycle (module docstring), the lock that
    makes a collection's syncs take turns, and merging what runs wrote."""

    def begin_run(self, collection: str, source: str, fmt: str) -> int: ...

    def staging_dir(self, run_id: int) -> Path: ...

    def publish(self, run_id: int, payload: SnapshotPayload, seconds: float) -> SnapshotInfo: ...

    def fail_run(
        self, run_id: int, message: str, errors: Sequence[IngestIssue], seconds: float
    ) -> None: ...

    def run(self, run_id: int) -> RunInfo: ...

    def runs(self, collection: str | None = None) -> list[RunInfo]: ...

    def sync_lock(self, collection: str, wait: bool,
                  on_wait: Callable[[str], None] | None = None
                  ) -> AbstractContextManager[None]:
        """Held by a sync of ``collection`` for its whole pass (store/locks.py): a second one
        waits (``on_wait`` told whom for) or, with ``wait`` false, raises BusyError."""
        ...

    def merge(self, collection: str, ann: AnnConfig | None = None,
              progress: Callable[[str, int, int], None] | None = None,
              factor: int = 10, tidy: bool = True) -> int:
        """Merge ``collection``'s small segments (store/compaction.py; ``tidy``: the small
        ones a pass leaves too); the merges run (0 for a store that keeps rows, not
        segments)."""
        ...


class SnapshotRecords(Protocol):
    """The catalogue: collections, snapshots, the latest view of live sources, sets, and the
    schema's migrations."""

    applied_now: list[str]
    """The migrations this store's opening applied (`excerpt migrate` reports them)."""

    def collections(self) -> list[str]: ...

    def snapshots(self, collection: str | None = None) -> list[SnapshotInfo]: ...

    def snapshot(self, snapshot_id: str) -> SnapshotInfo: ...

    def latest_snapshots(self, collection: str) -> list[SnapshotInfo]:
        """The default read view: the latest snapshot of every source not retired."""
        ...

    def source_states(self, collection: str) -> dict[str, SourceState]:
        """Every live source of ``collection``: its latest snapshot and content hash."""
        ...

    def retire_sources(self, collection: str, sources: Sequence[str]) -> None:
        """Take ``sources`` out of the latest view in one transaction; their snapshots stay
        (history), and a new snapshot of one makes it live again (store/sources.py)."""
        ...

    def retired_sources(self, collection: str) -> list[str]:
        """The retired sources of ``collection``, sorted."""
        ...

    def create_set(self, collection: str, name: str, snapshot_ids: Sequence[str]) -> None: ...

    def delete_snapshots(self, collection: str, snapshot_ids: Sequence[str],
                         drop_collection: bool = False) -> None:
        """Delete these snapshots of ``collection`` (with ``drop_collection``, the collection
        too) all or nothing (store/deletion.py)."""
        ...

    def snapshot_set(self, collection: str, name: str) -> list[str]: ...

    def snapshot_sets(self, collection: str | None = None) -> dict[str, list[str]]: ...

    def migrations(self) -> list[str]:
        """Names of the schema migrations applied, in order."""
        ...


class NodeReads(Protocol):
    """A snapshot's nodes and edges as stored, by ordinal (its node order) or id; none of these
    applies rights: their callers do (``Principal.can_see``, :meth:`visible_rows`)."""

    def nodes_by_ordinal(self, snapshot_id: str, ordinals: Sequence[int]) -> list[Node]: ...

    def nodes_at(self, places: Sequence[tuple[str, int]]) -> list[Node]:
        """Nodes at (snapshot id, ordinal) ``places``, in their order, in one read (every one
        must exist): a search's hits in a merged segment belong to many snapshots."""
        ...

    def nodes_by_id(self, snapshot_id: str, ids: Sequence[str]) -> list[Node]: ...

    def metadata_ordinals(self, snapshot_id: str, key: str, value: Any) -> list[int]: ...

    def visible_rows(self, snapshot_id: str, principal: Principal) -> npt.NDArray[np.bool_]:
        """What ``principal`` may see of the snapshot's nodes, in ordinal order: for a caller
        that reads a whole snapshot (an edition compare), on either store."""
        ...

    def edges(self, snapshot_id: str) -> list[Edge]: ...

    def node_documents(self, snapshot_id: str) -> list[str]:
        """The document id of every node, in ordinal order."""
        ...

    def edge_sources(self, snapshot_id: str) -> list[str]:
        """The from_id of every edge (one per edge)."""
        ...

    def edge_triples(self, snapshot_id: str) -> list[tuple[str, str, str]]:
        """(from_id, relation, to_id) of every edge, sorted; what graph expansion reads."""
        ...


class VectorStoreCache(Protocol):
    """Embeddings kept by (model, text hash), so a re-import embeds only new text."""

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]: ...

    def put_many(self, model: str, items: Mapping[str, npt.NDArray[np.float32]]) -> None: ...


class EvalRecords(Protocol):
    """Evaluation runs and pipeline traces, kept where the store keeps records."""

    def record_trace(self, trace: dict[str, Any]) -> None:
        """Keep a pipeline trace where the store keeps them, if it does (the files under
        log_dir are written either way)."""
        ...

    def save_eval_run(self, record: Mapping[str, Any]) -> int:
        """Keep one evaluation run (excerpt.evaluate.runs); its new id."""
        ...

    def eval_runs(self) -> list[dict[str, Any]]:
        """Every stored run's header (id, created_at, kind, dataset, collection, mode,
        summary), oldest first."""
        ...

    def eval_run(self, run_id: int) -> dict[str, Any]:
        """One stored run, whole (NotFoundError when there is none)."""
        ...


class Segments(Protocol):
    """The embedded store's own role: rows kept in segment files the engine ranks over. A
    store that ranks in its database has none, so this is not part of :class:`Store`."""

    @property
    def segment_generation(self) -> int:
        """Moves whenever a merge moves snapshots' rows to another segment."""
        ...

    def segment(self, snapshot_id: str) -> Segment: ...

    def segments(self, snapshot_ids: Sequence[str]) -> list[Segment]:
        """:meth:`segment` of each of ``snapshot_ids``, looked up together (a view of 10,000
        synced files asks for 10,000)."""
        ...


class SegmentedStore(NodeReads, Segments, Protocol):
    """What ranking over segments reads (retrieve/access.py ``SegmentAccess``): the segments,
    and the nodes, edges and metadata they do not hold."""


Rows = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
"""Runs one query and returns its rows (a PostgreSQL store's pooled connection)."""


class HnswSearch(Protocol):
    """What an index walk needs: the index's settings and a query run after ``SET LOCAL``s
    (PostgresStore)."""

    @property
    def dense_index(self) -> HnswConfig | None: ...

    def query_with(self, settings: Sequence[str], sql: str,
                   args: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


@dataclass(frozen=True)
class OverSegments:
    """The engine ranks over ``store``'s memory-mapped segments (numpy, faiss)."""

    store: SegmentedStore


@dataclass(frozen=True)
class InSql:
    """The database ranks (retrieve/sql.py): ``rows`` runs its queries; ``hnsw``, when set,
    is what semantic search walks instead of scanning every vector."""

    rows: Rows
    hnsw: HnswSearch | None = None


Ranking = OverSegments | InSql
"""How a store's views are ranked, with what that ranking reads: retrieve/backends.py hands
out the matching ``Access`` by this type (every case handled), so the store never imports the
retrieval code and the retrieval code needs no flag or attribute probe."""


class Store(ImportRuns, SnapshotRecords, NodeReads, VectorStoreCache, EvalRecords, Protocol):
    """The system of record: every role a store plays (a caller that needs one annotates with
    it). Methods raise `excerpt.errors` types, never backend exceptions."""

    @property
    def ranking(self) -> Ranking:
        """How this store's views are ranked (:data:`Ranking`)."""
        ...

    def close(self) -> None: ...
