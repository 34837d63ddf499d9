"""Which segments to merge next: a tiered policy, as Lucene's and tantivy's log merge policies.

A segment's *level* is ``floor(log_F(max(rows, FLOOR)))`` for the merge factor ``F`` (10): a
segment under ``FLOOR`` (1,000) rows, a file of one node or of a hundred, is level 3, as one of
1,000 rows; one of 10,000 rows level 4. Whenever a level holds ``F`` or more
segments that can merge with each other (the same analyzer, embedding model and format), its
smallest ones, up to ``AT_ONCE``, are merged into one, which lands a level or more higher;
repeated until no level holds ``F``. So a collection of ``n`` rows keeps fewer than ``F``
segments per level, ``O(F log n)`` in all, whatever the number of files it came from, and a
row is rewritten ``O(log n)`` times over its life. ``AT_ONCE`` lets the thousands of
one-node segments a first sync of a folder leaves merge in a few passes rather than
hundreds (each input is read once per merge, whatever its size). A segment where more than
``DEAD_SHARE`` of the rows belong to deleted snapshots is rewritten alone first, without them
(as Lucene's tiered policy reclaims deletes). When a sync pass ends (``tidy``), the segments
it leaves under ``FLOOR`` rows are merged into one whatever their number: a query reads one
part per segment, and leftovers under the factor would each cost it one. As Lucene caps its
merged segments, segments of ``MERGE_BELOW`` rows or more are never merged, and a merge writes
at most ``MAX_MERGED`` rows: ten 1M-node imports are not rewritten behind a server's back.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

FACTOR = 10
AT_ONCE = 1000
DEAD_SHARE = 0.1
MERGE_BELOW = 100_000
"""Segments of this many rows or more are left as they are (a large import is one already)."""
MAX_MERGED = 1_000_000
"""Rows one merge writes at most: a merge's time and memory stay bounded."""
FLOOR = 1000
"""Segments smaller than this count as this size (Lucene's floor segment size): the one-file
segments of a sync, of 1 to 999 rows, are one level, not three."""


@dataclass(frozen=True)
class SegmentStat:
    name: str
    rows: int
    """Rows of snapshots that still exist (a deleted snapshot's rows are dropped by a merge)."""
    key: Hashable
    """Segments merge only with segments of the same key."""
    dead: int = 0
    """Rows of deleted snapshots, which a merge of the segment drops."""


def level(rows: int, factor: int = FACTOR) -> int:
    return int(math.log(max(rows, FLOOR, 1), factor) + 1e-9)


def next_merge(stats: Sequence[SegmentStat], factor: int = FACTOR,
               at_once: int = AT_ONCE, tidy: bool = False) -> list[str]:
    """The names of the segments to merge next (smallest first, ties by name), or [] when no
    level holds ``factor`` segments of one key and no segment is mostly deleted rows.
    ``tidy`` (when a sync pass ends): two or more segments all under ``FLOOR`` rows merge too,
    so a pass leaves at most one small segment per key (each one more part for a query)."""
    for stat in sorted(stats, key=lambda s: s.name):
        if stat.dead > DEAD_SHARE * (stat.rows + stat.dead):
            return [stat.name]
    levels: dict[tuple[Hashable, int], list[SegmentStat]] = {}
    for stat in stats:
        if stat.rows < MERGE_BELOW:
            levels.setdefault((stat.key, level(stat.rows, factor)), []).append(stat)
    full = [(lvl, group) for (_, lvl), group in levels.items() if len(group) >= factor]
    if not full and tidy:  # what a pass leaves below the floor, made one segment
        small = [(lvl, [s for s in group if s.rows < FLOOR])
                 for (_, lvl), group in levels.items()]
        full = [(lvl, group) for lvl, group in small if len(group) >= 2]
    if not full:
        return []
    _, group = min(full, key=lambda pair: (pair[0], min(s.name for s in pair[1])))
    group.sort(key=lambda s: (s.rows, s.name))
    picked: list[str] = []
    rows = 0
    for stat in group[:at_once]:
        if picked and rows + stat.rows > MAX_MERGED:
            break
        picked.append(stat.name)
        rows += stat.rows
    return picked
