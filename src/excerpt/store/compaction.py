"""Segments that merge, in the embedded store (issue 30): where a snapshot's rows are kept.

A snapshot's ``segment`` column names the folder holding its rows: the segment its import
wrote (``run-<id>``), or, once merged, a merged segment (``merge-<id>``, store/merge.py) that
holds the rows of many snapshots. :meth:`SegmentMerges.merge` runs the tiered policy
(store/tiers.py) over a collection until it has nothing to merge; a sync calls it when its
pass ends, and so does ``excerpt merge``.

* **Atomic.** A merge writes its segment into ``segments/.merge-<pid>-<start>`` (a folder
  ``recover`` leaves alone while that process lives), then in one transaction records the
  merge, points its snapshots at the new folder and moves the folder into place (as
  ``publish`` does). A process killed before the commit leaves the old segments serving and
  a folder that the next ``recover`` removes; after it, the new one serving.
* **Readers are never cut off.** The folders a merge replaced are removed only
  ``GRACE_S`` after it (a query that opened them has long finished; each reader sees the
  move at its next query: ``segment_generation``).
* **Deleted snapshots' rows** stay in a merged segment (no view reads them) until the next
  merge that takes that segment drops them.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from excerpt.errors import StoreError
from excerpt.store.ann import AnnConfig
from excerpt.store.locks import process_started
from excerpt.store.merge import merge_segments
from excerpt.store.schema import now
from excerpt.store.segment import Segment
from excerpt.store.tiers import FACTOR, SegmentStat, next_merge

GRACE_S = 300.0
"""How long the folders a merge replaced stay on disk for readers still in them."""
MERGE_PREFIX = ".merge-"

Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


class SegmentMerges:
    """The embedded store's merges; mixed into :class:`~excerpt.store.sqlite.SQLiteStore`."""

    _segments: dict[str, Segment]
    _select: Callable[..., list[tuple[Any, ...]]]
    _transaction: Callable[[], AbstractContextManager[sqlite3.Connection]]
    _memo: Callable[..., list[Any]]
    maps: Any

    if TYPE_CHECKING:  # the store's (SQLiteStore)
        @property
        def segments_dir(self) -> Path: ...

    # -- where rows are -------------------------------------------------------------------------

    def _folders(self) -> dict[str, str]:
        """Snapshot id -> the folder holding its rows, read again when the database changes."""
        found = self._memo(("folders",), lambda: [dict(self._select(
            "SELECT id, segment FROM snapshots"))])
        folders: dict[str, str] = found[0]
        return folders

    @property
    def segment_generation(self) -> int:
        """Moves whenever a merge moves rows: a reader's cached view layout is then stale."""
        found = self._memo(("merges",), lambda: [self._select(
            "SELECT coalesce(max(id), 0) FROM segment_merges")[0][0]])
        return int(found[0])

    def _segment_in(self, folder: str, snapshot_id: str) -> Segment:
        seg = self._segments.get(folder)
        if seg is None:
            path = self.segments_dir / folder
            if not (path / "meta.json").exists():
                raise StoreError(f"segment of snapshot {snapshot_id!r} is missing at {path}")
            seg = self._segments.setdefault(folder, Segment(path, snapshot_id, self.maps))
        return seg

    # -- merging --------------------------------------------------------------------------------

    def merge(self, collection: str, ann: AnnConfig | None = None,
              progress: Progress | None = None, factor: int = FACTOR,
              tidy: bool = True) -> int:
        """Merge ``collection``'s segments until the policy has nothing to merge (store/tiers.py;
        ``tidy``: its small leftovers too); returns the number of merges. The caller holds the
        collection's sync lock."""
        progress = progress or _no_progress
        self.remove_replaced()
        merges = 0
        while batch := next_merge(self._stats(collection), factor, tidy=tidy):
            progress("merge", merges, merges + 1)
            self._merge_one(collection, batch, ann)
            merges += 1
            progress("merge", merges, merges)
        return merges

    def _stats(self, collection: str) -> list[SegmentStat]:
        live: dict[str, list[str]] = {}
        for sid, folder in self._select(
                "SELECT id, segment FROM snapshots WHERE collection = ?", (collection,)):
            live.setdefault(folder, []).append(sid)
        stats = []
        for folder, sids in live.items():
            seg = self._segment_in(folder, sids[0])
            if not seg.has_edges:
                continue  # written before segments held edges: its edges live in SQL only
            keep = set(sids)
            rows = sum(n for sid, _, n in seg.members if sid in keep)
            key = (seg.meta.get("analyzer"), seg.embed_model, int(seg.meta.get("dim") or 0),
                   seg.block_shift)
            stats.append(SegmentStat(folder, rows, key, seg.size - rows))
        return stats

    def _merge_one(self, collection: str, folders: Sequence[str],
                   ann: AnnConfig | None) -> None:
        marks = ",".join("?" * len(folders))
        holders: dict[str, list[str]] = {}
        for sid, folder in self._select(
                f"SELECT id, segment FROM snapshots WHERE segment IN ({marks})", tuple(folders)):
            holders.setdefault(folder, []).append(sid)
        if set(holders) != set(folders):
            return  # a segment lost its last snapshot meanwhile: the next pass sees it
        live = [sid for folder in folders for sid in holders[folder]]
        inputs = [self._segment_in(folder, holders[folder][0]) for folder in folders]
        staging = self.segments_dir / f"{MERGE_PREFIX}{os.getpid()}-{_started_ms()}"
        shutil.rmtree(staging, ignore_errors=True)
        merge_segments(staging, inputs, ann, kept=set(live))
        try:
            with self._transaction() as conn:
                merge_id = conn.execute(
                    "INSERT INTO segment_merges(collection, segment, replaced, snapshots, "
                    "merged_at) VALUES (?, '', ?, ?, ?)",
                    (collection, json.dumps(list(folders)), len(live), now())).lastrowid
                name = f"merge-{merge_id}"
                conn.execute("UPDATE segment_merges SET segment = ? WHERE id = ?",
                             (name, merge_id))
                moved = conn.executemany(
                    f"UPDATE snapshots SET segment = ? WHERE id = ? AND segment IN ({marks})",
                    [(name, sid, *folders) for sid in live]).rowcount
                if moved != len(live):  # another process merged or deleted meanwhile
                    raise _Raced
                os.replace(staging, self.segments_dir / name)
        except _Raced:
            shutil.rmtree(staging, ignore_errors=True)

    def remove_replaced(self, grace_s: float = GRACE_S) -> None:
        """Remove the folders merges replaced ``grace_s`` ago or more (none a snapshot names)."""
        cutoff = time.time() - grace_s
        due = [(merge_id, json.loads(replaced)) for merge_id, replaced, at in self._select(
            "SELECT id, replaced, merged_at FROM segment_merges WHERE removed = 0")
            if _epoch(at) <= cutoff]
        if not due:
            return
        named = {folder for (folder,) in self._select("SELECT DISTINCT segment FROM snapshots")}
        for folder in {f for _, replaced in due for f in replaced} - named:
            gone = self._segments.pop(folder, None)
            if gone is not None:
                gone.close()
            shutil.rmtree(self.segments_dir / folder, ignore_errors=True)
        with self._transaction() as conn:
            conn.executemany("UPDATE segment_merges SET removed = 1 WHERE id = ?",
                             [(merge_id,) for merge_id, _ in due])

    def kept_folders(self) -> set[str]:
        """Folders ``recover`` must leave: replaced by a merge within ``GRACE_S``, or a merge
        being written by a live process."""
        cutoff = time.time() - GRACE_S
        kept = {folder for replaced, at in self._select(
            "SELECT replaced, merged_at FROM segment_merges WHERE removed = 0")
            if _epoch(at) > cutoff for folder in json.loads(replaced)}
        for entry in _merging(self.segments_dir):
            pid, started = entry.name[len(MERGE_PREFIX):].split("-")[:2]
            if abs(_started_ms(int(pid)) - int(started)) <= 1:
                kept.add(entry.name)
        return kept


class _Raced(Exception):
    """The snapshots a merge took moved or went before it committed: it is dropped."""


def _merging(folder: Path) -> Iterator[Path]:
    return (e for e in folder.iterdir() if e.name.startswith(MERGE_PREFIX)
            and e.name[len(MERGE_PREFIX):].split("-")[0].isdigit())


def _started_ms(pid: int | None = None) -> int:
    """When process ``pid`` (this one by default) started, in ms; -1 when it is gone."""
    started = process_started(pid or os.getpid())
    return -1 if started < 0 else int(started * 1000)


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()
