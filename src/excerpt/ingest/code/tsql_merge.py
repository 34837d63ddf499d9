"""One node per SQL object, however many times the folder creates it.

A database folder often creates the same object more than once: a patch script repeats
``IF NOT EXISTS (…) CREATE TABLE dbo.X …`` for a table whose own file defines it, a deployment
script re-creates a procedure, or two database projects of one application each hold a
``dbo.Events``.  SQL Server knows one ``dbo.X`` per database, and a reader asking about
``dbo.X`` wants one answer, so the loader keeps one node per object id (SQL names compared
without regard to case, as SQL Server does) instead of numbering copies ``#2``.

Only definitions of the same kind are one object: a table and a view that share a name cannot
live in one database, so they come from two (wingtip-saas has a table ``dbo.Venues`` in one
database and a view ``dbo.Venues`` in another) and stay two nodes, the later one numbered
``#2`` as before.

Which definition is the node: the first one *not* guarded by ``IF`` / ``WHILE`` in load order
(documents by id, then position in the file), else the first one.  A guarded CREATE is a patch
script's fallback ("create it if it is missing"); the unguarded one is the object's definition,
usually in its own file.  A fixed rule also keeps the node's text and id the same on every
import.  The edges of every definition are merged onto that node: each is a relation some
version of the object has, and dropping them would lose a true dependency.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from excerpt.ingest.code.text import CodeObject, unique_ids

__all__ = ["one_per_object"]

K = TypeVar("K")
Out = set[tuple[str, str]]


def one_per_object(found: Sequence[tuple[K, CodeObject, Out, bool]]
                   ) -> list[tuple[K, CodeObject, Out]]:
    """``(where, object, edges, guarded)`` in load order -> one ``(where, object, edges)`` per
    object id and kind, in the order the winners were found (see the module docstring)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for k, (_where, obj, _out, _guarded) in enumerate(found):
        groups.setdefault((obj.id.lower(), obj.kind), []).append(k)
    chosen: list[tuple[int, Out]] = []
    for members in groups.values():
        best = min(members, key=lambda k: (found[k][3], k))
        merged: Out = set()
        for k in members:
            merged |= found[k][2]
        chosen.append((best, merged))
    chosen.sort(key=lambda item: item[0])
    ids = unique_ids([found[k][1].id for k, _ in chosen], fold_case=True)
    return [(found[k][0], _renamed(found[k][1], oid), merged)
            for (k, merged), oid in zip(chosen, ids, strict=True)]


def _renamed(obj: CodeObject, oid: str) -> CodeObject:
    if oid == obj.id:
        return obj
    return CodeObject(oid, obj.kind, obj.title, obj.start, obj.end, dict(obj.metadata))
