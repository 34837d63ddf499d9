"""The blocks of an HTML or XHTML element's content, in reading order.

Shared by the HTML reader (:mod:`excerpt.ingest.documents.html`, which first finds a page's
main content) and the EPUB reader (a chapter's body).  ``h1``–``h6`` are headings (level 1–6);
paragraphs and other runs of text between block elements are paragraphs; an ``li`` is a list
item at its nesting depth (0 outermost); a data table is one row per ``tr``, its cells joined
with ``" | "`` (a cell spanning columns is one cell, so its text comes once); a table that holds
headings, tables or preformatted text is page layout and is read as text; ``<pre>`` is one code
block, whole, line breaks and indentation kept.  Links keep their text.  A footnote or endnote
(DocBook and Sphinx ``class="footnote"``, ``role="doc-footnote"``, EPUB 3 ``epub:type``) is a
``footnote`` block.  White space runs become one space, soft hyphens and zero-width characters
go (they would split words for search).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from excerpt.ingest.documents.blocks import Block, BlockKind

__all__ = ["BLOCKISH", "EPUB_TYPE", "HEADINGS", "SKIP", "blocks_of", "epub_type", "inline_text",
           "is_note", "normalize", "remove_keeping_tail", "tag_in", "tag_of"]

Element = Any  # lxml elements (lxml ships no type information)

HEADINGS = {f"h{n}": n for n in range(1, 7)}
_LISTS = {"ul", "ol", "menu", "dir"}
# Never text: scripts, styles, embedded objects, form controls, the head.
SKIP = {"script", "style", "noscript", "template", "iframe", "object", "embed", "svg",
        "canvas", "button", "select", "input", "textarea", "head", "title", "meta", "link",
        "math", "audio", "video", "map", "dialog", "datalist", "option"}
BLOCKISH = {"html", "body", "main", "article", "section", "div", "p", "blockquote", "ul", "ol",
            "menu", "dir", "li", "dl", "dt", "dd", "table", "caption", "thead", "tbody",
            "tfoot", "tr", "td", "th", "pre", "figure", "figcaption", "header", "footer",
            "aside", "nav", "address", "details", "summary", "hr", "center", "form",
            "fieldset", "legend", "hgroup", "listing", "xmp", "search", *HEADINGS}
EPUB_TYPE = "{http://www.idpf.org/2007/ops}type"
_PERMALINK_MARKS = {"", "#", "¶", "§", "🔗", "link", "permalink"}
_SPACE = re.compile(r"\s+")
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")


def is_note(el: Element) -> bool:
    """A footnote or endnote (DocBook and Sphinx classes, ARIA roles, EPUB 3 ``epub:type``)."""
    names = el.get("class", "").lower().split() + epub_type(el)
    return (any(n.startswith(("footnote", "endnote", "rearnote")) for n in names)
            or el.get("role", "") in ("doc-footnote", "doc-endnote", "doc-endnotes"))


def epub_type(el: Element) -> list[str]:
    """The element's ``epub:type`` values (namespaced when read as XML, literal when a
    chapter that is not well-formed was read by the HTML parser)."""
    return (el.get(EPUB_TYPE) or el.get("epub:type") or "").lower().split()


def tag_in(el: Element, tags: set[str]) -> bool:
    return tag_of(el) in tags or any(tag_of(d) in tags for d in el.iterdescendants())


def tag_of(el: Element) -> str:
    """The element's lower-case tag ('' for comments, entities and processing instructions)."""
    tag = el.tag
    return tag.lower() if isinstance(tag, str) else ""


def normalize(text: str) -> str:
    """Runs of white space as one space, invisible characters (soft hyphens…) dropped."""
    return _SPACE.sub(" ", _INVISIBLE.sub("", text)).strip()


def inline_text(el: Element) -> str:
    """An element's text as one line: block boundaries and ``<br>`` become spaces."""
    parts: list[str] = []
    _gather(el, parts, keep_space=False)
    return normalize("".join(parts))


def _gather(el: Element, parts: list[str], keep_space: bool) -> None:
    tag = tag_of(el)
    if not tag or tag in SKIP:
        return
    if tag == "br":
        parts.append("\n" if keep_space else " ")
    edge = "" if keep_space or tag not in BLOCKISH else " "
    parts.append(edge + (el.text or ""))
    for child in el:
        _gather(child, parts, keep_space)
        parts.append(child.tail or "")
    parts.append(edge)


def blocks_of(root: Element) -> list[Block]:
    """The blocks of an element's content in reading order (see the module)."""
    walker = _Walker()
    walker.container(root, "paragraph", 0, 0)
    return walker.blocks


