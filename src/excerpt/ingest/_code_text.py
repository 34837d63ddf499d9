"""Text helpers the C# and T-SQL readers share: what one parsed declaration becomes, byte to
character offsets, and the comment block that documents a declaration."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "CodeObject", "Offsets", "leading_comment_start", "split_sql_name", "sql_id", "unique_ids",
]


@dataclass(frozen=True)
class CodeObject:
    """One declaration found in a file: a node to be (``start``/``end`` index the file text)."""

    id: str
    kind: str
    title: str
    start: int
    end: int
    metadata: dict[str, str] = field(default_factory=dict)


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
