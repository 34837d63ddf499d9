"""EPUB books read as blocks: chapters in spine order, with their titles.

An EPUB is a zip of XHTML files; META-INF/container.xml names the package document (OPF),
whose manifest lists the files and whose spine gives the reading order.  Each content document
of the spine is a chapter: ``chapter`` is its 1-based position among them (what "in chapter 3"
is matched against), ``chapter_title`` its title from the table of contents (the EPUB 3 nav
document's ``toc``, else the EPUB 2 toc.ncx), else the chapter's first heading.  When the
table of contents points at several places in one file (a whole book in one XHTML file), the
title changes at each of the file's outermost entries' anchors; sections nested under a chapter
do not replace its title.  A chapter's blocks are taken by the HTML reader's rules
(:mod:`excerpt.ingest.documents.html_blocks`), after navigation, hidden elements and lists that
are mostly links (a contents page, an index) are dropped as on a web page.  The book's title,
authors and language come from the OPF's Dublin Core metadata.

The zip is read through :class:`~excerpt.ingest._archive.SafeZip` (zip bombs and names that
leave the archive are refused), and the XML without entity expansion or network.  Read with the
standard library and lxml: ebooklib is AGPL.  A book whose META-INF/encryption.xml encrypts
content (DRM; font obfuscation alone is fine) is refused with a clear error: there is no text to
read without the key.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag

from lxml import etree  # type: ignore[import-untyped, unused-ignore]

from excerpt.errors import CorpusError
from excerpt.ingest._archive import ArchiveLimits, SafeZip
from excerpt.ingest.documents import html
from excerpt.ingest.documents.blocks import Block, StructuredDoc
from excerpt.ingest.documents.html_blocks import (
    blocks_of,
    epub_type,
    inline_text,
    normalize,
    tag_of,
)

__all__ = ["looks_like", "read"]

Element = Any  # lxml elements (lxml ships no type information)

_MIMETYPE = b"application/epub+zip"
_CONTAINER = "META-INF/container.xml"
_CONTENT_TYPES = {"application/xhtml+xml", "text/html", "application/x-dtbook+xml"}
_NS = {"c": "urn:oasis:names:tc:opendocument:xmlns:container",
       "opf": "http://www.idpf.org/2007/opf", "dc": "http://purl.org/dc/elements/1.1/",
       "ncx": "http://www.daisy.org/z3986/2005/ncx/",
       "enc": "http://www.w3.org/2001/04/xmlenc#"}
_MARK = re.compile("\ue000([0-9]+)\ue001")
# Font obfuscation (IDPF, Adobe) is not DRM: the text is readable.
_FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}


@dataclass(frozen=True)
class _Entry:
    """A table-of-contents entry pointing into a file: ``fragment`` ('' for the file's start),
    its title, and its depth in the table of contents (0 outermost)."""

    fragment: str
    title: str
    depth: int


def read(path: Path, doc_id: str, *, limits: ArchiveLimits | None = None) -> StructuredDoc:
    """One EPUB file as a :class:`StructuredDoc` (see the module)."""
    with SafeZip(path, limits or ArchiveLimits(), "an EPUB book") as book:
        root = _root(path, book)
        _refuse_drm(path, book, root)
        opf_name = _package_name(path, book, root)
        package = _xml(path, book, opf_name)
        chapters = _spine(path, package, opf_name)
        titles = _toc_titles(path, book, package, opf_name)
        blocks: list[Block] = []
        for number, name in enumerate(chapters, start=1):
            body = _body(html.parse_xhtml(_member(path, book, name)))
            blocks += _chapter_blocks(body, number, _outermost(titles.get(name, [])))
    if not blocks:
        raise CorpusError(f"{path}: no text found in the EPUB book")
    metadata: dict[str, Any] = {"format": "epub"}
    authors = _dc(package, "creator")
    if authors:
        metadata["author"] = ", ".join(authors)
    if language := _dc(package, "language"):
        metadata["language"] = language[0]
    title = next(iter(_dc(package, "title")), "") or blocks[0].chapter_title or path.stem
    return StructuredDoc(doc_id=doc_id, title=title, blocks=blocks, metadata=metadata)


def _chapter_blocks(body: Element, number: int, entries: list[_Entry]) -> list[Block]:
    """A chapter's blocks with its number and title.  When the table of contents points at
    several places in one file (a book in one file), each block has the title of the entry
    before it: the entries' anchors are marked with a private-use token before blocks are
    taken, and the tokens are read back out of the blocks' text."""
    for index, entry in enumerate(entries):
        anchor = _anchor(body, entry.fragment) if entry.fragment else None
        if anchor is not None:
            anchor.text = f"\ue000{index}\ue001{anchor.text or ''}"
    found = blocks_of(body)
    title = entries[0].title if entries else next(
        (b.text for b in found if b.kind == "heading"), None)
    titled = []
    for block in found:
        marks = _MARK.findall(block.text)
        if not marks:
            titled.append(dataclasses.replace(block, chapter=number, chapter_title=title))
            continue
        title = entries[int(marks[-1])].title
        text = _MARK.sub("", block.text)
        text = text.strip("\n") if block.kind == "code" else normalize(text)
        if text:
            titled.append(dataclasses.replace(block, text=text, chapter=number,
                                              chapter_title=title))
    return titled


def _anchor(body: Element, fragment: str) -> Element | None:
    return next((el for el in body.iter() if fragment in (el.get("id"), el.get("name"))), None)


def _outermost(entries: list[_Entry]) -> list[_Entry]:
    """The entries of a file at its shallowest table-of-contents depth (chapters, not their
    sections)."""
    top = min((e.depth for e in entries), default=0)
    return [e for e in entries if e.depth == top]


def looks_like(path: Path) -> bool:
    """True for a zip whose first member is ``mimetype`` holding ``application/epub+zip``
    (the EPUB rule: the first 58 bytes tell), or, less strictly, that has such a member, at its
    root or in the folder that holds the book (see :func:`_root`)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(58)
    except OSError:
        return False
    if head[:4] != b"PK\x03\x04":
        return False
    if head[30:38] == b"mimetype" and head[38:58] == _MIMETYPE:
        return True
    try:
        with SafeZip(path, ArchiveLimits(), "an EPUB book") as book:
            name = "mimetype" if book.has("mimetype") else _root(path, book) + "mimetype"
            return book.has(name) and book.read(name).strip() == _MIMETYPE
    except CorpusError:
        return False


def _member(path: Path, book: SafeZip, name: str) -> bytes:
    if not book.has(name):
        raise CorpusError(f"{path}: not a readable EPUB book: {name} is listed but missing")
    return book.read(name)


def _xml(path: Path, book: SafeZip, name: str) -> Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             remove_comments=True, remove_pis=True)
    try:
        return etree.fromstring(_member(path, book, name), parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise CorpusError(f"{path}: not a readable EPUB book: {name}: {exc}") from None


def _root(path: Path, book: SafeZip) -> str:
    """The folder of the archive that holds the book: "" as the EPUB rule says, or the one
    folder holding ``META-INF/container.xml`` when the book was zipped with its folder (Debian's
    debian-edu-doc-en ships such a book, ``epub/META-INF/...``, as readers tolerate)."""
    if book.has(_CONTAINER):
        return ""
    nested = [n[: -len(_CONTAINER)] for n in book.names if n.endswith("/" + _CONTAINER)]
    if len(nested) == 1:
        return nested[0]
    raise CorpusError(f"{path}: not a readable EPUB book: no {_CONTAINER}"
                      + (f" (one in each of {len(nested)} folders)" if nested else ""))


def _refuse_drm(path: Path, book: SafeZip, root: str) -> None:
    name = root + "META-INF/encryption.xml"
    if not book.has(name):
        return
    found = _xml(path, book, name)
    for data in found.iter(f"{{{_NS['enc']}}}EncryptedData"):
        method = data.find("enc:EncryptionMethod", _NS)
        algorithm = method.get("Algorithm", "") if method is not None else ""
        if algorithm not in _FONT_OBFUSCATION:
            raise CorpusError(f"{path}: DRM-encrypted EPUB (META-INF/encryption.xml encrypts "
                              "its content): excerpt cannot read it; use a DRM-free copy")


def _package_name(path: Path, book: SafeZip, root: str) -> str:
    container = _xml(path, book, root + _CONTAINER)
    for rootfile in container.iterfind(".//c:rootfile", _NS):
        if rootfile.get("media-type", "application/oebps-package+xml").endswith("package+xml"):
            return root + _resolve("", rootfile.get("full-path", ""))
    raise CorpusError(f"{path}: not a readable EPUB book: container.xml names no package")


def _resolve(base: str, href: str) -> str:
    """An href relative to the file ``base`` as an archive member name (fragment dropped)."""
    target = unquote(urldefrag(href)[0])
    return posixpath.normpath(posixpath.join(posixpath.dirname(base), target)).lstrip("/")


def _manifest(package: Element, opf_name: str) -> dict[str, tuple[str, str, str]]:
    """id -> (member name, media type, properties)."""
    return {item.get("id", ""): (_resolve(opf_name, item.get("href", "")),
                                 item.get("media-type", ""), item.get("properties", ""))
            for item in package.iterfind("opf:manifest/opf:item", _NS)}


def _spine(path: Path, package: Element, opf_name: str) -> list[str]:
    manifest = _manifest(package, opf_name)
    chapters = []
    for ref in package.iterfind("opf:spine/opf:itemref", _NS):
        name, media, _ = manifest.get(ref.get("idref", ""), ("", "", ""))
        if name and media in _CONTENT_TYPES:
            chapters.append(name)
    if not chapters:
        raise CorpusError(f"{path}: not a readable EPUB book: the spine lists no content")
    return chapters


def _toc_titles(path: Path, book: SafeZip, package: Element,
                opf_name: str) -> dict[str, list[_Entry]]:
    """Member name -> the table-of-contents entries pointing into it, in order."""
    manifest = _manifest(package, opf_name)
    nav = next((name for name, _, props in manifest.values() if "nav" in props.split()), None)
    if nav and book.has(nav):
        titles = _nav_titles(html.parse_xhtml(book.read(nav)), nav)
        if titles:
            return titles
    spine = package.find("opf:spine", _NS)
    ncx_id = spine.get("toc") if spine is not None else None
    ncx = manifest.get(ncx_id or "", ("", "", ""))[0] or next(
        (name for name, media, _ in manifest.values() if media == "application/x-dtbncx+xml"),
        "")
    return _ncx_titles(_xml(path, book, ncx), ncx) if ncx and book.has(ncx) else {}


def _add(titles: dict[str, list[_Entry]], base: str, href: str, title: str,
         depth: int) -> None:
    if href and title:
        fragment = unquote(urldefrag(href)[1])
        titles.setdefault(_resolve(base, href), []).append(_Entry(fragment, title, depth))


def _nav_titles(root: Element, nav_name: str) -> dict[str, list[_Entry]]:
    navs = list(root.iter("nav"))
    toc = next((n for n in navs if "toc" in epub_type(n)), None)
    titles: dict[str, list[_Entry]] = {}
    for link in (toc if toc is not None else root).iter("a"):
        depth = sum(1 for a in link.iterancestors() if tag_of(a) in ("ol", "ul"))
        _add(titles, nav_name, link.get("href") or "", inline_text(link), depth)
    return titles


def _ncx_titles(root: Element, ncx_name: str) -> dict[str, list[_Entry]]:
    titles: dict[str, list[_Entry]] = {}
    point_tag = f"{{{_NS['ncx']}}}navPoint"
    for point in root.iter(point_tag):
        label = point.find("ncx:navLabel/ncx:text", _NS)
        content = point.find("ncx:content", _NS)
        if label is not None and content is not None:
            depth = sum(1 for _ in point.iterancestors(point_tag))
            _add(titles, ncx_name, content.get("src") or "",
                 normalize("".join(label.itertext())), depth)
    return titles


def _dc(package: Element, name: str) -> list[str]:
    found = (normalize("".join(el.itertext()))
             for el in package.iterfind(f"opf:metadata//dc:{name}", _NS))
    return [text for text in found if text]


def _body(root: Element | None) -> Element:
    if root is None:
        return etree.Element("body")
    body = next(root.iter("body"), root)
    html.drop_boilerplate(body)
    html.drop_link_lists(body, keep_if_all=False)  # a contents page or index: navigation
    return body
