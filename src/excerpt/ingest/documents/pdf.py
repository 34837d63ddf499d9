"""PDF files as structured documents: text per page in reading order, with headings, lists,
code, footnotes and table rows, and the page (and its printed label) on every block.

Reading goes page by page through PDFium (pypdfium2): characters with their boxes and fonts
(:mod:`.pdf_chars`), ruled tables (:mod:`.pdf_tables`), running headers, footers and page
numbers dropped (:mod:`.pdf_margins`), reading order and paragraphs (:mod:`.pdf_layout`), then
headings from the outline or the font sizes and hyphenation repaired (:mod:`.pdf_blocks`).

A PDF that cannot be read is an :class:`InputError` naming the file and saying why: encrypted
(it needs its password; excerpt does not guess), no text layer at all (a scan: excerpt does no
OCR), or damaged (not a PDF, truncated, or PDFium cannot parse it). Pages without text in an
otherwise readable PDF (scanned or damaged pages) are listed in the document metadata
(``pages_without_text``); so are the table-of-contents pages left out (``contents_pages``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from excerpt.errors import InputError
from excerpt.ingest.documents.blocks import StructuredDoc
from excerpt.ingest.documents.pdf_blocks import (
    OutlineEntry,
    PagePars,
    contents_pages,
    to_blocks,
)
from excerpt.ingest.documents.pdf_chars import Char, Run, page_chars, runs_of
from excerpt.ingest.documents.pdf_layout import Item, Table, paragraphs, reading_order
from excerpt.ingest.documents.pdf_margins import furniture_heights, strip_furniture
from excerpt.ingest.documents.pdf_tables import find_tables, page_rules, take_tables

__all__ = ["looks_like", "read"]

MAGIC = b"%PDF-"
_HEAD = 1024  # the header may follow a little junk (the PDF spec allows it within 1 KiB)
_TAIL = 2048  # where the %%EOF marker must be found

PageItems = tuple[float, list[Run], list[Table]]  # a page's height, runs and tables


def looks_like(path: Path) -> bool:
    """Whether the file starts as a PDF does (``%PDF-`` in its first KiB)."""
    try:
        with path.open("rb") as f:
            return MAGIC in f.read(_HEAD)
    except OSError:
        return False


def read(path: Path, doc_id: str, *, data: bytes | None = None) -> StructuredDoc:
    """Read one PDF (see the module docstring); raises :class:`InputError` naming the file.
    ``data``: its bytes, when already read (PDFium parses them; the file is not opened)."""
    pdf = _open(path) if data is None else _open_bytes(path, data)
    try:
        outline = _outline(pdf)
        pages, items, empty = _pages(pdf)
        if len(empty) == len(pages):
            raise InputError(f"{path}: the PDF has no text layer (a scanned document?); "
                             "excerpt does no OCR: run OCR on it first (e.g. ocrmypdf)")
        furniture = furniture_heights([(h, runs) for h, runs, _ in items])
        for page, (height, runs, tables) in zip(pages, items, strict=True):
            kept: list[Item] = [*strip_furniture(height, runs, furniture), *tables]
            page.paras = paragraphs(reading_order(kept, _gutter(runs)))
        contents = contents_pages(pages)
        for page in pages:
            if page.number in contents:
                page.paras = []
        blocks = to_blocks(pages, [e for e in outline if e.page not in contents])
        meta = _metadata(pdf)
    finally:
        pdf.close()
    if not blocks:
        raise InputError(f"{path}: the PDF has no text outside its headers and footers")
    title = meta.pop("title", "") or next(
        (b.text for b in blocks if b.kind == "heading"), path.stem)
    meta.update(format="pdf", pages=len(pages))
    if empty:
        meta["pages_without_text"] = empty
    if contents:
        meta["contents_pages"] = contents
    return StructuredDoc(doc_id=doc_id, title=title, blocks=blocks, metadata=meta)


def _open(path: Path) -> Any:
    """PDFium's document of the file at ``path``, once its first and last bytes (read in one
    open) look like a whole PDF's; PDFium then opens the path itself (a second open, of a
    file too large for the import to hold: PDFium reads a path natively)."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD)
            f.seek(max(0, path.stat().st_size - _TAIL))
            tail = f.read()
    except OSError:
        head = tail = b""
    _check(path, head, tail)
    return _parsed(path, str(path))


