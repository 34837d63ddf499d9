"""A read view: the segments a query may read, each with the mask of nodes it may see.

The mask combines the principal's rights and the metadata filters, and it is applied before any
score is computed: an invisible node contributes nothing, not even to BM25 statistics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from excerpt.store.base import SnapshotInfo, Store
from excerpt.store.segment import BoolArray, Segment
from excerpt.types import Principal


@dataclass(frozen=True)
class ViewPart:
    info: SnapshotInfo
    segment: Segment
    mask: BoolArray
    visible: int
    visible_length: float
    seen: bool = True
    """Whether the caller may see any node of the snapshot (its rights alone, before metadata
    filters): a snapshot it may not is never named to it (listings, filters, traces, notes)."""


class Candidate(NamedTuple):
    """A ranked node before it is fetched: which part, which ordinal, its id and score.

    A NamedTuple because a query builds thousands of them (5x cheaper than a frozen dataclass).
    """

    part: int
    ordinal: int
    id: str
    score: float


class View:
    def __init__(self, parts: Sequence[ViewPart]) -> None:
        self.parts = list(parts)
        self.approximate: list[str] = []
        """Snapshots whose dense ranking came from their IVF index in this search."""
        # Read several times per query: summed once (parts do not change).
        self.visible = sum(p.visible for p in self.parts)
        total = sum(p.visible_length for p in self.parts)
        self.avg_length = total / self.visible if self.visible else 0.0

    @property
    def seen(self) -> list[SnapshotInfo]:
        """The view's snapshots the caller may know of (see :attr:`ViewPart.seen`)."""
        return [p.info for p in self.parts if p.seen]


Shadows = dict[str, BoolArray]
"""Per snapshot of a view, which of its nodes a later import in the view shadows."""


def build_view(
    store: Store,
    snapshots: Sequence[SnapshotInfo],
    principal: Principal,
    metadata: Mapping[str, Any],
    shadows: Shadows | None = None,
) -> View:
    """The view's parts, each masked by the principal's rights, shadowing and ``metadata``
    (``shadows``: from :func:`shadowed`, computed here when not given)."""
    shadows = shadowed(store, snapshots) if shadows is None else shadows
    parts = []
    for info in snapshots:
        seg = store.segment(info.snapshot_id)
        mask = seg.visible(principal)
        if info.snapshot_id not in shadows and not metadata:
            # The principal's mask alone: its counts are cached with it (a 1M-node mask costs
            # ~2 ms to count and sum per query).
            visible, length = seg.visible_stats(principal)
            parts.append(ViewPart(info, seg, mask, visible, length, principal.all_access
                                  or visible > 0))
            continue
        seen = principal.all_access or bool(mask.any())
        if info.snapshot_id in shadows:
            mask = mask & ~shadows[info.snapshot_id]
        for key, value in sorted(metadata.items()):
            mask = mask & seg.metadata_mask(key, value, partial(
                store.metadata_ordinals, info.snapshot_id, key, value))
        visible, length = mask_stats(seg, mask)
        parts.append(ViewPart(info, seg, mask, visible, length, seen))
    return View(parts)


def mask_stats(seg: Segment, mask: BoolArray) -> tuple[int, float]:
    """(visible nodes, their total length) under ``mask``: the view's BM25 statistics."""
    visible = int(mask.sum())
    return visible, float(seg.doc_len[mask].sum()) if visible else 0.0


def shadowed(store: Store, snapshots: Sequence[SnapshotInfo]) -> Shadows:
    """Ids are unique within a view: where several snapshots hold one id, the one imported
    last (highest run) holds it and the others' copies are shadowed, whoever reads. It does
    not depend on the caller, so a copy the caller may not see still shadows the older ones
    (nothing hidden is revealed or brought back) and BM25 statistics count the holder only.
    Snapshots with nothing shadowed are absent from the result."""
    out: Shadows = {}
    later: set[str] = set()
    for info in sorted(snapshots, key=lambda s: s.run_id, reverse=True):
        ids = store.segment(info.snapshot_id).ids
        if later:
            mask = np.fromiter((i in later for i in ids), dtype=bool, count=len(ids))
            if mask.any():
                out[info.snapshot_id] = mask
        later.update(ids)
    return out


def top_candidates(view: View, scores: Sequence[np.ndarray], depth: int) -> list[Candidate]:
    """The ``depth`` best (score, id) across parts; ``scores[i]`` is -inf where not a match.

    Within a segment ordinal order is id order, so a stable partition keeps ties by id; across
    segments the final sort on (-score, id) decides.
    """
    pool: list[Candidate] = []
    for i, (part, s) in enumerate(zip(view.parts, scores, strict=True)):
        ids, best = part.segment.ids, _best(s, depth)
        pool.extend(Candidate(i, o, ids[o], sc)
                    for o, sc in zip(best.tolist(), s[best].tolist(), strict=True))
    pool.sort(key=lambda c: (-c.score, c.id))
    return pool[:depth]


def _best(scores: npt.NDArray[np.float32], depth: int) -> npt.NDArray[np.intp]:
    """Ordinals of the ``depth`` best finite scores, plus any tied with the last of them."""
    finite = np.isfinite(scores)
    matched = int(np.count_nonzero(finite))
    if matched <= depth:
        return np.flatnonzero(finite)
    if matched < scores.size:  # sparse (BM25): partition the matches only
        where = np.flatnonzero(finite)
        values = scores[where]
        kth = np.partition(values, matched - depth)[matched - depth]
        return np.asarray(where[values >= kth])
    kth = np.partition(scores, scores.size - depth)[scores.size - depth]
    return np.flatnonzero(scores >= kth)


_new = tuple.__new__
Matches = tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]
"""A part's matched ordinals and their (finite) scores, in any order."""


def rank_matches(view: View, matches: Sequence[Matches], depth: int) -> list[Candidate]:
    """:func:`top_candidates` for parts given as their matches only: the same candidates, in
    the same order (score, then id), without a score array over every node of a part and,
    within one segment whose ordinals are in id order, without comparing ids."""
    pool: list[Candidate] = []
    for i, (part, (ordinals, scores)) in enumerate(zip(view.parts, matches, strict=True)):
        if len(ordinals) > 2 * depth:  # keep the depth best and any tied with the last (only
            # to sort fewer: the sort and cut below give the same candidates without it)
            kth = np.partition(scores, len(scores) - depth)[len(scores) - depth]
            keep = scores >= kth
            ordinals, scores = ordinals[keep], scores[keep]
        if part.segment.ids_sorted:
            order = np.lexsort((ordinals, -scores))[:depth]
            ordinals, scores = ordinals[order], scores[order]
        at = ordinals.tolist()
        # tuple.__new__ is what a NamedTuple's own __new__ calls, at half its cost.
        pool.extend(map(_new, repeat(Candidate), zip(
            repeat(i), at, map(part.segment.ids.__getitem__, at), scores.tolist())))
    if len(view.parts) > 1 or not (view.parts and view.parts[0].segment.ids_sorted):
        pool.sort(key=lambda c: (-c.score, c.id))
    return pool[:depth]
