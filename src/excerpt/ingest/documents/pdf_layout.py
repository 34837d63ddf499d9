"""Reading order of a PDF page and its paragraphs, from runs (:mod:`.pdf_chars`) and tables.

Reading order is a recursive cut of the page: a region is split at a vertical gutter (no run
crosses it) into columns read left to right, else at horizontal gaps into bands read top to
bottom. Bands that share a gutter are joined again before recursing, which is what keeps a
two-column page whose paragraph gaps happen to line up in column order (the classic XY-cut
error reads it band by band across both columns). A full-width title above two columns has no
gutter, so it is its own band and comes first.

Paragraphs are consecutive lines of one column with the same style and no larger gap than
line spacing, no first-line indent and no column jump between them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from excerpt.ingest.documents.pdf_chars import SPACE_EM, Run, Style

_BULLET = re.compile(r"^([•◦▪‣∙·\-–—*]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s")
_NUMBERED = re.compile(r"^([A-Z]|\d{1,3})(\.\d{1,3})+\.?\s")  # "5.9 Moving …", "A.1 …"
_MIN_SIDE = 0.12  # a column is at least this share of the page's text width


@dataclass
class Table:
    """A ruled table found on the page: its box and its rows (cells in column order)."""

    x0: float
    y0: float
    x1: float
    y1: float
    rows: list[list[str]]


@dataclass
class Para:
    """A paragraph (or table) in reading order: its lines, style and box."""

    lines: list[str]
    style: Style
    x0: float
    y0: float
    x1: float
    y1: float
    table: list[list[str]] | None = None
    sizes: list[float] = field(default_factory=list)


Item = Run | Table


Placed = tuple[Item, tuple[int, ...]]  # an item and the columns it was found in, outermost first


def reading_order(items: Sequence[Item], gutter: float) -> list[Placed]:
    """Items of one page in reading order (see the module docstring), each with the path of
    columns it lies in: two runs on one line but in different columns are not one line."""
    if not items:
        return []
    width = max(it.x1 for it in items) - min(it.x0 for it in items)
    return _order(list(items), (gutter, _MIN_SIDE * width), 0, ())


def _order(items: list[Item], gaps: tuple[float, float], depth: int, path: tuple[int, ...]
           ) -> list[Placed]:
    """``gaps``: the narrowest gutter, and the narrowest column (a share of the page's text
    width: a column of page numbers in a table of contents, or a heading's number, is none)."""
    gutter, narrowest = gaps
    if len(items) <= 1 or depth > 60:
        return [(it, path) for it in _by_position(items)]
    columns = _split_x(items, gutter, narrowest)
    if len(columns) > 1:
        return [placed for n, col in enumerate(columns)
                for placed in _order(col, gaps, depth + 1, (*path, n))]
    bands = _split_y(items)
    groups = _join_bands(bands, gutter) if len(bands) > 1 else bands
    if len(groups) == 1:
        return [(it, path) for it in _by_position(items)]
    return [placed for g in groups for placed in _order(g, gaps, depth + 1, path)]


def _by_position(items: list[Item]) -> list[Item]:
    """Top to bottom, and left to right among items that share a line (their vertical
    centres within half a line of each other, whatever their exact baselines)."""
    out: list[Item] = []
    line: list[Item] = []
    for it in sorted(items, key=lambda it: -(it.y0 + it.y1)):
        if line and abs((line[0].y0 + line[0].y1) - (it.y0 + it.y1)) / 2 > 0.5 * min(
            line[0].y1 - line[0].y0, it.y1 - it.y0
        ):
            out.extend(sorted(line, key=lambda i: i.x0))
            line = []
        line.append(it)
    out.extend(sorted(line, key=lambda i: i.x0))
    return out


def _split_x(items: list[Item], gutter: float, narrowest: float) -> list[list[Item]]:
    """Columns left to right at every gap at least ``gutter`` wide that no item crosses, when
    every column is at least ``narrowest`` wide."""
    ordered = sorted(items, key=lambda it: it.x0)
    cols: list[list[Item]] = [[ordered[0]]]
    right = ordered[0].x1
    for it in ordered[1:]:
        if it.x0 - right >= gutter:
            cols.append([it])
        else:
            cols[-1].append(it)
        right = max(right, it.x1)
    if len(cols) == 1:
        return cols
    spans = [max(i.x1 for i in c) - min(i.x0 for i in c) for c in cols]
    if min(spans) < narrowest:
        return [items]
    return cols


def _split_y(items: list[Item]) -> list[list[Item]]:
    """Bands top to bottom at every horizontal gap no item crosses."""
    ordered = sorted(items, key=lambda it: -it.y1)
    bands: list[list[Item]] = [[ordered[0]]]
    bottom = ordered[0].y0
    for it in ordered[1:]:
        if it.y1 < bottom:
            bands.append([it])
        else:
            bands[-1].append(it)
        bottom = min(bottom, it.y0)
    return bands


def _gutters(items: list[Item], gutter: float) -> list[tuple[float, float]]:
    ordered = sorted(items, key=lambda it: it.x0)
    out: list[tuple[float, float]] = []
    right = ordered[0].x1
    for it in ordered[1:]:
        if it.x0 - right >= gutter:
            out.append((right, it.x0))
        right = max(right, it.x1)
    return out


def _join_bands(bands: list[list[Item]], gutter: float) -> list[list[Item]]:
    """Consecutive bands that share a gutter (their gaps overlap by ``gutter`` or more) form
    one group; a band with no gutter (a full-width line) stays alone."""
    groups: list[list[Item]] = []
    shared: list[tuple[float, float]] = []
    for band in bands:
        gaps = _gutters(band, gutter)
        common = [
            (max(a0, b0), min(a1, b1))
            for a0, a1 in shared
            for b0, b1 in gaps
            if min(a1, b1) - max(a0, b0) >= gutter
        ]
        if groups and common:
            groups[-1].extend(band)
            shared = common
        else:
            groups.append(list(band))
            shared = gaps
    return groups


def paragraphs(placed: list[Placed]) -> list[Para]:
    """Group items in reading order into paragraphs; a table is a paragraph of its own."""
    paras: list[Para] = []
    prev: Run | None = None
    prev_path: tuple[int, ...] = ()
    for it, path in placed:
        if isinstance(it, Table):
            paras.append(Para([], Style(0, False, False), it.x0, it.y0, it.x1, it.y1, it.rows))
            prev = None
            continue
        if prev is not None and paras and path == prev_path and _same_line(prev, it):
            para = paras[-1]
            # runs that touch are one word drawn in pieces (text written out of order)
            touching = it.x0 - prev.x1 < SPACE_EM * it.size
            para.lines[-1] += ("" if touching else " ") + it.text
            para.x1 = max(para.x1, it.x1)
            para.sizes.append(it.size)
        elif prev is not None and paras and _continues(paras[-1], prev, it):
            _add_line(paras[-1], it)
        else:
            paras.append(Para([it.text], it.style, it.x0, it.y0, it.x1, it.y1, sizes=[it.size]))
        prev, prev_path = it, path
    return paras


def _add_line(para: Para, run: Run) -> None:
    para.lines.append(run.text)
    para.x0, para.x1 = min(para.x0, run.x0), max(para.x1, run.x1)
    para.y0 = min(para.y0, run.y0)
    para.sizes.append(run.size)


def _same_line(prev: Run, run: Run) -> bool:
    height = min(prev.y1 - prev.y0, run.y1 - run.y0) or 1.0
    overlap = min(prev.y1, run.y1) - max(prev.y0, run.y0)
    return (overlap >= 0.6 * height and run.x0 >= prev.x1 - 1
            and abs(prev.size - run.size) <= 0.1 * max(prev.size, run.size))


def _same_style(para: Para, prev: Run, run: Run) -> bool:
    """The same style, or a line of code font inside a prose paragraph (a long path or URL in
    typewriter type that fills a line) when the line before it ran to the paragraph's right
    edge: the sentence goes on."""
    if run.style == para.style:
        return True
    mixed = para.style._replace(mono=run.style.mono) == run.style and not para.style.mono
    return mixed and prev.x1 >= para.x1 - 2 * run.size and len(para.lines) > 1


def _continues(para: Para, prev: Run, run: Run) -> bool:
    """Whether ``run`` is the next line of the paragraph whose last line is ``prev``."""
    if para.table is not None or not _same_style(para, prev, run):
        return False
    size = run.size or 1.0
    gap = prev.y0 - run.y1
    if gap > 0.5 * size or gap < -0.8 * size:  # a blank line, or a jump up to a new column
        return False
    if run.x0 > prev.x1:  # beside the previous line: another column
        return False
    if para.style.mono:
        return True
    indent = run.x0 - para.x0
    hanging = bool(_BULLET.match(para.lines[0]) or _NUMBERED.match(para.lines[0]))
    if indent > 0.8 * size and not hanging:
        return False
    return not _BULLET.match(run.text) or para.style.mono
