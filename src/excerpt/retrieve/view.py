"""A read view: the segments a query may read, each with the mask of nodes it may see.

The mask combines the principal's rights and the metadata filters, and it is applied before any
score is computed: an invisible node contributes nothing, not even to BM25 statistics.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from excerpt.store.base import SegmentedStore, SharedList, SnapshotInfo
from excerpt.store.segment import BoolArray, Segment
from excerpt.types import Principal


@dataclass(frozen=True)
class ViewPart:
    """One segment of a view: the rows of the view's snapshots it holds (a segment written by
    one import holds one snapshot; a merged one, store/merge.py, many), masked."""

    infos: tuple[SnapshotInfo, ...]
    """The view's snapshots with rows here, in row order."""
    segment: Segment
    mask: BoolArray
    """Rows the query may read: the view's snapshots' rows (shadowed copies out), the
    caller's rights and the metadata filters."""
    visible: int
    visible_length: float
    seen_ids: frozenset[str] | None = None
    """The snapshots of :attr:`infos` the caller may see any node of (its rights alone, before
    metadata filters): only those are ever named to it (listings, filters, traces, notes);
    None: all of them."""
    present: BoolArray | None = None
    """Rows of :attr:`infos` (shadowed copies out), whoever reads; None: every row."""
    firsts: tuple[int, ...] = (0,)
    """The first row of each of :attr:`infos`."""
    rows: int = -1
    """How many rows :attr:`present` holds (-1: every row of the segment): when
    :attr:`visible` equals it, the caller reads every row of the view here, and the view's
    BM25 statistics do not depend on who asks."""

    @property
    def whole(self) -> bool:
        """Whether the caller reads every row the view has here (no rights or filter hides one)."""
        return self.visible == (self.segment.size if self.rows < 0 else self.rows)

    @property
    def seen(self) -> bool:
        return self.seen_ids is None or bool(self.seen_ids)

    @property
    def seen_infos(self) -> list[SnapshotInfo]:
        return [i for i in self.infos if self.seen_ids is None or i.snapshot_id in self.seen_ids]

    @property
    def embed_model(self) -> str | None:
        return self.segment.embed_model

    def info_at(self, ordinal: int) -> SnapshotInfo:
        """The snapshot whose row ``ordinal`` is."""
        return self.infos[bisect_right(self.firsts, ordinal) - 1]

    def local(self, ordinal: int) -> tuple[str, int]:
        """(snapshot id, the node's ordinal in that snapshot) of row ``ordinal``: how the store
        keeps the node (its ``nodes_by_ordinal``)."""
        at = bisect_right(self.firsts, ordinal) - 1
        return self.infos[at].snapshot_id, ordinal - self.firsts[at]

    def row(self, node_id: str) -> int | None:
        """The row holding ``node_id`` among this part's snapshots (shadowed copies out),
        visible to the caller or not; None when none does."""
        found = self.segment.ordinal_of.get(node_id)
        if found is None or self.present is None or self.present[found]:
            return found
        return next((o for o in self.segment.repeated.get(node_id, ()) if self.present[o]),
                    None)


class Candidate(NamedTuple):
    """A ranked node before it is fetched: which part, which ordinal, its id and score.

    A NamedTuple because a query builds thousands of them (5x cheaper than a frozen dataclass).
    """

    part: int
    ordinal: int
    id: str
    score: float


class View:
    def __init__(self, parts: Sequence[ViewPart],
                 order: Sequence[SnapshotInfo] | None = None,
                 seen: tuple[list[SnapshotInfo], list[str]] | None = None) -> None:
        self.parts = list(parts)
        self.order = order if order is not None else [i for p in parts for i in p.infos]
        """The view's snapshots in the order they were given."""
        self._seen = None if seen is None else seen[0]
        self._seen_ids = None if seen is None else seen[1]
        self.approximate: list[int] = []
        """Parts whose dense ranking came from their segment's IVF index in this search."""
        # Read several times per query: summed once (parts do not change).
        self.visible = sum(p.visible for p in self.parts)
        total = sum(p.visible_length for p in self.parts)
        self.avg_length = total / self.visible if self.visible else 0.0

    @property
    def seen(self) -> list[SnapshotInfo]:
        """The view's snapshots the caller may know of (see :attr:`ViewPart.seen_ids`), in the
        order they were given (computed once per view layout and caller: :class:`Layout`)."""
        if self._seen is None:
            self._seen = seen_in_order(self.parts, self.order)
        return self._seen

    @property
    def seen_ids(self) -> list[str]:
        """The ids of :attr:`seen` (kept with the layout: shared and read-only, SharedList)."""
        if self._seen_ids is None:
            self._seen_ids = SharedList(i.snapshot_id for i in self.seen)
        return self._seen_ids


def seen_in_order(parts: Sequence[ViewPart], order: Sequence[SnapshotInfo]
                  ) -> list[SnapshotInfo]:
    if all(p.seen_ids is None for p in parts):
        return list(order)
    seen = {i.snapshot_id for p in parts for i in p.seen_infos}
    return [i for i in order if i.snapshot_id in seen]


