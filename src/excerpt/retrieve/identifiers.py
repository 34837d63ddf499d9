"""Identifier search: a query that names a code object gets that object's node first.

People search code by name: ``OrderRepository``, ``IOrderRepository.GetOrder``,
``usp_Order_Import``, ``Sales.Order``, ``[dbo].[Tenants]``. BM25 splits such a name into
sub-words and a dense model reads it as prose, so the named node may rank anywhere. Code node
ids carry the qualified name (``CS:Contoso.Data.OrderRepository.GetOrder``,
``SQL:dbo.usp_Order_Import``, an overload or a second definition ``…#2``, a later part ``…~2``
of a member split for size), so the name can be looked up instead of ranked:

- **Suffix index**, one per segment (segments never change; built on first use, kept while the
  segment is): every dotted suffix of a code id's name is a key, ``GetOrder``,
  ``OrderRepository.GetOrder``, … up to the whole name. ``Repo.GetOrder`` is no suffix of
  ``OrderRepository.GetOrder`` and does not match.
- **Case**: SQL names are matched case-insensitively (T-SQL is); C# names case-sensitively
  first, and case-insensitively only when no C# name matches exactly.
- **Several matches** (overloads ``#2``, a table defined in two databases, a class and a table
  of one name, the parts ``~2`` of a long member after its head): all of them, in id order.
- **What counts as naming**: the query, with brackets, quotes and a trailing ``()`` removed, is
  one identifier, optionally with a kind word (``Tenants table``, ``class OrderRepository``;
  table/view/procedure keep SQL matches, class/method/interface… keep C# ones). A sentence
  ("which procedure writes the Tenants table") pins nothing by this rule;
  :mod:`excerpt.retrieve.relations` reads those.
- **Security**: only nodes the caller sees (the view's masks, shadowed copies out) are ever
  returned; the index itself is per segment and never leaves this module.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from excerpt.retrieve.view import View
from excerpt.store.segment import Segment

CODE_PREFIXES: tuple[str, ...] = ("CS:", "SQL:")
"""Id prefixes of code nodes (ingest/code/source.py, ingest/code/bundle.py)."""

SQL_KINDS = frozenset({"table", "tables", "view", "views", "procedure", "procedures", "proc",
                       "sproc", "function", "trigger", "synonym", "index", "sql", "stored"})
CS_KINDS = frozenset({"class", "classes", "method", "methods", "interface", "interfaces",
                      "property", "type", "struct", "enum", "record", "member", "field",
                      "constructor", "controller", "repository"})
_BRACKETS = re.compile(r"[\[\]]")  # T-SQL quoting: [dbo].[Tenants] is dbo.Tenants
_STRIP = re.compile(r"[\"'`“”‘’,;?!()]")
_NAME = re.compile(r"^(?:CS:|SQL:)?[^\W\d][\w$@]*(?:\.[^\W\d][\w$@]*)*(?:#\w+)?$")


@dataclass(frozen=True)
class Name:
    """A name a query gives: its text and which kinds of code node it may name."""

    text: str
    kinds: tuple[str, ...] = CODE_PREFIXES


def words(query: str) -> list[str]:
    """The query's words with brackets, quotes, trailing ``()`` and sentence dots removed."""
    out = []
    for word in _STRIP.sub(" ", _BRACKETS.sub("", query)).split():
        word = word.rstrip(".:")
        if word:
            out.append(word)
    return out


def is_name(word: str) -> bool:
    """Whether ``word`` has the shape of a (dotted) identifier."""
    return bool(_NAME.match(word))


def query_name(query: str) -> Name | None:
    """The identifier a query consists of (with at most one kind word), or None."""
    found = words(query)
    if len(found) == 1:  # a lone word is a name even when it is a kind word (``Index``)
        return Name(found[0]) if is_name(found[0]) else None
    kinds = [w for w in found if w.lower() in SQL_KINDS | CS_KINDS]
    rest = [w for w in found if w not in kinds]
    if len(rest) != 1 or len(kinds) > 1 or not is_name(rest[0]):
        return None
    return Name(rest[0], kinds_of(kinds[0]) if kinds else CODE_PREFIXES)


def kinds_of(word: str) -> tuple[str, ...]:
    """The id prefixes a kind word keeps (every code kind for an unknown word)."""
    lowered = word.lower()
    if lowered in SQL_KINDS:
        return ("SQL:",)
    if lowered in CS_KINDS:
        return ("CS:",)
    return CODE_PREFIXES


_TAIL = re.compile(r"[#(~].*$")


def bare_name(node_id: str) -> str:
    """A code id's dotted name: the prefix and any tail removed (an overload or second
    definition ``#2``, a parameter list, a later part ``~2`` of a member split for size)."""
    return _TAIL.sub("", node_id.split(":", 1)[1])


def suffixes(name: str) -> list[str]:
    """``A.B.C`` -> ``C``, ``B.C``, ``A.B.C``."""
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts) - 1, -1, -1)]


