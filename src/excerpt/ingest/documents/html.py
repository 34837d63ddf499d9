"""HTML pages read as blocks: the main content, without navigation and boilerplate.

A saved web page or an HTML manual is mostly what a reader skips: menus, breadcrumbs, a
sidebar, "Prev | Next" bars, a footer, scripts.  Indexed, they would make every page of a
manual match "Next chapter" and crowd the passages out, so they are dropped before blocks are
taken (:func:`main_content`):

* elements that say what they are: ``nav``, ``aside``, ``footer``, ``form``, ``script``,
  ``style``…, a ``header`` outside an article (unless it holds a heading),
  ``role="navigation"`` (and banner, contentinfo, complementary, search), hidden elements,
  and the class or id names that generated manuals use for the same things (``navheader``,
  ``sphinxsidebar``, ``toc``…), but never a footnote (``class="footnote"``, ``epub:type``)
  nor DocBook's titled ``sidebar`` notes, which are set in the text;
* lists, tables and divisions that are mostly links (three links or more, 60 % of their text
  in links): menus and tables of contents without a name;
* then ``<main>`` / ``role="main"`` is the content when the page has one, else its
  ``<article>``\\s, else the text-density rule: from ``<body>``, step into the one child that
  holds 80 % of the text (unless a sibling holds a heading), so an unnamed page frame is left.

Blocks are then taken by :mod:`excerpt.ingest.documents.html_blocks` (headings, paragraphs,
list items with depth, table rows, ``<pre>`` whole, footnotes).  The charset is the byte order
mark's, else the meta tag's or the XML declaration's, else UTF-8, else windows-1252 (what
browsers assume).  The title is ``<title>``, else the first ``h1``, else the first heading,
else the file name.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree  # type: ignore[import-untyped, unused-ignore]

from excerpt.errors import CorpusError
from excerpt.ingest.documents.blocks import Block, StructuredDoc
from excerpt.ingest.documents.html_blocks import (
    HEADINGS,
    SKIP,
    blocks_of,
    inline_text,
    is_note,
    normalize,
    remove_keeping_tail,
    tag_in,
    tag_of,
)
from excerpt.ingest.files import head_of

__all__ = ["decode", "drop_boilerplate", "drop_link_lists", "looks_like", "main_content",
           "parse_html", "parse_xhtml", "read", "title_of"]

Element = Any  # lxml elements (lxml ships no type information)

_DROP_TAGS = {"nav", "aside", "footer", "form", *SKIP}
_DROP_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu",
               "menubar", "toolbar"}
# Class and id names generated manuals and sites give to their navigation (exact tokens).
_DROP_NAMES = {"nav", "navbar", "navheader", "navfooter", "navigation", "topnav", "bottomnav",
               "subnav", "sidenav", "side-nav", "nav-path", "breadcrumb", "breadcrumbs", "menu",
               "menubar", "sidebar", "sphinxsidebar", "site-header", "site-footer",
               "page-footer", "footer", "masthead", "banner", "skip-link", "skiplink", "share",
               "social", "related", "toc", "headerlink", "anchorjs-link", "cookie-banner",
               "cookie-notice", "cookie-consent", "linenos", "linenodiv"}
_LINKY_TAGS = {"ul", "ol", "menu", "dl", "table", "div"}
_LINKY_MIN_LINKS = 3
_LINKY_RATIO = 0.6
_PROSE_CHARS = 80  # a paragraph with this much text outside links is content, not a menu
_DOMINANT = 0.8
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)
_XML_ENCODING = re.compile(rb"^<\?xml[^>]+encoding\s*=\s*[\"']([A-Za-z0-9_.:-]+)", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_SNIFF = re.compile(rb"<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>]|title[\s>])", re.I)
_SNIFF_BYTES = 4096
# WHATWG: these labels mean windows-1252 in a web page.
_AS_1252 = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "us-ascii", "ascii", "l1"}

def read(path: Path, doc_id: str, *, data: bytes | None = None) -> StructuredDoc:
    """One HTML file as a :class:`StructuredDoc` of its main content (see the module);
    ``data``: its bytes, when already read."""
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CorpusError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    root = parse_html(data)
    if root is None:
        raise CorpusError(f"{path}: not an HTML document (nothing to parse)")
    title = title_of(root)
    blocks: list[Block] = []
    for part in main_content(root):
        blocks.extend(blocks_of(part))
    if not blocks:
        raise CorpusError(f"{path}: no text found in the HTML document")
    title = title or _first_heading(blocks) or path.stem
    return StructuredDoc(doc_id=doc_id, title=title, blocks=blocks,
                         metadata={"format": "html"})


def looks_like(path: Path, head: bytes | None = None) -> bool:
    """True when the file's first bytes (``head``, when already read) are HTML markup (a
    doctype, ``<html>``, ``<body>``…)."""
    head = head_of(path, _SNIFF_BYTES, head)
    if head is None:
        return False
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        head = head.decode("utf-16", errors="ignore").encode("ascii", errors="ignore")
    elif b"\0" in head:
        return False
    return _SNIFF.search(head) is not None


def decode(data: bytes) -> str:
    """The page's text, decoded by its byte order mark, declared charset, or a guess."""
    for bom, name in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                      (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(name, errors="replace")
    head = data[:_SNIFF_BYTES]
    found = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    if found:
        codec = _codec(found.group(1).decode("ascii").lower())
        if codec:
            return data.decode(codec, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _codec(label: str) -> str | None:
    if label in _AS_1252:
        return "cp1252"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def parse_html(data: bytes) -> Element | None:
    """The document's root element (HTML parser: forgiving, no network, no comments)."""
    text = _XML_DECL.sub("", decode(data), count=1)
    parser = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True,
                              no_network=True)
    try:
        return etree.fromstring(text.encode("utf-8"), parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def parse_xhtml(data: bytes) -> Element | None:
    """An XHTML document (EPUB content) by the XML parser, tags without their namespace; the
    HTML parser when it is not well-formed (``&nbsp;`` without a DTD, say)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        return parse_html(data)
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.startswith("{"):
            el.tag = etree.QName(el).localname
    return root


def title_of(root: Element) -> str:
    """The ``<title>``'s text, else the first ``h1``'s ('' when there is neither)."""
    for el in root.iter("title"):
        if text := normalize("".join(el.itertext())):
            return text
    for el in root.iter("h1"):
        if text := inline_text(el):
            return text
    return ""


def _first_heading(blocks: list[Block]) -> str:
    return next((b.text for b in blocks if b.kind == "heading"), "")


# --- boilerplate and the main content -----------------------------------------------------


def main_content(root: Element) -> list[Element]:
    """The elements that hold the page's content, boilerplate removed (see the module)."""
    body = next(root.iter("body"), root)
    drop_boilerplate(body)
    drop_link_lists(body, keep_if_all=True)
    mains = [el for el in body.iter() if tag_of(el) == "main" or el.get("role") == "main"]
    if len(mains) == 1:
        return mains
    sizes = _measure(body)
    if mains:
        return [max(mains, key=lambda el: sizes[el].chars)]
    articles = [el for el in body.iter("article") if not _inside(el, "article")]
    if articles:
        return articles
    return [_dense(body, sizes)]


def drop_link_lists(body: Element, keep_if_all: bool) -> None:
    """Remove lists, tables and divisions that are mostly links (menus, tables of contents);
    with ``keep_if_all``, none when they are all there is (a page that is a list of links)."""
    sizes = _measure(body)
    linky = [el for el in body.iter(*_LINKY_TAGS) if _is_linky(el, sizes)]
    found = set(linky)
    outermost = [el for el in linky if not _inside_any(el, found)]
    if keep_if_all and sum(sizes[el].chars for el in outermost) >= sizes[body].chars:
        return
    for el in outermost:
        remove_keeping_tail(el)


@dataclass(frozen=True)
class _Size:
    chars: int  # characters of text, white space not counted
    linked: int  # of which inside links
    links: int  # links inside


def _measure(root: Element) -> dict[Any, _Size]:
    """Every element's text size, in one pass (the link and density rules compare them)."""
    sizes: dict[Any, _Size] = {}

    def walk(el: Element, in_link: bool) -> _Size:
        tag = tag_of(el)
        if not tag or tag in SKIP:
            return _Size(0, 0, 0)
        link = in_link or tag == "a"
        chars = _chars(el.text)
        linked, links = (chars if link else 0), int(tag == "a")
        for child in el:
            inner, tail = walk(child, link), _chars(child.tail)
            chars += inner.chars + tail
            linked += inner.linked + (tail if link else 0)
            links += inner.links
        sizes[el] = _Size(chars, linked, links)
        return sizes[el]

    walk(root, False)
    return sizes


def _chars(text: str | None) -> int:
    return len("".join(text.split())) if text else 0


def drop_boilerplate(body: Element) -> None:
    """Remove navigation, page furniture, scripts and hidden elements in place."""
    doomed = [el for el in body.iter() if el is not body and _is_boilerplate(el)]
    found = set(doomed)
    for el in doomed:
        if not _inside_any(el, found):
            remove_keeping_tail(el)


def _is_boilerplate(el: Element) -> bool:
    tag = tag_of(el)
    if not tag or is_note(el):
        return False
    if tag in _DROP_TAGS or el.get("role", "").lower() in _DROP_ROLES:
        return True
    if tag == "header" and not _inside(el, "article", "main", "section"):
        return not tag_in(el, set(HEADINGS))  # an EPUB chapter's <header><h1> is content
    if el.get("hidden") is not None or el.get("aria-hidden", "").lower() == "true":
        return True
    if _HIDDEN_STYLE.search(el.get("style", "")):
        return True
    names = set(el.get("class", "").lower().split()) | {el.get("id", "").lower()}
    named = names & _DROP_NAMES
    if named == {"sidebar"} and _boxed_note(el):
        return False
    return bool(named) and not _holds_content(el)


def _boxed_note(el: Element) -> bool:
    """DocBook's ``sidebar``: a titled note boxed beside the running text (TIP, CAUTION, BACK
    TO BASICS...), written as ``<div class="sidebar">`` opening with a ``titlepage``; content,
    unlike a site's navigation sidebar (The Debian Administrator's Handbook has 367)."""
    return any(tag_of(c) == "div" and "titlepage" in c.get("class", "").split() for c in el)


def _holds_content(el: Element) -> bool:
    """A named 'header' that wraps the page's h1 or main is not furniture."""
    return tag_in(el, {"main", "article", "h1", "body"}) or any(
        d.get("role") == "main" for d in el.iter())


def _is_linky(el: Element, sizes: dict[Any, _Size]) -> bool:
    size = sizes.get(el)
    if size is None or size.links < _LINKY_MIN_LINKS or size.chars == 0:
        return False
    if size.linked / size.chars < _LINKY_RATIO:
        return False
    return not any(_unlinked(p, sizes) >= _PROSE_CHARS
                   for p in el.iter("p", "pre", "blockquote"))


def _unlinked(el: Element, sizes: dict[Any, _Size]) -> int:
    """How much of ``el``'s text is outside links."""
    size = sizes.get(el, _Size(0, 0, 0))
    return size.chars - size.linked


def _dense(body: Element, sizes: dict[Any, _Size]) -> Element:
    """Step down from ``body`` into the one child holding most of the text (see the module)."""
    current = body
    while True:
        total = sizes[current].chars
        children = [c for c in current if c in sizes]
        best = max(children, key=lambda c: sizes[c].chars, default=None)
        if best is None or total == 0 or sizes[best].chars < _DOMINANT * total:
            return current
        if any(tag_in(c, set(HEADINGS)) for c in children if c is not best):
            return current
        current = best


def _inside(el: Element, *tags: str) -> bool:
    return any(tag_of(a) in tags for a in el.iterancestors())


def _inside_any(el: Element, others: set[Any]) -> bool:
    return any(a in others for a in el.iterancestors())
