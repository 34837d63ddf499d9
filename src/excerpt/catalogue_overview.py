"""A collection as a caller may see it, on one page: its sources (live or retired, the latest
snapshot of each and its counts), its snapshots, what a search reads there (documents,
nodes), when it was last imported, the metadata keys a filter can name with their most common
values, and example questions made from its headings (:mod:`excerpt.compose.example_questions`).
``GET /v1/collections/{collection}/overview`` and ``excerpt collections overview NAME`` return it
(issue 32: the web UI's start page).

Everything is of what the caller may see (HOUSE.md's security invariant): the snapshots are
:meth:`excerpt.catalogue.Catalogue.listing`'s (a snapshot when it sees one of its nodes, with
the counts of those), the metadata, headings and examples are read from the visible rows of the
current view only (``NodeReads.visible_rows``, on either store), and a collection it sees
nothing of is "not found" with the words an unknown one gets, as ``/v1/snapshots`` answers.

A large view is read in a sample: at most :data:`MAX_READ` visible nodes, evenly spaced, for
the metadata and headings (said by ``metadata.sampled``); counts are always exact.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from excerpt.catalogue import Catalogue
from excerpt.compose.example_questions import Example, examples, heading_of, recased
from excerpt.store.base import SnapshotInfo
from excerpt.types import Node, Principal

MAX_READ = 20_000
"""Visible nodes read at most for the metadata and headings (a sample beyond)."""
TOP_VALUES = 10
"""Values shown per metadata key, the most common first."""
_BATCH = 2_000
POSITIONAL = frozenset({"chunk", "overlap", "order", "line", "start", "end", "article_sub",
                        "article_last", "page_end", "page_end_label", "headings", "pages",
                        "section_numbers"})
"""Metadata that places a node (its chunk number, its line, the text it repeats) or repeats
another key as a list: no reader filters by them."""


def overview(catalogue: Catalogue, collection: str, principal: Principal,
             n_examples: int = 3, answers: Callable[[Example], bool] | None = None
             ) -> dict[str, Any]:
    """``collection`` as ``principal`` may see it (module docstring); NotFoundError when it
    does not exist or the caller sees nothing of it. ``answers``: whether the caller's search
    finds an example's heading (:func:`excerpt.compose.example_questions.examples`)."""
    listing = catalogue.listing(collection, principal)  # refuses unknown and unseen alike
    store = catalogue.store
    current = store.latest_snapshots(collection)
    counts = catalogue.access.snapshot_counts(current, principal)
    read = [s for s in current if s.snapshot_id in counts]
    nodes = list(_visible_nodes(catalogue, read, principal))
    total = sum(counts[s.snapshot_id][1] for s in read)
    language = _most_common([n.metadata.get("language") for n in nodes])
    headings = [h for h in (heading_of(n) for n in nodes) if h is not None]
    snapshots = listing["snapshots"]
    return {
        "collection": collection,
        "counts": {"sources": len({s["source"] for s in snapshots}),
                   "snapshots": len(snapshots),
                   "documents": sum(counts[s.snapshot_id][0] for s in read),
                   "nodes": total},
        "last_import": max((s["created_at"] for s in snapshots), default=None),
        "language": language,
        "sources": _sources(snapshots, {s.snapshot_id for s in read}),
        "snapshots": snapshots,
        "sets": listing["sets"],
        "metadata": {"keys": _metadata(nodes), "nodes_read": len(nodes),
                     "sampled": len(nodes) < total},
        "examples": [e.to_json() for e in examples(recased(headings, nodes), n_examples, language,
                                                     answers)],
        **principal.describe(),
    }


def _visible_nodes(catalogue: Catalogue, snapshots: list[SnapshotInfo],
                   principal: Principal) -> Iterator[Node]:
    """The visible nodes of ``snapshots``, in their order (a sample of :data:`MAX_READ`
    evenly spaced when there are more)."""
    store = catalogue.store
    rows = [(s.snapshot_id, np.flatnonzero(store.visible_rows(s.snapshot_id, principal)))
            for s in snapshots]
    total = sum(len(r) for _, r in rows)
    for sid, ordinals in rows:
        if total > MAX_READ:
            keep = max(1, len(ordinals) * MAX_READ // total)
            ordinals = ordinals[np.linspace(0, len(ordinals) - 1, keep).astype(int)]
        chosen = [int(o) for o in ordinals]
        for at in range(0, len(chosen), _BATCH):
            yield from store.nodes_by_ordinal(sid, chosen[at:at + _BATCH])


def _sources(snapshots: list[dict[str, Any]], current: set[str]) -> list[dict[str, Any]]:
    """Each source of the visible ``snapshots``: its latest visible snapshot, whether it is
    retired (a sync saw its file deleted) or live (in what a search reads), and how many of
    its snapshots the caller sees."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for snap in snapshots:
        by_source.setdefault(snap["source"], []).append(snap)
    rows = []
    for source, snaps in sorted(by_source.items()):
        latest = max(snaps, key=lambda s: (s["created_at"], s["snapshot_id"] in current))
        rows.append({"source": source, "retired": bool(latest["retired"]),
                     "live": any(s["snapshot_id"] in current for s in snaps),
                     "snapshot_id": latest["snapshot_id"], "created_at": latest["created_at"],
                     "name": latest["name"], "documents": latest["documents"],
                     "nodes": latest["nodes"], "snapshots": len(snaps)})
    return rows


def _metadata(nodes: list[Node]) -> list[dict[str, Any]]:
    """The keys a ``where`` can name, with how many nodes hold each and its most common
    values (a list's members count one by one, as a filter matches them), most held first."""
    held: Counter[str] = Counter()
    values: dict[str, Counter[Any]] = {}
    for node in nodes:
        for key, value in node.metadata.items():
            if key in POSITIONAL:
                continue
            members = value if isinstance(value, list) else [value]
            scalars = [v for v in members if isinstance(v, bool | int | float | str)
                       and v != ""]
            if scalars:
                held[key] += 1
                bucket = values.setdefault(key, Counter())
                bucket.update((type(v).__name__, v) for v in scalars)
    out = []
    for key, count in sorted(held.items(), key=lambda kv: (-kv[1], kv[0])):
        common = sorted(values[key].items(), key=lambda kv: (-kv[1], str(kv[0][1])))
        out.append({"key": key, "nodes": count, "distinct": len(values[key]),
                    "values": [{"value": v, "nodes": c} for (_, v), c in common[:TOP_VALUES]]})
    return out


def _most_common(values: list[Any]) -> str | None:
    """The most common non-empty string of ``values`` (ties: the first in order)."""
    counted = Counter(v for v in values if isinstance(v, str) and v)
    return max(counted, key=lambda v: counted[v]) if counted else None

