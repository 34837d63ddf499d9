"""One chunker for every structured format: a :class:`StructuredDoc`'s blocks -> nodes.

The document's cleaned text is its blocks' texts joined by ``"\\n\\n"`` (blank blocks left
out), and a node is a span of it (``node.text == text[start:end]``), so a quote can always be
found again in the document.  Nodes are cut where the structure allows, not where a character
count falls:

- blocks are packed in order into nodes of about ``options.document_chars`` (the
  ``document_chunk_chars`` setting, 1200: on the 57 tune questions over eight real manuals of
  bench/manuals.py, the answering passage was in the top 5 for 45 in hybrid at 800 characters,
  49 at 1000, 51 at 1200 and 50 at 1600; at 800 an answer and the command it names, or a
  section's two halves, were often two nodes); a node may run up
  to half a budget past it (:data:`SECTION_STRETCH`) to hold the rest of its section, when it
  is all in that section: the last paragraph of a section is not cut off on its own, away from
  the heading and the lead-in that say what it is about, and the next section starts a node
  of its own instead of a node's tail (on the 27 tune questions over four real manuals of
  bench/manuals.py, 2 more answers in the top 5 in BM25 and 1 more in hybrid; nodes of those
  manuals average 681 characters instead of 596);
- a heading is never the last block of a node: it goes with the block after it (only a heading
  that ends the document has nothing to go with); so does a short lead-in paragraph ending
  with a colon when the node is full ("Examples:" stays with the examples);
- a heading of level 1 or 2, and a new EPUB chapter, start a new node, so a node does not
  straddle two sections of the top of the outline;
- a table row and a code block are never split: one longer than the budget is a node of its
  own, whole (a search hit on half a row or half a function is not an answer);
- a paragraph, list item or footnote longer than the budget is cut at sentence, line or word
  boundaries by :func:`excerpt.ingest.chunking.chunk_spans`, with its overlap (metadata
  ``overlap`` as in plain text), so the pieces of one long paragraph share a little context.

Every node carries the metadata contract of :mod:`excerpt.ingest.documents.blocks`, taken from
its first block (``pages``/``page_end`` from all of them), and the import's security labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from excerpt.ingest._common import normalize_newlines
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.chunking import chunk_spans
from excerpt.ingest.documents.blocks import Block, StructuredDoc
from excerpt.ingest.nodes import chunk_node
from excerpt.types import Document, Node

__all__ = ["BLOCK_SEPARATOR", "cleaned_text", "nodes_of", "section_number"]

BLOCK_SEPARATOR = "\n\n"
_UNSPLITTABLE = ("table_row", "code")
_TOP_LEVEL = 2  # headings of level 1..2 start a new node
SECTION_STRETCH = 1.5
"""How far past its budget a node may run to hold the rest of its section (budgets)."""
# "2.1 Requirements", "Section 3: Scope", "Chapter 4. Tools", "§ 5 Fees", "12) Terms"
_NUMBER = re.compile(
    r"^\s*(?:(?:section|chapter|part|article|appendix|§)\s*)?(\d{1,3}(?:\.\d{1,3})*)(?:[.):]|\s|$)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Atom:
    """A packing unit: a whole block, or one piece of a long paragraph."""

    block: int  # index into the kept blocks
    start: int  # where the piece starts, its overlap included
    core_start: int  # where it starts without its overlap
    end: int


def section_number(heading: str) -> str | None:
    """The number that opens a heading (``"2.1"`` for "2.1 Requirements"), or None."""
    m = _NUMBER.match(heading)
    return m.group(1) if m else None


def cleaned_text(blocks: list[Block]) -> tuple[str, list[Block], list[int]]:
    """``(text, kept_blocks, starts)``: the non-blank blocks, trimmed, joined by ``"\\n\\n"``,
    and where each kept block starts in that text.

    A block is trimmed of surrounding white space (a code block only of blank lines before it
    and white space after it: its first line's indentation is code), and its line endings are
    normalised to ``"\\n"``, so every node starts and ends on text.
    """
    kept = [b for b in (_trimmed(b) for b in blocks) if b.text]
    starts: list[int] = []
    pos = 0
    for b in kept:
        starts.append(pos)
        pos += len(b.text) + len(BLOCK_SEPARATOR)
    return BLOCK_SEPARATOR.join(b.text for b in kept), kept, starts


def _trimmed(block: Block) -> Block:
    text = normalize_newlines(block.text)
    if block.kind == "code":
        text = text.rstrip()
        text = text[text.rfind("\n", 0, len(text) - len(text.lstrip())) + 1 :]
    else:
        text = text.strip()
    return block if text == block.text else replace(block, text=text)


def nodes_of(doc: StructuredDoc, source: str, options: LoadOptions) -> tuple[Document, list[Node]]:
    """The document and its nodes (see the module docstring); ids ``f"{doc_id}:{i:04d}"``."""
    text, blocks, starts = cleaned_text(doc.blocks)
    fmt = str(doc.metadata.get("format", "document"))
    document = Document(
        id=doc.doc_id,
        title=doc.title,
        source=source,
        metadata={**doc.metadata, "path": doc.doc_id, "format": fmt, "chars": len(text)},
    )
    atoms = _atoms(text, blocks, starts, options)
    paths = _heading_paths(blocks)
    nodes: list[Node] = []
    for i, group in enumerate(_pack(atoms, blocks, options.document_chars)):
        first, last = group[0], group[-1]
        meta: dict[str, Any] = {"path": doc.doc_id, "format": fmt, "chunk": i}
        if first.core_start > first.start:
            meta["overlap"] = first.core_start - first.start
        meta.update(_where(blocks[first.block : last.block + 1],
                           paths[_first_text(blocks, first.block, last.block)]))
        nodes.append(chunk_node(doc.doc_id, i, text[first.start : last.end],
                                (first.start, last.end), title=doc.title, source=source,
                                options=options, metadata=meta))
    return document, nodes


def _atoms(text: str, blocks: list[Block], starts: list[int], options: LoadOptions) -> list[_Atom]:
    """Whole blocks, except that a splittable block longer than the budget becomes its pieces."""
    out: list[_Atom] = []
    for k, (block, start) in enumerate(zip(blocks, starts, strict=True)):
        if len(block.text) <= options.document_chars or block.kind in (*_UNSPLITTABLE, "heading"):
            out.append(_Atom(k, start, start, start + len(block.text)))
            continue
        for span in chunk_spans(block.text, options.document_chars, options.overlap_chars):
            out.append(_Atom(k, start + span.start, start + span.core_start, start + span.end))
    return out


def _pack(atoms: list[_Atom], blocks: list[Block], budget: int) -> list[list[_Atom]]:
    """Greedy packing by the rules of the module docstring."""
    sections = _sections(atoms, blocks)
    groups: list[list[_Atom]] = []
    current: list[_Atom] = []
    for i, atom in enumerate(atoms):
        if current:
            block, before = blocks[atom.block], blocks[current[-1].block]
            if block.chapter != before.chapter:  # headings that end a chapter stay in it
                groups.append(current)
                current = []
            elif _top_heading(block) or _full(current[0], atom, sections[i], block, budget):
                # the headings that end the node go with this block (if only headings so far,
                # they all stay with it, over budget if need be); so does a lead-in when the
                # node is full ("Examples:" with the code after it)
                full = not _top_heading(block)
                pending = _trailing_headings(current, blocks, budget if full else 0)
                if len(pending) < len(current):
                    groups.append(current[: len(current) - len(pending)])
                    current = pending
        current.append(atom)
    if current:
        groups.append(current)
    return groups


def _full(first: _Atom, atom: _Atom, section: tuple[int, int], block: Block,
          budget: int) -> bool:
    """Whether a node starting at ``first`` has no room for ``atom``: past the budget, unless
    the node is all in ``atom``'s section (``(start, end)``, its headings included), ``atom``
    is a whole block and the section ends within :data:`SECTION_STRETCH` budgets of the node's
    start: the last paragraph of a section is not cut off to make a node of its own."""
    if atom.end - first.start <= budget:
        return False
    whole = atom.start == atom.core_start and atom.end - atom.start == len(block.text)
    start, end = section
    return not (whole and block.kind != "heading" and first.start >= start
                and end - first.start <= SECTION_STRETCH * budget)


def _sections(atoms: list[_Atom], blocks: list[Block]) -> list[tuple[int, int]]:
    """Each atom's section as ``(start, end)``: from the first of the headings that open it
    (the document's start before any) to the end of the last atom before the next heading."""
    heading = [blocks[a.block].kind == "heading" for a in atoms]
    starts: list[int] = []
    start = 0
    for i, atom in enumerate(atoms):
        if heading[i] and (i == 0 or not heading[i - 1]):
            start = atom.start
        starts.append(start)
    ends = [0] * len(atoms)
    end = atoms[-1].end if atoms else 0
    for i in range(len(atoms) - 1, -1, -1):
        ends[i] = end
        if heading[i] and i:
            end = atoms[i - 1].end
    return list(zip(starts, ends, strict=True))


def _top_heading(block: Block) -> bool:
    return block.kind == "heading" and block.level <= _TOP_LEVEL


def _trailing_headings(group: list[_Atom], blocks: list[Block], budget: int = 0) -> list[_Atom]:
    """The headings that end ``group`` (all of it when it holds only headings); with a
    ``budget``, lead-ins too (:func:`_lead_in`)."""
    n = len(group)
    while n and (blocks[group[n - 1].block].kind == "heading"
                 or (budget and _lead_in(group[n - 1], blocks, budget))):
        n -= 1
    return group[n:]


def _lead_in(atom: _Atom, blocks: list[Block], budget: int) -> bool:
    """A short paragraph or list item that ends with a colon introduces the block after it."""
    block = blocks[atom.block]
    return (
        block.kind in ("paragraph", "list_item")
        and block.text.endswith(":")
        and atom.end - atom.start == len(block.text) <= budget // 2
    )


def _heading_paths(blocks: list[Block]) -> list[tuple[str, ...]]:
    """The heading path at each block (a heading's own path ends with itself)."""
    stack: list[tuple[int, str]] = []
    chapter: int | None = None
    out: list[tuple[str, ...]] = []
    for block in blocks:
        if block.chapter != chapter:  # a new chapter's outline starts afresh
            stack, chapter = [], block.chapter
        if block.kind == "heading":
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, " ".join(block.text.split())))
        out.append(tuple(title for _, title in stack))
    return out


