"""The common shape of a structured document (PDF, Word, HTML, EPUB, Markdown) before it is
cut into nodes: a title and a flat list of blocks in reading order.

Each format's reader only finds blocks (:mod:`excerpt.ingest.documents.pdf` and its siblings);
one chunker (:mod:`excerpt.ingest.documents.structure`) turns blocks into nodes for all of them,
so every format follows the same rules: a heading is never cut from the block after it, a table
row and a code block are never split, and every node says where it came from (page, section).

Node metadata of these formats (the contract the chunker writes and citations, the web UI and
``ask``'s scope read):

- ``path``: the document id (the file's path relative to the folder given); ``format``: the
  reader (``pdf``, ``docx``, ``html``, ``epub``, ``markdown``); ``chunk``: the node's index.
- ``section``: the heading path of the node's first block that is not a heading (a node that
  opens with headings is in the section they open), joined with ``" > "``; ``headings``:
  the same as a list (outermost first); absent before the first heading.
- ``section_number``: the number that opens the innermost numbered heading (``"2.1"`` for
  "2.1 Requirements"), when there is one; ``section_numbers``: the numbers of every numbered
  heading on the path (``["2", "2.1"]``), so "in section 2" finds 2.1 as well.
- ``page``: the 1-based page of the node's first block (PDF); ``page_end``: its last page when
  the node spans pages; ``pages``: every page the node touches (``[11, 12]``), so "on page 12"
  finds a node that starts on page 11; ``page_label``: the page's printed label when the PDF
  gives labels that differ from the page number (``"iv"``); ``page_end_label``: with it, the
  printed label of the node's last page when that is another page (a citation of a node
  printed on pages 11 and 12 says ``p. 11–12``, not ``p. 11``).
- ``chapter``: an EPUB chapter's number as the book gives it ("3. Binary packages" is 3), else
  its 1-based position among the book's chapters, front matter not counted; absent for what
  the book does not number as a chapter (:mod:`excerpt.ingest.documents.epub`);
  ``chapter_title``: its title.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

BlockKind = Literal["heading", "paragraph", "list_item", "table_row", "code", "footnote"]


@dataclass(frozen=True)
class Block:
    """One unit of a document in reading order.

    ``text`` is the block's text as it should be searched and quoted (a table row's cells
    joined with ``" | "``, a code block with its line breaks, a list item without its bullet);
    ``level`` is a heading's level (1 outermost) or a list item's depth (0 outermost);
    ``page`` the 1-based page it is on (PDF; None for formats without pages), ``page_label``
    the page's printed label when it differs; ``chapter``/``chapter_title`` an EPUB chapter's
    number (the book's own, or its position among the chapters) and its title.
    """

    kind: BlockKind
    text: str
    level: int = 0
    page: int | None = None
    page_label: str | None = None
    chapter: int | None = None
    chapter_title: str | None = None


@dataclass
class StructuredDoc:
    """One file read: its document id, title, blocks and document metadata (``format``,
    ``author`` …). A reader that finds no text at all raises instead of returning one."""

    doc_id: str
    title: str
    blocks: list[Block] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
