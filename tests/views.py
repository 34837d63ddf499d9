"""Read views over segments written by a test, laid out as the store's views are (one
snapshot per segment), without a store: for the retrieval functions' unit tests."""

from __future__ import annotations

import numpy as np

from excerpt.retrieve.view import View, ViewPart
from excerpt.store.base import SnapshotInfo
from excerpt.store.segment import Segment
from excerpt.types import Principal


def masked_view(segments: list[Segment], masks: list[np.ndarray], present: bool = False) -> View:
    """``masks``: the rows the caller may read in each segment. ``present``: they are the rows
    the view has there (a merged segment's other snapshots' rows left out), read whole by the
    caller, rather than its rights."""
    parts = []
    for seg, mask in zip(segments, masks, strict=True):
        info = SnapshotInfo(seg.snapshot_id, "c", "s", 1, "", "completed", 0, seg.size, 0)
        visible = int(mask.sum())
        parts.append(ViewPart((info,), seg, mask, visible,
                              float(seg.doc_len[mask].sum()) if visible else 0.0,
                              present=mask if present else None,
                              rows=visible if present else -1))
    return View(parts)


def view_of(segments: list[Segment], principal: Principal | None = None) -> View:
    """The view ``principal`` (default: an admin) reads of ``segments``."""
    principal = principal or Principal.admin()
    return masked_view(segments, [seg.visible(principal) for seg in segments])