def _open_bytes(path: Path, data: bytes) -> Any:
    """As :func:`_open`, from the file's bytes (the same checks, on the same bytes)."""
    _check(path, data[:_HEAD], data[-_TAIL:])
    return _parsed(path, data)


def _check(path: Path, head: bytes, tail: bytes) -> None:
    """Refuses a file that does not start as a PDF or lacks the end marker of a whole one."""
    if MAGIC not in head:
        raise InputError(f"{path}: not a PDF (no %PDF- header)")
    if b"%%EOF" not in tail:
        raise InputError(f"{path}: the PDF is truncated or damaged (no %%EOF at its end)")


def _parsed(path: Path, source: str | bytes) -> Any:
    """PDFium's document of ``source`` (the file's path or its bytes)."""
    try:
        return pdfium.PdfDocument(source)
    except pdfium.PdfiumError as err:
        if getattr(err, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise InputError(f"{path}: the PDF is encrypted and needs a password; decrypt it "
                             "first (e.g. qpdf --decrypt --password=... in.pdf out.pdf)") from err
        raise InputError(f"{path}: the PDF is damaged and cannot be read ({err})") from err


def _pages(pdf: Any) -> tuple[list[PagePars], list[PageItems], list[int]]:
    """Per page: its number and label, its runs and tables; and the pages without text."""
    pages: list[PagePars] = []
    items: list[PageItems] = []
    empty: list[int] = []
    for i in range(len(pdf)):
        height, chars, tables, rest = _page(pdf, i)
        label = pdf.get_page_label(i) or None
        pages.append(PagePars(i + 1, label if label != str(i + 1) else None, height, []))
        items.append((height, runs_of(rest), tables))
        if not chars:
            empty.append(i + 1)
    return pages, items, empty


def _page(pdf: Any, index: int) -> tuple[float, list[Char], list[Table], list[Char]]:
    """A page's height, characters, tables and the characters outside them; a page PDFium
    cannot load counts as one without text (the others are still worth reading)."""
    try:
        page = pdf[index]
    except pdfium.PdfiumError:
        return 792.0, [], [], []
    try:
        chars = page_chars(page.get_textpage())
        tables, rest = take_tables(chars, find_tables(*page_rules(page))) if chars else ([], [])
        _, bottom, _, top = page.get_bbox()
        if bottom:  # a crop box above y=0: heights are measured from the visible bottom
            boxes: list[Char | Table] = [*chars, *tables]
            for box in boxes:
                box.y0, box.y1 = box.y0 - bottom, box.y1 - bottom
        return top - bottom, chars, tables, rest
    finally:
        page.close()


def _gutter(runs: list[Run]) -> float:
    """The narrowest gap between columns: one body font size (at least 6 points)."""
    sizes = sorted(r.size for r in runs)
    return max(6.0, sizes[len(sizes) // 2]) if sizes else 10.0


def _outline(pdf: Any) -> list[OutlineEntry]:
    """The outline's entries that point at a page; none when it cannot be read (a damaged
    outline costs the headings it would give, not the document)."""
    try:
        return _outline_entries(pdf)
    except (pdfium.PdfiumError, ValueError):
        return []


def _outline_entries(pdf: Any) -> list[OutlineEntry]:
    out = []
    for item in pdf.get_toc(max_depth=8):
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        if index is None:
            continue
        y = None
        mode, pos = dest.get_view()
        if mode == pdfium_c.PDFDEST_VIEW_XYZ and len(pos) >= 2 and pos[1]:
            y = float(pos[1])
        title = " ".join((item.get_title() or "").split())
        if title:
            out.append(OutlineEntry(item.level, title, index + 1, y))
    return out


def _metadata(pdf: Any) -> dict[str, Any]:
    meta = pdf.get_metadata_dict(skip_empty=True)
    out: dict[str, Any] = {}
    title = " ".join(str(meta.get("Title", "")).split())
    if title and title.lower() not in {"untitled", "untitled document"}:
        out["title"] = title
    if meta.get("Author"):
        out["author"] = " ".join(str(meta["Author"]).split())
    return out