Shadows = dict[str, BoolArray]
"""Per snapshot of a view, which of its nodes (its own rows, in order) a later import in the
view shadows."""


@dataclass
class Group:
    """The view's snapshots held by one segment, with what does not depend on the caller
    (:attr:`present`) and, per principal, what does (:meth:`for_principal`): computed once per
    view (retrieve/access.py keeps the layout), so that a query over a segment of 10,000 synced
    files costs what one over a segment of one import does."""

    segment: Segment
    infos: tuple[SnapshotInfo, ...]
    firsts: tuple[int, ...]
    present: BoolArray | None
    rows: int = -1
    """:attr:`present`'s count (-1: every row)."""
    _per_principal: dict[Principal, tuple[BoolArray, int, float, frozenset[str] | None]] = field(
        default_factory=dict)

    def for_principal(self, principal: Principal
                      ) -> tuple[BoolArray, int, float, frozenset[str] | None]:
        """(mask, visible rows, their length, the snapshots it sees) for ``principal``."""
        found = self._per_principal.get(principal)
        if found is None:
            found = self._compute(principal)
            if len(self._per_principal) >= PRINCIPALS_KEPT:
                self._per_principal.pop(next(iter(self._per_principal)))
            self._per_principal[principal] = found
        return found

    def _compute(self, principal: Principal
                 ) -> tuple[BoolArray, int, float, frozenset[str] | None]:
        seg, rights = self.segment, self.segment.visible(principal)
        if self.present is None:
            visible, length = seg.visible_stats(principal)
            mask = rights
        else:
            mask = rights & self.present
            visible, length = mask_stats(seg, mask)
        if principal.all_access:
            return mask, visible, length, None
        if len(self.infos) == 1 and self.present is None:
            seen = frozenset([self.infos[0].snapshot_id]) if visible else frozenset()
            return mask, visible, length, seen
        # visible rows per snapshot, from a running count: one pass, however many snapshots
        counted = np.concatenate(([0], np.cumsum(rights, dtype=np.int64)))
        firsts = np.asarray(self.firsts, dtype=np.int64)
        ends = firsts + np.asarray([seg.member_range(i.snapshot_id)[1] for i in self.infos],
                                   dtype=np.int64)
        held = (counted[ends] - counted[firsts]).tolist()
        seen = frozenset(i.snapshot_id for i, h in zip(self.infos, held, strict=True) if h)
        return mask, visible, length, seen


PRINCIPALS_KEPT = 16
"""Callers whose masks one group of a view keeps (a server has few, each with its rights)."""


@dataclass
class Layout:
    """A view's groups (:func:`lay_out`) in the order its snapshots were given, and per caller
    the snapshots it may know of (rights alone, so metadata filters do not change them)."""

    groups: list[Group]
    order: Sequence[SnapshotInfo]
    _seen: dict[Principal, tuple[list[SnapshotInfo], list[str]]] = field(default_factory=dict)

    def seen(self, principal: Principal, parts: Sequence[ViewPart]
             ) -> tuple[list[SnapshotInfo], list[str]]:
        """(snapshots, their ids) ``principal`` may know of; ``parts``: a view of this layout
        without metadata filters or with (their ``seen_ids`` are the same)."""
        found = self._seen.get(principal)
        if found is None:
            infos = seen_in_order(parts, self.order)
            found = (infos, SharedList(i.snapshot_id for i in infos))
            if len(self._seen) >= PRINCIPALS_KEPT:
                self._seen.pop(next(iter(self._seen)))
            self._seen[principal] = found
        return found


def lay_out(store: SegmentedStore, snapshots: Sequence[SnapshotInfo]) -> Layout:
    """The view's snapshots grouped by the segment that holds them (a segment written by one
    import holds one; a merged segment many), each group with the rows present: the view's
    snapshots' rows, shadowed copies out (:func:`shadowed`)."""
    by_segment: dict[int, tuple[Segment, list[tuple[int, SnapshotInfo]]]] = {}
    segments = store.segments([info.snapshot_id for info in snapshots])
    for info, seg in zip(snapshots, segments, strict=True):
        first, _ = seg.member_range(info.snapshot_id)
        by_segment.setdefault(id(seg), (seg, []))[1].append((first, info))
    shadows = shadowed(store, snapshots, segments) if len(snapshots) > 1 else {}
    groups = []
    for seg, held in by_segment.values():
        held.sort(key=lambda pair: pair[0])
        infos = tuple(info for _, info in held)
        firsts = tuple(first for first, _ in held)
        present = _present(seg, infos, firsts, shadows)
        rows = -1 if present is None else int(present.sum())
        groups.append(Group(seg, infos, firsts, present, rows))
    return Layout(groups, snapshots)


