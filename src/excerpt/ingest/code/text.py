"""Text helpers the C# and T-SQL readers share: what one parsed declaration becomes, byte to
character offsets, the comment block that documents a declaration, and how a declaration too
long for one node is cut into parts.

**Parts.**  No code node is longer than a token cap (:data:`MAX_NODE_TOKENS` by default, as
counted by :func:`excerpt.tokens.count_tokens`, the counter every context budget uses): a node
that no budget can hold is a node no answer can quote, and one long text drowns the name it
is about in ranking.  :func:`split_text` cuts a text at the best boundaries it is given
(statement starts, in order of preference), then at line starts, and only a single line over
the cap at character positions; each part is a contiguous piece of the text.  The first part
keeps the declaration's id, the next ones are ``<id>~2``, ``<id>~3`` … (:func:`part_id`), so a
change in another declaration never renames them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from excerpt.settings import MAX_NODE_TOKENS
from excerpt.tokens import count_tokens

__all__ = [
    "MAX_NODE_TOKENS", "CodeObject", "Offsets", "Pieces", "leading_comment_start", "line_start",
    "part_edges", "part_id", "split_slice", "split_sql_name", "split_text", "sql_id", "unique_ids",
]



@dataclass(frozen=True)
class CodeObject:
    """One declaration found in a file: a node to be (``start``/``end`` index the file text).

    ``text`` is the node's text when it is not the slice ``file[start:end]`` (a C# type's
    outline); None means the slice."""

    id: str
    kind: str
    title: str
    start: int
    end: int
    metadata: dict[str, str] = field(default_factory=dict)
    text: str | None = None


class Offsets:
    """Character offset of each UTF-8 byte offset of ``text`` (tree-sitter counts bytes)."""

    def __init__(self, text: str) -> None:
        self._table: list[int] | None = None
        if not text.isascii():
            table: list[int] = []
            for i, ch in enumerate(text):
                table.extend([i] * len(ch.encode("utf-8")))
            table.append(len(text))
            self._table = table

    def char(self, byte: int) -> int:
        return byte if self._table is None else self._table[byte]


_LINE_COMMENT = ("--", "//")


def leading_comment_start(text: str, start: int, floor: int = 0) -> int:
    """Where the comment lines right above ``text[start:]`` begin (``start`` if there are none).

    Only whole lines count: ``//``, ``///`` or ``--`` lines and ``/* … */`` blocks directly
    above the declaration's first line, without a blank line between; nothing before ``floor``.
    Those comments usually say what the declaration is for, which is what a reader searches by.
    """
    line_start = text.rfind("\n", 0, start) + 1
    if text[max(line_start, floor) : start].strip():
        return start  # the declaration does not begin its line
    best = start
    end = line_start - 1  # the newline that ends the line above
    while end > floor:
        top = text.rfind("\n", 0, end) + 1
        line = text[top:end].strip()
        if top < floor or not line:
            break
        if line.startswith(_LINE_COMMENT):
            best = top + (len(text[top:end]) - len(text[top:end].lstrip()))
            end = top - 1
            continue
        if not line.endswith("*/"):
            break
        opening = text.rfind("/*", floor, end)
        block_top = text.rfind("\n", 0, opening) + 1
        if opening < 0 or text[max(block_top, floor) : opening].strip():
            break
        best = opening
        end = block_top - 1
    return best


_NAME_PART = re.compile(r"\[([^\]]*)\]|\"([^\"]*)\"|([^.\[\]\"]+)")


def sql_id(parts: list[str]) -> tuple[str, str, str]:
    """``(id, schema, name)`` of a T-SQL object from its name parts: brackets and quotes
    dropped, server and database parts ignored, the schema ``dbo`` when none is given (or an
    empty one, as in ``db..table``)."""
    clean = [p.strip().strip("[]\"") for p in parts] or [""]
    name = clean[-1]
    schema = clean[-2] if len(clean) > 1 and clean[-2] else "dbo"
    return f"SQL:{schema}.{name}", schema, name


def split_sql_name(text: str) -> list[str]:
    """``[dbo].[Orders]`` or ``dbo.Orders`` -> ``["dbo", "Orders"]``."""
    return [next(g for g in m.groups() if g is not None) for m in _NAME_PART.finditer(text)]


def unique_ids(keys: list[str], fold_case: bool = False) -> list[str]:
    """``keys`` made unique in order: the second ``k`` becomes ``k#2``, the third ``k#3`` …
    (``fold_case``: keys that differ only in case count as the same, as T-SQL names do)."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for key in keys:
        norm = key.lower() if fold_case else key
        seen[norm] = seen.get(norm, 0) + 1
        out.append(key if seen[norm] == 1 else f"{key}#{seen[norm]}")
    return out


def part_id(oid: str, index: int) -> str:
    """The id of part ``index`` (0-based) of node ``oid``: the first part keeps it."""
    return oid if index == 0 else f"{oid}~{index + 1}"


def split_slice(obj: CodeObject, file: str, max_tokens: int) -> list[CodeObject]:
    """``obj`` (whose text is ``file[start:end]``) as parts within ``max_tokens`` tokens, cut
    after blank lines where it can, else at line starts: for code read without a syntax tree
    of its statements (a T-SQL batch)."""
    text = file[obj.start : obj.end]
    if count_tokens(text) <= max_tokens:
        return [obj]
    paragraphs = [m.end() for m in re.finditer(r"\n[ \t]*\n", text)]
    cuts = split_text(text, max_tokens, [paragraphs])
    bounds = [0, *cuts, len(text)]
    n = len(bounds) - 1
    return [CodeObject(part_id(obj.id, i), obj.kind, obj.title, obj.start + a, obj.start + b,
                       obj.metadata | {"part": str(i + 1), "parts": str(n)})
            for i, (a, b) in enumerate(pairwise(bounds))]


