"""EPUB books read as blocks: chapters in spine order, with their titles.

An EPUB is a zip of XHTML files; META-INF/container.xml names the package document (OPF),
whose manifest lists the files and whose spine gives the reading order.  Each content document
of the spine is read in that order; ``chapter_title`` is its title from the table of contents
(the EPUB 3 nav document's ``toc``, else the EPUB 2 toc.ncx), else its first heading.  When the
table of contents points at several places in one file (a whole book in one XHTML file), the
title changes at each of the file's outermost entries' anchors; sections nested under a chapter
do not replace its title.

``chapter`` (what "in chapter 3" is matched against, and what a citation prints) is the number
the book gives the chapter: from its table-of-contents title, else its first heading ("3.
Binary packages", "Chapter 3: …", "Chapter III", "Chapter Three.").  When the book numbers two
chapters or more, a content document it does not number (a title page, a preface, an index) has
no chapter, one with neither an entry nor a heading continues the chapter before it (a chapter
split in two files), and once the numbers start again from lower (Debian Policy's appendices,
numbered 1 to 11 after its chapters 1 to 12) the rest has no chapter either: "chapter 3" is the
book's chapter 3, not an appendix.  A book that numbers none is counted: its chapters are the
content documents of the reading order (``linear``) with text, less the table of contents and
what the book marks as front or back matter (``epub:type`` cover, titlepage, preface …, on the
document's root, body or its first element; the OPF guide's references; the landmarks before
``bodymatter``; a first document titled as the book, its title page; "Appendix …"), numbered
from 1.  A chapter's blocks are taken by the HTML reader's rules
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
from excerpt.ingest.books.gutenberg import parse_heading, roman_to_int
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
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
# epub:type values (EPUB 3 Structural Semantics) and OPF guide types of what is not a chapter
_ASIDE_TYPES = {"cover", "titlepage", "halftitlepage", "frontmatter", "backmatter", "preface",
                "foreword", "toc", "copyright-page", "dedication", "epigraph", "acknowledgments",
                "colophon", "imprint", "index", "glossary", "bibliography", "appendix", "loi",
                "lot", "landmarks"}
_ASIDE_GUIDE = {"cover", "title-page", "toc", "copyright-page", "dedication", "preface",
                "foreword", "acknowledgements", "colophon", "index", "glossary", "bibliography",
                "epigraph", "loi", "lot"}
# "3. Binary packages", "12) Files", "3: Scope", "Chapter 3 Binary packages", "Ch. IV"
_CHAPTER_LABEL = re.compile(r"^(?:(\d{1,3})[.):](?:\s|$)|(?:chapter|chap\.|ch\.)\s*"
                            r"(\d{1,3}|[ivxlc]{1,7})\b(?![.]\d))", re.IGNORECASE)
_APPENDIX = re.compile(r"^\s*appendix\b", re.IGNORECASE)
# Font obfuscation (IDPF, Adobe) is not DRM: the text is readable.
_FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}


@dataclass(frozen=True)
class _Entry:
    """A table-of-contents entry pointing into a file: ``fragment`` ('' for the file's start),
    its title, and its depth in the table of contents (0 outermost)."""

    fragment: str
    title: str
    depth: int


def read(path: Path, doc_id: str, *, limits: ArchiveLimits | None = None,
         data: bytes | None = None) -> StructuredDoc:
    """One EPUB file as a :class:`StructuredDoc` (see the module); ``data``: its bytes, when
    already read (the file is not opened again)."""
    with SafeZip(path, limits or ArchiveLimits(), "an EPUB book", data) as book:
        root = _root(path, book)
        _refuse_drm(path, book, root)
        opf_name = _package_name(path, book, root)
        package = _xml(path, book, opf_name)
        spine = _spine(path, package, opf_name)
        titles = _toc_titles(path, book, package, opf_name)
        aside = _marked_matter(book, package, opf_name, [name for name, _ in spine])
        parts = [_part(name, html.parse_xhtml(_member(path, book, name)),
                       _outermost(titles.get(name, [])), linear and name not in aside)
                 for name, linear in spine]
        _aside_title_page(parts, next(iter(_dc(package, "title")), ""))
        blocks: list[Block] = []
        for part, (numbers, title) in zip(parts, _chapters(parts), strict=True):
            blocks += _chapter_blocks(part.body, numbers, part.entries, title)
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


def _chapter_blocks(body: Element, numbers: list[int | None], entries: list[_Entry],
                    title: str | None) -> list[Block]:
    """A content document's blocks with their chapter number and title (``numbers``: one per
    entry, or one for the file when it has none; ``title``: the file's when it has no entry).
    When the table of contents points at several places in one file (a book in one file),
    each block has the title and number of the entry before it: the entries' anchors are
    marked with a private-use token before blocks are taken, and the tokens are read back out
    of the blocks' text."""
    for index, entry in enumerate(entries):
        anchor = _anchor(body, entry.fragment) if entry.fragment else None
        if anchor is not None:
            anchor.text = f"\ue000{index}\ue001{anchor.text or ''}"
    found = blocks_of(body)
    number = numbers[0]
    title = entries[0].title if entries else title
    titled = []
    for block in found:
        marks = _MARK.findall(block.text)
        if not marks:
            titled.append(dataclasses.replace(block, chapter=number, chapter_title=title))
            continue
        title, number = entries[int(marks[-1])].title, numbers[int(marks[-1])]
        text = _MARK.sub("", block.text)
        text = text.strip("\n") if block.kind == "code" else normalize(text)
        if text:
            titled.append(dataclasses.replace(block, text=text, chapter=number,
                                              chapter_title=title))
    return titled


@dataclass(frozen=True)
class _Part:
    """A content document of the spine as read: its body, its outermost table-of-contents
    entries, its first heading, whether it has text, and whether it may count as a chapter
    (in the reading order, not the table of contents or marked front or back matter)."""

    name: str
    body: Element
    entries: list[_Entry]
    heading: str | None
    has_text: bool
    countable: bool

    def labels(self) -> list[str | None]:
        """What may carry the book's chapter numbers: each entry's title (the first falls back
        to the heading), or the heading alone."""
        if not self.entries:
            return [self.heading]
        return [e.title for e in self.entries]


def _part(name: str, root: Element | None, entries: list[_Entry], countable: bool) -> _Part:
    body = _body(root)
    first = next((el for el in body.iter() if tag_of(el) in _HEADINGS), None)
    heading = inline_text(first) if first is not None else None
    has_text = bool(normalize("".join(body.itertext())))
    marked = root is not None and _matter(root, body)
    return _Part(name, body, entries, heading or None, has_text, countable and not marked)


def _aside_title_page(parts: list[_Part], book_title: str) -> None:
    """Leaves out of the count a first document titled as the book is (its title page) and
    documents titled "Appendix …": the book marks them so by their titles."""
    texts = [i for i, p in enumerate(parts) if p.has_text]
    for i in texts:
        label = next((t for t in parts[i].labels() if t), parts[i].heading) or ""
        title_page = i == texts[0] and len(texts) > 1 and _same(label, book_title)
        if title_page or _APPENDIX.match(label):
            parts[i] = dataclasses.replace(parts[i], countable=False)


def _same(a: str, b: str) -> bool:
    return bool(a) and " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def _matter(root: Element, body: Element) -> bool:
    """Whether the document marks itself front or back matter (``epub:type`` on its root, its
    body or the body's first element)."""
    first = next((el for el in body if isinstance(el.tag, str)), None)
    marks = {t for el in (root, body, first) if el is not None for t in epub_type(el)}
    return bool(marks & _ASIDE_TYPES)


def _chapters(parts: list[_Part]) -> list[tuple[list[int | None], str | None]]:
    """Each part's chapter numbers (one per entry, or one) and its title when it has no
    entry: the book's own numbers when it gives two or more, else a count (module docstring)."""
    printed = [[_printed_chapter(label) for label in p.labels()] for p in parts]
    for numbers, part in zip(printed, parts, strict=True):
        if numbers[0] is None and part.entries:  # an untitled number: the heading's
            numbers[0] = _printed_chapter(part.heading)
    if len({n for numbers in printed for n in numbers if n is not None}) >= 2:
        return _as_printed(parts, printed)
    count = 0
    out: list[tuple[list[int | None], str | None]] = []
    for part in parts:
        counted = part.countable and part.has_text
        count += counted
        out.append(([count if counted else None] * max(1, len(part.entries)), part.heading))
    return out


def _as_printed(parts: list[_Part],
                printed: list[list[int | None]]) -> list[tuple[list[int | None], str | None]]:
    """The book's numbers, up to where they start again from lower; a part with neither an
    entry nor a heading continues the chapter before it."""
    last, ended = 0, False
    number: int | None = None
    title: str | None = None
    out: list[tuple[list[int | None], str | None]] = []
    for part, numbers in zip(parts, printed, strict=True):
        if not part.entries and part.heading is None:  # the rest of the chapter before
            out.append(([number], title))
            continue
        kept: list[int | None] = []
        for n in numbers:
            ended = ended or (n is not None and n < last)
            kept.append(None if ended or n is None else n)
            last = n if n is not None and not ended else last
        number, title = kept[-1], (part.entries[-1].title if part.entries else part.heading)
        out.append((kept, part.heading))
    return out


def _printed_chapter(label: str | None) -> int | None:
    """The chapter number a title or heading opens with: "3. Binary packages", "12) Files",
    "Chapter 3", "CHAPTER III.", "Chapter Three: …"; None for "Preface", "3.1 Names" or
    "Part 2"."""
    if not label:
        return None
    label = " ".join(label.split())
    found = parse_heading(label)
    if found is not None:
        return found[1] if found[0] == "chapter" else None
    match = _CHAPTER_LABEL.match(label)
    if match is None:
        return None
    number = match.group(1) or match.group(2)
    if number.isdigit():
        return int(number) or None
    return roman_to_int(number)


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


def _spine(path: Path, package: Element, opf_name: str) -> list[tuple[str, bool]]:
    """The content documents in reading order, each with whether it is ``linear`` and not the
    nav document (the table of contents)."""
    manifest = _manifest(package, opf_name)
    chapters = []
    for ref in package.iterfind("opf:spine/opf:itemref", _NS):
        name, media, props = manifest.get(ref.get("idref", ""), ("", "", ""))
        if name and media in _CONTENT_TYPES:
            linear = ref.get("linear", "yes") != "no" and "nav" not in props.split()
            chapters.append((name, linear))
    if not chapters:
        raise CorpusError(f"{path}: not a readable EPUB book: the spine lists no content")
    return chapters


def _marked_matter(book: SafeZip, package: Element, opf_name: str,
                   spine: list[str]) -> set[str]:
    """The content documents the package marks as front or back matter: the OPF guide's
    references of such a type, the nav's landmarks of such a type, and every document before
    the landmark ``bodymatter``."""
    marked = {_resolve(opf_name, ref.get("href", ""))
              for ref in package.iterfind("opf:guide/opf:reference", _NS)
              if ref.get("type", "").lower() in _ASIDE_GUIDE}
    manifest = _manifest(package, opf_name)
    nav = next((name for name, _, props in manifest.values() if "nav" in props.split()), None)
    root = html.parse_xhtml(book.read(nav)) if nav and book.has(nav) else None
    landmarks = next((n for n in root.iter("nav") if "landmarks" in epub_type(n)),
                     None) if root is not None else None
    for link in landmarks.iter("a") if landmarks is not None else ():
        target, types = _resolve(nav or "", link.get("href") or ""), set(epub_type(link))
        if "bodymatter" in types and target in spine:
            marked |= set(spine[: spine.index(target)])
        elif types & _ASIDE_TYPES:
            marked.add(target)
    return marked


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
