"""Ruled tables on a PDF page: the grid drawn by its path objects, and the characters in each
cell.

A table is a cluster of horizontal and vertical rules that cross each other, with at least
three of each (two rows and two columns of cells: a frame around a code listing is not a
table). Characters are put in cells by their centre, so a cell's text is never mixed with its
neighbour's however narrow the padding; a row is its cells in column order (the reader joins
them with ``" | "``).
"""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2.raw as pdfium_c

from excerpt.ingest.documents.pdf_chars import Char, runs_of
from excerpt.ingest.documents.pdf_layout import Table

_THIN = 2.5  # a filled rectangle this thin is a rule
_TOL = 2.0  # rules this close touch
_MAX_SEGMENTS = 400  # a path with more segments is a drawing, not rules

Rule = tuple[float, float, float]  # horizontal: (y, x0, x1); vertical: (x, y0, y1)


def page_rules(page: Any) -> tuple[list[Rule], list[Rule]]:
    """Horizontal and vertical rules drawn on the page (also inside form XObjects)."""
    hs: list[Rule] = []
    vs: list[Rule] = []
    raw = page.raw
    for i in range(pdfium_c.FPDFPage_CountObjects(raw)):
        _collect(pdfium_c.FPDFPage_GetObject(raw, i), hs, vs, 0)
    return hs, vs


def _collect(obj: Any, hs: list[Rule], vs: list[Rule], depth: int) -> None:
    kind = pdfium_c.FPDFPageObj_GetType(obj)
    if kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < 3:
        for j in range(pdfium_c.FPDFFormObj_CountObjects(obj)):
            _collect(pdfium_c.FPDFFormObj_GetObject(obj, j), hs, vs, depth + 1)
    elif kind == pdfium_c.FPDF_PAGEOBJ_PATH:
        _path_rules(obj, hs, vs)


def _path_rules(obj: Any, hs: list[Rule], vs: list[Rule]) -> None:
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
        return
    x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
    if y1 - y0 <= _THIN and x1 - x0 > _THIN:
        hs.append(((y0 + y1) / 2, x0, x1))
        return
    if x1 - x0 <= _THIN and y1 - y0 > _THIN:
        vs.append(((x0 + x1) / 2, y0, y1))
        return
    for (ax, ay), (bx, by) in _pieces(obj):
        if abs(ay - by) <= 0.5 and abs(ax - bx) > _THIN:
            hs.append(((ay + by) / 2, min(ax, bx), max(ax, bx)))
        elif abs(ax - bx) <= 0.5 and abs(ay - by) > _THIN:
            vs.append(((ax + bx) / 2, min(ay, by), max(ay, by)))


def _pieces(obj: Any) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The straight pieces of a path, in page coordinates."""
    n = pdfium_c.FPDFPath_CountSegments(obj)
    if n <= 0 or n > _MAX_SEGMENTS:
        return []
    m = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, m):
        m.a, m.b, m.c, m.d, m.e, m.f = 1, 0, 0, 1, 0, 0
    x, y = ctypes.c_float(), ctypes.c_float()
    out = []
    start = prev = None
    for k in range(n):
        seg = pdfium_c.FPDFPath_GetPathSegment(obj, k)
        pdfium_c.FPDFPathSegment_GetPoint(seg, x, y)
        pt = (m.a * x.value + m.c * y.value + m.e, m.b * x.value + m.d * y.value + m.f)
        kind = pdfium_c.FPDFPathSegment_GetType(seg)
        if kind == pdfium_c.FPDF_SEGMENT_MOVETO:
            start = pt
        elif kind == pdfium_c.FPDF_SEGMENT_LINETO and prev is not None:
            out.append((prev, pt))
        prev = pt
        if pdfium_c.FPDFPathSegment_GetClose(seg) and start is not None and prev != start:
            out.append((prev, start))
    return out


def find_tables(hs: list[Rule], vs: list[Rule]) -> list[tuple[list[float], list[float]]]:
    """Each table as (its column boundaries left to right, row boundaries top to bottom)."""
    parent = list(range(len(hs) + len(vs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (hy, hx0, hx1) in enumerate(hs):
        for j, (vx, vy0, vy1) in enumerate(vs):
            if hx0 - _TOL <= vx <= hx1 + _TOL and vy0 - _TOL <= hy <= vy1 + _TOL:
                parent[find(i)] = find(len(hs) + j)
    clusters: dict[int, tuple[list[float], list[float]]] = {}
    for i, (hy, _, _) in enumerate(hs):
        clusters.setdefault(find(i), ([], []))[1].append(hy)
    for j, (vx, _, _) in enumerate(vs):
        clusters.setdefault(find(len(hs) + j), ([], []))[0].append(vx)
    tables = []
    for xs, ys in clusters.values():
        cols, rows = _distinct(xs), _distinct(ys)[::-1]
        if len(cols) >= 3 and len(rows) >= 3:
            tables.append((cols, rows))
    return tables


def _distinct(values: list[float]) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if not out or v - out[-1] > _TOL:
            out.append(v)
    return out


def take_tables(chars: list[Char], grids: list[tuple[list[float], list[float]]]
                ) -> tuple[list[Table], list[Char]]:
    """Tables with their cell texts, and the characters left outside every table."""
    tables: list[Table] = []
    rest = chars
    for cols, rows in grids:
        cells: dict[tuple[int, int], list[Char]] = {}
        outside: list[Char] = []
        last_cell: tuple[int, int] | None = None
        for ch in rest:
            cell = _cell(ch, cols, rows) if ch.text != " " else last_cell
            if cell is None:
                outside.append(ch)
            else:
                cells.setdefault(cell, []).append(ch)
            last_cell = cell
        rest = outside
        table_rows = []
        for r in range(len(rows) - 1):
            row = [_cell_text(cells.get((r, c), [])) for c in range(len(cols) - 1)]
            if any(row):
                table_rows.append(row)
        if table_rows:
            tables.append(Table(cols[0], rows[-1], cols[-1], rows[0], table_rows))
    return tables, rest


def _cell(ch: Char, cols: list[float], rows: list[float]) -> tuple[int, int] | None:
    cx, cy = (ch.x0 + ch.x1) / 2, (ch.y0 + ch.y1) / 2
    if not (cols[0] <= cx <= cols[-1] and rows[-1] <= cy <= rows[0]):
        return None
    c = next(i for i in range(len(cols) - 1) if cx <= cols[i + 1])
    r = next(i for i in range(len(rows) - 1) if cy >= rows[i + 1])
    return r, c


def _cell_text(chars: list[Char]) -> str:
    runs = sorted(runs_of(chars), key=lambda run: (-round(run.y1), run.x0))
    return " ".join(run.text for run in runs)
