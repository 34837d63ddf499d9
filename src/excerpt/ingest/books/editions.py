"""What changed between two snapshots of a collection, node by node (e.g. two editions of a
regulation book imported as snapshots of one source).

A node is matched by its id (ids come from the source: ``교원인사규정 제15조``), so:

* **added**: the id is only in the later snapshot; **removed**: only in the earlier one;
* **changed**: in both, with a different text.  With ``ignore_whitespace`` (the default) texts
  are compared with all whitespace removed, and ids whose texts differ only in whitespace are
  listed apart as **reformatted** (two exports of one book break lines and space words
  differently: the HWPX edition keeps a paragraph's line breaks, the text export drops them);
* per document (a regulation, for a regulation book): its added, removed, changed and
  reformatted node ids, and whether the document itself was added or removed.

Only the store's public reads are used (``snapshot``, ``visible_rows``,
``nodes_by_ordinal``), in batches, keeping one digest per node rather than the texts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from excerpt.errors import InputError
from excerpt.store.base import Store
from excerpt.types import Principal

__all__ = ["DocumentDiff", "SnapshotDiff", "diff_snapshots"]

_BATCH = 500
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class _Digest:
    document_id: str
    exact: str  # digest of the text as stored
    loose: str  # digest of the text without whitespace


@dataclass
class DocumentDiff:
    """The changes inside one document; ``status`` is ``added``, ``removed`` or ``changed``."""

    document_id: str
    status: str = "changed"
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    reformatted: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"document_id": self.document_id, "status": self.status, "added": self.added,
                "removed": self.removed, "changed": self.changed,
                "reformatted": self.reformatted}


@dataclass
class SnapshotDiff:
    """Node ids added, removed, changed (and reformatted) from ``before`` to ``after``, sorted;
    ``documents``: the documents with any change, by id."""

    before: str
    after: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    reformatted: list[str] = field(default_factory=list)
    unchanged: int = 0
    documents: dict[str, DocumentDiff] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "before": self.before, "after": self.after,
            "counts": {"added": len(self.added), "removed": len(self.removed),
                       "changed": len(self.changed), "reformatted": len(self.reformatted),
                       "unchanged": self.unchanged, "documents": len(self.documents)},
            "added": self.added, "removed": self.removed, "changed": self.changed,
            "reformatted": self.reformatted,
            "documents": [d.to_json() for _, d in sorted(self.documents.items())],
        }


def diff_snapshots(
    store: Store, before: str, after: str, principal: Principal, *,
    ignore_whitespace: bool = True,
) -> SnapshotDiff:
    """Compare snapshot ``before`` with snapshot ``after`` (ids as ``excerpt snapshots`` lists
    them; both of one collection) node by node, over the nodes ``principal`` may see: a node
    hidden from the caller is left out on both sides, so it never shows as added or removed
    (nor does its document); see the module docstring.

    Raises :class:`~excerpt.errors.NotFoundError` for an unknown snapshot (from the store) and
    :class:`InputError` when the two belong to different collections.
    """
    first, second = store.snapshot(before), store.snapshot(after)
    if first.collection != second.collection:
        raise InputError(f"snapshots {before!r} ({first.collection}) and {after!r} "
                         f"({second.collection}) are not of one collection")
    old, new = _digests(store, before, principal), _digests(store, after, principal)
    diff = SnapshotDiff(before, after)
    for node_id in sorted(old.keys() | new.keys()):
        kind = _compare(old.get(node_id), new.get(node_id), ignore_whitespace)
        if kind == "unchanged":
            diff.unchanged += 1
            continue
        getattr(diff, kind).append(node_id)
        document_id = (new.get(node_id) or old[node_id]).document_id
        doc = diff.documents.setdefault(document_id, DocumentDiff(document_id))
        getattr(doc, kind).append(node_id)
    _document_status(diff, {d.document_id for d in old.values()},
                     {d.document_id for d in new.values()})
    return diff


def _compare(old: _Digest | None, new: _Digest | None, ignore_whitespace: bool) -> str:
    if old is None:
        return "added"
    if new is None:
        return "removed"
    if old.exact == new.exact:
        return "unchanged"
    if ignore_whitespace and old.loose == new.loose:
        return "reformatted"
    return "changed"


def _document_status(diff: SnapshotDiff, old_docs: set[str], new_docs: set[str]) -> None:
    for document_id, doc in diff.documents.items():
        if document_id not in old_docs:
            doc.status = "added"
        elif document_id not in new_docs:
            doc.status = "removed"


def _digests(store: Store, snapshot_id: str, principal: Principal) -> dict[str, _Digest]:
    """Node id -> digests of its text, read in batches of ordinals."""
    out: dict[str, _Digest] = {}
    for node in _nodes(store, snapshot_id, principal):
        out[node[0]] = _Digest(node[1], _hash(node[2]), _hash(_SPACE.sub("", node[2])))
    return out


def _nodes(store: Store, snapshot_id: str,
           principal: Principal) -> Iterator[tuple[str, str, str]]:
    """``(id, document id, text)`` of every node of the snapshot that ``principal`` may see."""
    visible = [int(i) for i in np.flatnonzero(
        store.visible_rows(snapshot_id, principal))]
    for start in range(0, len(visible), _BATCH):
        for node in store.nodes_by_ordinal(snapshot_id, visible[start:start + _BATCH]):
            yield node.id, node.document_id, node.text


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
