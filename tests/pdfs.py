"""PDFs for tests and benchmarks, written with reportlab's canvas so every line's place is known:
a small manual with headings, an outline, page labels, two columns, a ruled table, running
header and footer and hyphenated line ends; encrypted, image-only and truncated variants; and a
long generated book for timing."""

from __future__ import annotations

import random
from pathlib import Path

from reportlab.lib import colors
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Table, TableStyle

WIDTH, HEIGHT = letter  # 612 x 792 points
LEFT, RIGHT, TOP = 72, 540, 700
HEADER = "Acme Widget Manual"
LEADING = 13

# page -> (outline title, level) for the manual; the heading printed is numbered.
TWO_COLUMN_LEFT = [
    "Alpha one starts the left column and",
    "alpha two carries on below it while",
    "alpha three ends the first paragraph.",
    None,
    "Alpha four opens the second paragraph",
    "and alpha five closes the left column.",
]
TWO_COLUMN_RIGHT = [
    "Beta one starts the right column and",
    "beta two carries on below it while",
    "beta three ends its first paragraph.",
    None,
    "Beta four opens the second paragraph",
    "and beta five closes the right column.",
]
TABLE_ROWS = [["Part", "Size", "Price"], ["Bolt", "M6", "0.10"], ["Nut", "M6", "0.05"],
              ["Washer", "M6 wide", "0.02"]]


def _lines(c: Canvas, lines: list[str | None], x: float, y: float, font: str = "Helvetica",
           size: float = 10) -> float:
    """Draw lines (None: a blank line) from ``y`` down; return the next free baseline."""
    c.setFont(font, size)
    for line in lines:
        if line is not None:
            c.drawString(x, y, line)
        y -= LEADING
    return y - 6


def _furniture(c: Canvas, page: int, pages: int) -> None:
    c.setFont("Helvetica", 9)
    c.drawString(LEFT, 750, HEADER)
    c.drawRightString(RIGHT, 750, "Release 2.0")
    c.drawCentredString(WIDTH / 2, 40, f"Page {page} of {pages}")


def _heading(c: Canvas, text: str, y: float, size: float = 16, key: str | None = None,
             outline: tuple[str, int] | None = None) -> float:
    if key and outline:
        c.bookmarkPage(key, fit="XYZ", top=y + size)
        c.addOutlineEntry(outline[0], key, level=outline[1])
    c.setFont("Helvetica-Bold", size)
    c.drawString(LEFT, y, text)
    return y - size - 12


def write_manual(path: Path, outline: bool = True, password: object = None) -> Path:
    """Four pages (labels i, 1, 2, 3): a title and "1 Introduction" with hyphenated line
    ends; "2 Two columns" over two columns whose lines and paragraph gaps line up; "3 Parts
    table" with a ruled 3x4 table and a bold "Ordering notes" line; "4 Closing" with a smaller
    "4.1 Support" heading. Every page has a running header and a "Page N of 4" footer."""
    c = Canvas(str(path), pagesize=letter, encrypt=password)
    c.setTitle("")
    o = outline
    # page 1
    _furniture(c, 1, 4)
    c.setFont("Helvetica-Bold", 22)
    c.drawString(LEFT, TOP, "Widgets in Practice")
    y = _heading(c, "1 Introduction", TOP - 50, key="p1",
                 outline=("Introduction", 0) if o else None)
    y = _lines(c, [
        "This manual gives practical infor-",
        "mation about widgets. As is well known, a widget",
        "is a small part. A well-",
        "known fact is that widgets are small; it is well",
        "known and known well.",
    ], LEFT, y)
    _lines(c, ["The second paragraph of the introduction is short."], LEFT, y)
    c.showPage()
    # page 2
    _furniture(c, 2, 4)
    y = _heading(c, "2 Two columns", TOP, key="p2", outline=("Two columns", 0) if o else None)
    _lines(c, TWO_COLUMN_LEFT, LEFT, y)
    _lines(c, TWO_COLUMN_RIGHT, 320, y)
    c.showPage()
    # page 3
    _furniture(c, 3, 4)
    y = _heading(c, "3 Parts table", TOP, key="p3", outline=("Parts table", 0) if o else None)
    y = _lines(c, ["The parts are listed below with their sizes."], LEFT, y)
    table = Table(TABLE_ROWS, colWidths=[120, 120, 80])
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black),
                               ("FONT", (0, 0), (-1, -1), "Helvetica", 10)]))
    _, h = table.wrapOn(c, RIGHT - LEFT, 400)
    table.drawOn(c, LEFT, y - h)
    y = y - h - 30
    y = _lines(c, ["Ordering notes"], LEFT, y, font="Helvetica-Bold")
    _lines(c, ["Order bolts and nuts together, they come in pairs."], LEFT, y)
    c.showPage()
    # page 4
    _furniture(c, 4, 4)
    y = _heading(c, "4 Closing", TOP, key="p4", outline=("Closing", 0) if o else None)
    y = _lines(c, ["Closing words come first on the last page."], LEFT, y)
    y = _heading(c, "4.1 Support", y, size=13, key="p4s", outline=("Support", 1) if o else None)
    _lines(c, ["Support is given by mail to every customer."], LEFT, y)
    c.showPage()
    _page_labels(c)
    c.save()
    return path