class _Walker:
    """Collects blocks; runs of inline content between block elements become one block."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.pending: list[str] = []

    def flush(self, kind: BlockKind, level: int) -> None:
        text = normalize("".join(self.pending))
        self.pending = []
        if text:
            self.blocks.append(Block(kind, text, level=level))

    def container(self, el: Element, kind: BlockKind, level: int, depth: int) -> None:
        """``el``'s text as ``kind`` blocks; ``depth`` is the depth of lists inside it."""
        self.pending.append(el.text or "")
        for child in el:
            tag = tag_of(child)
            if tag in BLOCKISH or (tag and tag not in SKIP and tag_in(child, BLOCKISH)):
                self.flush(kind, level)
                self.block(child, tag, kind, level, depth)
            elif tag and tag not in SKIP:
                self.pending.append(_raw_inline(child))
            self.pending.append(child.tail or "")
        self.flush(kind, level)

    def block(self, el: Element, tag: str, kind: BlockKind, level: int, depth: int) -> None:
        if kind == "paragraph" and is_note(el):
            kind = "footnote"
        if tag in HEADINGS:
            text = _heading_text(el)
            if text:
                self.blocks.append(Block("heading", text, level=HEADINGS[tag]))
        elif tag in ("pre", "listing", "xmp"):
            self.code(el)
        elif tag == "table" and not _layout(el):
            self.table(el)
        elif tag in _LISTS:
            for child in el:
                if tag_of(child) == "li":
                    self.container(child, "list_item", depth, depth + 1)
                elif tag_of(child):
                    self.container(child, kind, level, depth + 1)
                self.pending.append(child.tail or "")
            self.flush(kind, level)
        elif tag == "dl":
            self.definitions(el, kind, level, depth)
        elif tag != "hr":
            self.container(el, kind, level, depth)

    def definitions(self, el: Element, kind: BlockKind, level: int, depth: int) -> None:
        """A definition list: each term opens the first block of its definition ("nocheck:
        This tag says..."), so no chunk holds a term without what defines it, or the
        definition without its term."""
        terms: list[str] = []
        for child in el:
            tag = tag_of(child)
            if tag == "dt":
                terms.append(inline_text(child))
            elif tag:  # a <dd>, or an element wrapping a term's definition
                first = len(self.blocks)
                self.container(child, kind, level, depth)
                self._lead(first, ", ".join(t for t in terms if t))
                terms = []
        self._lead(len(self.blocks), ", ".join(t for t in terms if t))  # terms left over

    def _lead(self, first: int, term: str) -> None:
        """Opens the block at ``first`` with ``term`` (a block of its own when there is none,
        or when that block is code, which must stay as written)."""
        if not term:
            return
        if first < len(self.blocks) and self.blocks[first].kind != "code":
            block = self.blocks[first]
            self.blocks[first] = replace(block, text=f"{term}: {block.text}")
        else:
            self.blocks.insert(first, Block("paragraph", term))

    def code(self, el: Element) -> None:
        """One block, whole; a ``<pre>`` holding nothing but several ``<code>`` elements (one
        example in two syntaxes, as Node.js' manual has) gives them one per line. A ``<pre>``
        mixing them with other markup is a terminal session (DocBook's ``screen``: prompt and
        output in ``<code>``, what the user types in ``<strong><code>``) and is read whole."""
        codes = [c for c in el if tag_of(c) == "code"]
        texts = []
        for piece in codes if _only_codes(el, codes) else [el]:
            parts: list[str] = []
            _gather(piece, parts, keep_space=True)
            texts.append(_INVISIBLE.sub("", "".join(parts)).strip("\n").rstrip())
        text = "\n".join(t for t in texts if t.strip())
        if text:
            self.blocks.append(Block("code", text))

    def table(self, el: Element) -> None:
        for caption in el.iter("caption"):
            self.pending.append(inline_text(caption))
            self.flush("paragraph", 0)
        for row in el.iter("tr"):
            cells = [inline_text(c) for c in row if tag_of(c) in ("td", "th")]
            text = " | ".join(c for c in cells if c)
            if text:
                self.blocks.append(Block("table_row", text))


def _only_codes(pre: Element, codes: list[Element]) -> bool:
    """Whether ``pre`` holds two or more ``<code>`` elements and no other text (an empty
    control such as Node.js' syntax toggle is not text)."""
    if len(codes) < 2 or (pre.text or "").strip():
        return False
    return not any((c.tail or "").strip() or (tag_of(c) != "code" and "".join(c.itertext()).strip())
                   for c in pre if tag_of(c))


def _heading_text(el: Element) -> str:
    """A heading's text without its permalink ("#", "¶" linking to itself, as Sphinx and
    Node.js add)."""
    for link in list(el.iter("a")):
        if (link.get("href") or "").startswith("#") and \
                normalize("".join(link.itertext())) in _PERMALINK_MARKS:
            remove_keeping_tail(link)
    return inline_text(el)


def remove_keeping_tail(el: Element) -> None:
    """Remove ``el`` but keep its tail text (the text after it belongs to its parent)."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        previous = el.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def _raw_inline(el: Element) -> str:
    parts: list[str] = []
    _gather(el, parts, keep_space=False)
    return "".join(parts)


def _layout(table: Element) -> bool:
    """A table used to lay a page out (it holds headings, tables or preformatted text)."""
    if table.get("role") in ("presentation", "none"):
        return True
    return any(tag_of(d) in {"table", "pre", *HEADINGS} for d in table.iterdescendants())
