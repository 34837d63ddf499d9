"""The plain data that flows between excerpt's stages.

Every type here is a frozen dataclass: stages take them in and hand new ones on, never mutate.
Ids are stable strings that come from the source (``pg174:ch01:0003``, ``C0005``), never UUIDs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from excerpt.errors import InputError

SearchMode = Literal["bm25", "semantic", "hybrid"]
SEARCH_MODES: tuple[SearchMode, ...] = ("bm25", "semantic", "hybrid")


@dataclass(frozen=True)
class Document:
    """One source file, book or record that nodes were cut from."""

    id: str
    title: str
    source: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Node:
    """A searchable chunk of a document: the unit that is ranked, quoted and cited.

    ``start``/``end`` are character offsets of ``text`` in the document's cleaned text
    (``-1`` when the format has no such text, e.g. a BEIR record is its own document).
    """

    id: str
    document_id: str
    text: str
    title: str = ""
    source: str = ""
    start: int = -1
    end: int = -1
    acl_tags: tuple[str, ...] = ()
    classification_labels: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Edge:
    """A typed, directed relation between two nodes (a citation, a dependency)."""

    from_id: str
    relation: str
    to_id: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Principal:
    """Who is asking: the ACL tags (groups) and classification labels the caller holds.

    A node is visible when (it has no ACL tags, or shares one with the caller) and (every one of
    its classification labels is among the caller's clearances).  ``all_access`` bypasses both
    and is reported as such wherever it is used.
    """

    acl_tags: frozenset[str] = frozenset()
    clearances: frozenset[str] = frozenset()
    all_access: bool = False

    @classmethod
    def anonymous(cls) -> Principal:
        return cls()

    @classmethod
    def admin(cls) -> Principal:
        return cls(all_access=True)

    def can_see(self, acl_tags: tuple[str, ...], labels: tuple[str, ...]) -> bool:
        """The one visibility rule (HOUSE.md, seed 004 section 5)."""
        if self.all_access:
            return True
        acl_ok = not acl_tags or not self.acl_tags.isdisjoint(acl_tags)
        labels_ok = all(label in self.clearances for label in labels)
        return acl_ok and labels_ok

    def describe(self) -> dict[str, Any]:
        if self.all_access:
            return {"all_access": True}
        return {
            "acl_tags_any": sorted(self.acl_tags),
            "classification_labels_all": sorted(self.clearances),
        }


@dataclass(frozen=True)
class Filters:
    """What a read may see besides the principal's rights; applied before ranking."""

    collection: str = "default"
    snapshot_id: str | None = None
    snapshot_set: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """One ranked node with its score and where it came from: what a search fetches, and the
    one shape every later stage passes on (composition, the ask's rerank and MMR, the scenario
    eval, the PROV-O recorder), so nothing is copied into a look-alike on the way; a reranker
    replaces ``score`` only (``dataclasses.replace``). Before the fetch a ranking is
    ``retrieve.view.Candidate`` (part, ordinal, id, score): no node read yet."""

    node: Node
    score: float
    snapshot_id: str

    def to_json(self) -> dict[str, Any]:
        n = self.node
        return {
            "id": n.id,
            "score": round(self.score, 6),
            "text": n.text,
            "title": n.title,
            "source": n.source,
            "snapshot_id": self.snapshot_id,
            "acl_tags": list(n.acl_tags),
            "classification_labels": list(n.classification_labels),
            "metadata": dict(n.metadata),
        }


@dataclass(frozen=True)
class IngestIssue:
    """A file or record that could not be ingested, with why; the rest of the run goes on."""

    path: str
    reason: str
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "reason": self.reason}
        if self.line is not None:
            out["line"] = self.line
        return out


def parse_where(pairs: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` metadata filters (VALUE parsed as JSON when it can be, else a string);
    :class:`ValueError` naming the first pair that is not ``KEY=VALUE``."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{pair!r} is not KEY=VALUE")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


RESERVED_WHERE_KEYS = frozenset({"acl_tags", "acl_tags_any", "classification_labels",
                                 "classification_labels_all", "labels", "clearances"})
"""Security fields are not metadata: a ``where`` on them is refused, so that no filter can
look like it widens or probes the caller's rights (the principal alone decides those)."""

_INT64 = 2**63


def check_where(metadata: Mapping[str, Any]) -> None:
    """Refuse (InputError) a metadata filter both stores cannot compare exactly: a key that is
    empty, reserved or holds a quote or backslash (it becomes a JSON path), or a value that is
    not a string, a finite number (integers within 64 bits) or true/false."""
    for key, value in metadata.items():
        shown = f"where {key}={json.dumps(value, ensure_ascii=False, default=str)}"
        if not isinstance(key, str) or not key or '"' in key or "\\" in key:
            raise InputError(f"{shown}: a metadata key must be a non-empty name without "
                             "quotes or backslashes", param="where")
        if key in RESERVED_WHERE_KEYS:
            raise InputError(f"{shown}: {key!r} is a security field, not metadata; the "
                             "caller's rights decide what it may see (--acl-tag, --clearance)",
                             param="where")
        if not _scalar(value):
            raise InputError(f"{shown}: a metadata filter takes a string, a number or "
                             f"true/false, not {_kind(value)}", param="where")


def _scalar(value: Any) -> bool:
    if isinstance(value, bool | str):
        return True
    if isinstance(value, int):
        return -_INT64 <= value < _INT64
    return isinstance(value, float) and math.isfinite(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, int | float):
        return "a number out of range"
    return type(value).__name__


class IdfWeights(dict[str, float]):
    """Token -> BM25 idf over a view; ``absent``: the tokens the view never holds (weighted with
    the mean of the others), so a caller can tell "rare" from "not there at all"."""

    def __init__(self, weights: Mapping[str, float], absent: Iterable[str] = ()) -> None:
        super().__init__(weights)
        self.absent = frozenset(absent)
