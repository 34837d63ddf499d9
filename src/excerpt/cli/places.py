"""Where a passage is, as the CLI prints it in citation lines and search hits (the web UI's
counterpart is server/static/places.js)."""

from __future__ import annotations

from typing import Any

_BOOK_KEYS = ("book", "chapter", "article", "regulation", "author")


def citation_place(metadata: dict[str, Any]) -> str:
    """Where a cited passage is, for its citation line. A document (PDF, Word, HTML, EPUB,
    Markdown, text: its node has a ``path``) by its chapter, page and innermost section as the
    reader writes them (ingest/documents/blocks.py): ``chapter 3 Storms, p. 11–12, section 2.1
    Requirements``; books, regulations and code by their keys as ``key=value``."""
    if "path" not in metadata or "regulation" in metadata:
        return ", ".join(f"{k}={v}" for k, v in metadata.items() if k in _BOOK_KEYS)
    parts = []
    if isinstance(metadata.get("chapter"), int):
        parts.append(" ".join(str(p) for p in ("chapter", metadata["chapter"],
                                                metadata.get("chapter_title")) if p))
    page = page_place(metadata)
    if page:
        parts.append(page)
    headings = metadata.get("headings") or str(metadata.get("section") or "").split(" > ")
    if headings[-1]:
        parts.append(f"section {headings[-1]}")
    return ", ".join(parts)


def page_place(metadata: dict[str, Any]) -> str:
    """``p. 12``, ``p. 11–12`` for a passage spanning pages, the printed label (``p. iv``)
    when the PDF gives one; empty without a page."""
    if metadata.get("page_label"):
        end = metadata.get("page_end_label")
        label = metadata["page_label"]
        return f"p. {label}–{end}" if end and end != label else f"p. {label}"
    page, end = metadata.get("page"), metadata.get("page_end")
    if page is None:
        return ""
    return f"p. {page}–{end}" if end is not None and end != page else f"p. {page}"