def part_edges(objects: Sequence[CodeObject]) -> set[tuple[str, str, str]]:
    """``(first part, "Contains", later part)`` for every node cut into parts, so a graph
    walk from a declaration reaches all of its text."""
    return {(o.id.rsplit("~", 1)[0], "Contains", o.id) for o in objects
            if o.metadata.get("part", "1") != "1"}


def line_start(text: str, pos: int) -> int | None:
    """The start of the line ``pos`` is on, if only blanks stand before ``pos`` on it."""
    top = text.rfind("\n", 0, pos) + 1
    return top if not text[top:pos].strip() else None


def split_text(text: str, max_tokens: int, cuts: Sequence[Sequence[int]] = ()) -> list[int]:
    """Where to cut ``text`` so that no piece has more than ``max_tokens`` tokens: the sorted
    inner cut offsets ([] when the whole text fits).

    ``cuts`` are candidate offsets by preference (e.g. top-level statement starts, then nested
    ones); pieces are made of whole atoms between the best candidates, an atom over the cap is
    cut at the next level, then at line starts, then (one line over the cap) at characters."""
    if max_tokens < 1:
        raise ValueError(f"the node token cap must be at least 1, got {max_tokens}")
    if count_tokens(text) <= max_tokens:
        return []
    levels = [*cuts, [m.end() for m in re.finditer("\n", text)]]
    atoms = _atoms(text, 0, len(text), levels, max_tokens)
    return _pack(text, atoms, max_tokens)


def _atoms(text: str, start: int, end: int, levels: Sequence[Sequence[int]],
           max_tokens: int) -> list[tuple[int, int, int]]:
    """``(start, end, tokens)`` pieces of ``text[start:end]``, each within the cap."""
    tokens = count_tokens(text[start:end])
    if tokens <= max_tokens:
        return [(start, end, tokens)]
    for depth, level in enumerate(levels):
        inner = sorted({c for c in level if start < c < end})
        if inner:
            bounds = [start, *inner, end]
            return [a for s, e in pairwise(bounds)
                    for a in _atoms(text, s, e, levels[depth:], max_tokens)]
    return _by_characters(text, start, end, max_tokens)


def _by_characters(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int, int]]:
    """A single line over the cap: the longest prefixes within it, one after the other."""
    out: list[tuple[int, int, int]] = []
    while start < end:
        low, high = start + 1, end  # the longest fitting end is in [low, high]
        while low < high:
            mid = (low + high + 1) // 2
            if count_tokens(text[start:mid]) <= max_tokens:
                low = mid
            else:
                high = mid - 1
        out.append((start, low, count_tokens(text[start:low])))
        start = low
    return out


def _pack(text: str, atoms: list[tuple[int, int, int]], max_tokens: int) -> list[int]:
    """Consecutive atoms joined greedily while the joined text stays within the cap."""
    cuts: list[int] = []
    i = 0
    while i < len(atoms):
        j, total = i + 1, atoms[i][2]
        while j < len(atoms) and total + atoms[j][2] <= max_tokens:
            total += atoms[j][2]
            j += 1
        while j > i + 1 and count_tokens(text[atoms[i][0] : atoms[j - 1][1]]) > max_tokens:
            j -= 1  # tokens merged across a boundary: rare, checked
        if j < len(atoms):
            cuts.append(atoms[j][0])
        i = j
    return cuts


@dataclass(frozen=True)
class Pieces:
    """A text made of pieces of a file, some copied, some replaced (an outline), with the way
    back from an offset in the text to one in the file."""

    text: str
    starts: tuple[int, ...]  # where each piece begins in ``text``
    spans: tuple[tuple[int, int, bool], ...]  # file start, file end, copied

    @classmethod
    def build(cls, file: str, start: int, end: int,
              replaced: Sequence[tuple[int, int, str]]) -> Pieces:
        """``file[start:end]`` with each ``(s, e, new)`` span (sorted, disjoint) replaced."""
        out: list[str] = []
        starts: list[int] = []
        spans: list[tuple[int, int, bool]] = []
        pos, size = start, 0
        for s, e, new in [*replaced, (end, end, "")]:
            for piece, span in ((file[pos:s], (pos, s, True)), (new, (s, e, False))):
                if piece:
                    out.append(piece)
                    starts.append(size)
                    spans.append(span)
                    size += len(piece)
            pos = e
        return cls("".join(out), tuple(starts), tuple(spans))

    def text_offset(self, file_offset: int) -> int | None:
        """Where file offset ``file_offset`` is in the text (None: in a replaced span)."""
        for begin, (s, e, copied) in zip(self.starts, self.spans, strict=True):
            if copied and s <= file_offset < e:
                return begin + file_offset - s
        return None

    def file_offset(self, offset: int) -> int:
        """Where text offset ``offset`` (a part boundary) falls in the file."""
        if not self.spans:
            return 0
        i = max(bisect_right(self.starts, offset) - 1, 0)
        s, e, copied = self.spans[i]
        inside = offset - self.starts[i]
        return s + inside if copied else (s if inside == 0 else e)