def _page_labels(c: Canvas) -> None:
    c.addPageLabel(0, style="ROMAN_LOWER")
    c.addPageLabel(1, style="ARABIC", start=1)


def write_image_only(path: Path, pages: int = 2) -> Path:
    """Pages that only carry drawings (what a scan looks like to a text extractor)."""
    c = Canvas(str(path), pagesize=letter)
    for i in range(pages):
        c.setFillColor(colors.grey)
        c.rect(72, 72 + 20 * i, 400, 600, fill=1)
        c.showPage()
    c.save()
    return path


def write_truncated(path: Path, source: Path) -> Path:
    """The first half of a PDF (a download cut short)."""
    data = source.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


_WORDS = [
    "the", "widget", "assembly", "requires", "careful", "calibration", "of", "every",
    "spindle", "before", "the", "housing", "is", "sealed", "and", "the", "operator",
    "records", "each", "measured", "tolerance", "in", "the", "log", "so", "that", "later",
    "inspections", "can", "compare", "readings", "across", "production", "batches",
]


def write_book(path: Path, pages: int = 300) -> Path:
    """A long book for timing: a header and footer on every page, a chapter heading every ten
    pages and a section heading every other page, 44 lines of 10-point text a page, every
    fifth page set in two columns."""
    c = Canvas(str(path), pagesize=letter)
    for p in range(1, pages + 1):
        _furniture(c, p, pages)
        y = 720.0
        if p % 10 == 1:
            y = _heading(c, f"Chapter {p // 10 + 1}", y, size=18)
        if p % 2 == 0:
            title = _line(p, -1, 3).capitalize()
            y = _heading(c, f"{p // 10 + 1}.{p % 10} {title}", y, size=13)
        rows = int((y - 70) // LEADING)
        if p % 5 == 0:
            _lines(c, [_line(p, i, 5) for i in range(rows)], LEFT, y)
            _lines(c, [_line(p, i + rows, 5) for i in range(rows)], 320, y)
        else:
            _lines(c, [None if i % 9 == 8 else _line(p, i, 14) for i in range(rows)], LEFT, y)
        c.showPage()
    c.save()
    return path


def _line(page: int, row: int, words: int) -> str:
    """A line of the book: words drawn by a generator seeded with its place, so no line
    repeats at the same height on other pages (that is what a running header does)."""
    pick = random.Random(page * 1000 + row)
    return " ".join(pick.choice(_WORDS) for _ in range(words))


def write_offset_columns(path: Path) -> Path:
    """One page: a heading, two columns whose baselines do not line up (the right one starts
    half a line lower), a paragraph across the full width below them, then one short line in
    each column on the same baseline."""
    c = Canvas(str(path), pagesize=letter)
    y = _heading(c, "Offset columns", TOP)
    _lines(c, TWO_COLUMN_LEFT, LEFT, y)
    _lines(c, TWO_COLUMN_RIGHT, 320, y - 6)
    _lines(c, ["A closing paragraph runs across the whole width of the page below both columns,",
               "long enough to cross the gutter between them."], LEFT, y - 120)
    _lines(c, ["Left after the break sits under the full-width text."], LEFT, y - 170)
    _lines(c, ["Right after the break sits beside it."], 320, y - 170)
    c.save()
    return path


REVERSED_LINES = ("Scrambled glyph order still reads as words.",
                  "Second line of the same paragraph.")


def write_reversed_glyphs(path: Path) -> Path:
    """One paragraph whose letters are drawn one by one, last letter first (some producers
    write glyphs in no reading order at all). PDFium's text page already puts such glyphs back
    in line order; the test keeps the reader honest about it."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    c = Canvas(str(path), pagesize=letter)
    c.setFont("Helvetica", 11)
    for y, line in zip((TOP, TOP - 14), REVERSED_LINES, strict=True):
        x, placed = float(LEFT), []
        for ch in line:
            placed.append((x, ch))
            x += stringWidth(ch, "Helvetica", 11)
        for x, ch in reversed(placed):
            c.drawString(x, y, ch)
    c.save()
    return path