def _first_text(blocks: list[Block], first: int, last: int) -> int:
    """The node's first block that is not a heading (its first block when all are): a node
    opening with "Manual", "2.1 Safety" and then text is in section 2.1, not in "Manual"."""
    return next((i for i in range(first, last + 1) if blocks[i].kind != "heading"), first)


def _where(blocks: list[Block], path: tuple[str, ...]) -> dict[str, Any]:
    """Section, page and chapter metadata of a node made of ``blocks``; ``path`` is the
    heading path of its first block that is not a heading."""
    meta: dict[str, Any] = {}
    first = blocks[0]
    if path:
        meta["section"] = " > ".join(path)
        meta["headings"] = list(path)
        numbers = [n for n in (section_number(h) for h in path) if n is not None]
        if numbers:
            meta["section_number"] = numbers[-1]
            meta["section_numbers"] = numbers
    pages = sorted({b.page for b in blocks if b.page is not None})
    if first.page is not None:
        meta["page"] = first.page
        if pages[-1] != first.page:
            meta["page_end"] = pages[-1]
        meta["pages"] = pages
        if first.page_label is not None and first.page_label != str(first.page):
            meta["page_label"] = first.page_label
            last = blocks[-1]
            if last.page != first.page and last.page_label is not None:
                meta["page_end_label"] = last.page_label
    if first.chapter is not None:
        meta["chapter"] = first.chapter
        if first.chapter_title:
            meta["chapter_title"] = first.chapter_title
    return meta