def _present(seg: Segment, infos: Sequence[SnapshotInfo], firsts: Sequence[int],
             shadows: Shadows) -> BoolArray | None:
    """Rows of ``infos`` with the shadowed ones out; None when that is every row."""
    whole = len(infos) == len(seg.members)
    if whole and not any(i.snapshot_id in shadows for i in infos):
        return None
    present = np.zeros(seg.size, dtype=bool)
    for info, first in zip(infos, firsts, strict=True):
        _, n = seg.member_range(info.snapshot_id)
        present[first:first + n] = True
        if info.snapshot_id in shadows:
            present[first:first + n] &= ~shadows[info.snapshot_id]
    return present


def build_view(
    store: SegmentedStore,
    snapshots: Sequence[SnapshotInfo],
    principal: Principal,
    metadata: Mapping[str, Any],
    layout: Layout | None = None,
) -> View:
    """The view's parts, each masked by the principal's rights, shadowing and ``metadata``
    (``layout``: from :func:`lay_out`, computed here when not given)."""
    layout = lay_out(store, snapshots) if layout is None else layout
    parts = []
    for group in layout.groups:
        mask, visible, length, seen = group.for_principal(principal)
        seg = group.segment
        if metadata:
            for key, value in sorted(metadata.items()):
                mask = mask & seg.metadata_mask(key, value, partial(
                    _metadata_rows, store, seg, key, value))
            visible, length = mask_stats(seg, mask)
        parts.append(ViewPart(group.infos, seg, mask, visible, length, seen, group.present,
                              group.firsts, group.rows))
    return View(parts, snapshots, layout.seen(principal, parts))


def _metadata_rows(store: SegmentedStore, seg: Segment, key: str, value: Any) -> list[int]:
    """Rows of ``seg`` (any of its snapshots) whose metadata ``key`` is ``value``."""
    return [first + o for sid, first, _ in seg.members
            for o in store.metadata_ordinals(sid, key, value)]


def mask_stats(seg: Segment, mask: BoolArray) -> tuple[int, float]:
    """(visible nodes, their total length) under ``mask``: the view's BM25 statistics."""
    visible = int(mask.sum())
    return visible, float(seg.doc_len[mask].sum()) if visible else 0.0


def shadowed(store: SegmentedStore, snapshots: Sequence[SnapshotInfo],
             segments: Sequence[Segment] | None = None) -> Shadows:
    """Ids are unique within a view: where several snapshots hold one id, the one imported
    last (highest run) holds it and the others' copies are shadowed, whoever reads. It does
    not depend on the caller, so a copy the caller may not see still shadows the older ones
    (nothing hidden is revealed or brought back) and BM25 statistics count the holder only.
    Snapshots with nothing shadowed are absent from the result."""
    segments = store.segments([s.snapshot_id for s in snapshots]) if segments is None else (
        segments)
    rows = {}
    for info, seg in zip(snapshots, segments, strict=True):
        first, n = seg.member_range(info.snapshot_id)
        rows[info.snapshot_id] = seg.ids[first:first + n]
    if sum(map(len, rows.values())) == len(set().union(*rows.values())):
        return {}  # every id held once: nothing shadowed (one pass over the ids)
    out: Shadows = {}
    later: set[str] = set()
    for info in sorted(snapshots, key=lambda s: s.run_id, reverse=True):
        ids = rows[info.snapshot_id]
        if later:
            mask = np.fromiter((i in later for i in ids), dtype=bool, count=len(ids))
            if mask.any():
                out[info.snapshot_id] = mask
        later.update(ids)
    return out


_new = tuple.__new__
Matches = tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]
"""A part's matched ordinals and their (finite) scores, in any order."""


def rank_matches(view: View, matches: Sequence[Matches], depth: int) -> list[Candidate]:
    """The ``depth`` best (score, id) across parts, each given as its matches (ordinals and
    scores), without a score array over every node of a part and, within one segment,
    without comparing ids (its ordinals are in id order, or its ``id_rank`` says where each
    id falls); the final sort on (-score, id) decides across segments."""
    pool: list[Candidate] = []
    for i, (part, (ordinals, scores)) in enumerate(zip(view.parts, matches, strict=True)):
        if len(ordinals) > 2 * depth:  # keep the depth best and any tied with the last (only
            # to sort fewer: the sort and cut below give the same candidates without it)
            kth = np.partition(scores, len(scores) - depth)[len(scores) - depth]
            keep = scores >= kth
            ordinals, scores = ordinals[keep], scores[keep]
        rank = part.segment.id_rank  # None: ordinal order is id order
        order = np.lexsort((ordinals if rank is None else rank[ordinals], -scores))[:depth]
        ordinals, scores = ordinals[order], scores[order]
        at = ordinals.tolist()
        # tuple.__new__ is what a NamedTuple's own __new__ calls, at half its cost.
        pool.extend(map(_new, repeat(Candidate), zip(
            repeat(i), at, map(part.segment.ids.__getitem__, at), scores.tolist())))
    if len(view.parts) > 1:
        pool.sort(key=lambda c: (-c.score, c.id))
    return pool[:depth]