@dataclass
class SuffixIndex:
    """Dotted-suffix keys of one segment's code ids -> ordinals (ascending, so id order)."""

    exact: dict[str, list[int]] = field(default_factory=dict)  # C#, as written
    folded: dict[str, list[int]] = field(default_factory=dict)  # C#, lower case
    sql: dict[str, list[int]] = field(default_factory=dict)  # SQL, lower case

    @classmethod
    def build(cls, ids: Sequence[str]) -> SuffixIndex:
        index = cls()
        for ordinal, node_id in enumerate(ids):
            if node_id.startswith("CS:"):
                for key in suffixes(bare_name(node_id)):
                    index.exact.setdefault(key, []).append(ordinal)
                    index.folded.setdefault(key.lower(), []).append(ordinal)
            elif node_id.startswith("SQL:"):
                for key in suffixes(bare_name(node_id).lower()):
                    index.sql.setdefault(key, []).append(ordinal)
        for table in (index.exact, index.folded, index.sql):
            for key, ordinals in table.items():
                table[key] = sorted(set(ordinals))
        return index

    def lookup(self, name: Name) -> list[int]:
        """Ordinals ``name`` names (C# exact case first, SQL any case)."""
        text = name.text
        kinds = name.kinds
        if text.startswith(CODE_PREFIXES):  # a full id: that kind only
            prefix, text = text.split(":", 1)
            kinds = (prefix + ":",)
        text = _TAIL.sub("", text)
        found: list[int] = []
        if "CS:" in kinds:
            found += self.exact.get(text) or self.folded.get(text.lower(), [])
        if "SQL:" in kinds:
            found += self.sql.get(text.lower(), [])
        return found


_INDEXES: weakref.WeakKeyDictionary[Segment, SuffixIndex] = weakref.WeakKeyDictionary()


def segment_index(segment: Segment) -> SuffixIndex:
    """The segment's suffix index, built once while the segment is in use."""
    index = _INDEXES.get(segment)
    if index is None:
        index = _INDEXES[segment] = SuffixIndex.build(segment.ids)
    return index


_HAS_CODE: weakref.WeakKeyDictionary[Segment, bool] = weakref.WeakKeyDictionary()


def segment_has_code(segment: Segment) -> bool:
    """Whether any node of ``segment`` is code (its id starts with a code prefix); found by
    bisection when ordinals are in id order (every segment the pipeline writes), kept while
    the segment is in use."""
    found = _HAS_CODE.get(segment)
    if found is None:
        ids = segment.ids
        if segment.ids_sorted:
            at = [bisect_left(ids, prefix) for prefix in CODE_PREFIXES]
            found = any(i < len(ids) and ids[i].startswith(prefix)
                        for i, prefix in zip(at, CODE_PREFIXES, strict=True))
        else:
            found = any(i.startswith(CODE_PREFIXES) for i in ids)
        _HAS_CODE[segment] = found
    return found


def view_has_code(view: View) -> bool:
    """Whether a part of ``view`` holds a code node, visible or not: without one no name can
    resolve (:func:`segment_matches` finds nothing), so a search skips reading the query
    for names (a fifth of a BM25 search's own time on SciFact)."""
    return any(segment_has_code(part.segment) for part in view.parts)


def segment_matches(view: View, names: Iterable[Name]) -> list[str]:
    """Ids of the visible code nodes ``names`` name, in id order (each once)."""
    found: set[str] = set()
    wanted = list(names)
    for part in view.parts:
        if not wanted or not part.visible:
            continue
        index = segment_index(part.segment)
        ids = part.segment.ids
        for name in wanted:
            found.update(ids[o] for o in index.lookup(name) if part.mask[o])
    return sorted(found)


def sql_has_code(rows: Any, snapshot_ids: Sequence[str]) -> bool:
    """Whether any of the snapshots holds a code node (PostgreSQL)."""
    return bool(rows("SELECT EXISTS (SELECT 1 FROM nodes WHERE snapshot_id = ANY(%s) AND "
                     "(id LIKE 'CS:%%' OR id LIKE 'SQL:%%'))", [list(snapshot_ids)])[0][0])


def sql_matches(rows: Any, view: Any, names: Iterable[Name]) -> list[str]:
    """As :func:`segment_matches` for a PostgreSQL view (``rows``: the store's query runner;
    ``view``: a :class:`excerpt.retrieve.sql.SqlView`): the visible code ids holding a name
    (any case) are read in one query, then matched as a segment's are."""
    wanted = list(names)
    if not wanted:
        return []
    where, params = view.where()
    patterns = ["%" + re.sub(r"([\\%_])", r"\\\1", _TAIL.sub("", n.text.split(":", 1)[-1])
                             .lower()) + "%" for n in wanted]
    ids = sorted({r[0] for r in rows(
        f"SELECT n.id FROM nodes n WHERE {where} AND (n.id LIKE 'CS:%%' OR n.id LIKE 'SQL:%%') "
        f"AND lower(n.id) LIKE ANY(%s)", [*params, patterns])})
    index = SuffixIndex.build(ids)
    return sorted({ids[o] for n in wanted for o in index.lookup(n)})
