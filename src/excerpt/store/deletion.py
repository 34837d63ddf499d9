"""Deleting snapshots and collections: the statements both stores run in ONE transaction.

A snapshot goes with its content rows, its places in snapshot sets (a set left empty goes too)
and its catalogue row, all or nothing: a reader sees the snapshot whole or not at all.  Import
runs stay as history.  After the commit the embedded store removes the segment folder; a crash
before that leaves a folder no snapshot names, which its ``recover()`` removes on next open.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["delete_statements"]


def delete_statements(collection: str, snapshot_ids: Sequence[str], content_tables: Sequence[str],
                      drop_collection: bool) -> list[tuple[str, tuple[Any, ...]]]:
    """(sql with ? placeholders, args) in order; ``content_tables`` hold a ``snapshot_id``
    column, children before parents; with ``drop_collection`` the collection row goes too."""
    ids = tuple(snapshot_ids)
    marks = ",".join("?" * len(ids)) or "NULL"
    out: list[tuple[str, tuple[Any, ...]]] = [
        (f"DELETE FROM snapshot_set_members WHERE snapshot_id IN ({marks})", ids),
        ("DELETE FROM snapshot_sets WHERE collection = ? AND name NOT IN (SELECT set_name FROM "
         "snapshot_set_members WHERE collection = ?)", (collection, collection)),
    ]
    out += [(f"DELETE FROM {t} WHERE snapshot_id IN ({marks})", ids) for t in content_tables]
    out.append((f"DELETE FROM snapshots WHERE id IN ({marks})", ids))
    if drop_collection:
        out += [("DELETE FROM snapshot_set_members WHERE collection = ?", (collection,)),
                ("DELETE FROM snapshot_sets WHERE collection = ?", (collection,)),
                ("DELETE FROM collections WHERE name = ?", (collection,))]
    return out
