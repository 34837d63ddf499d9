"""EPUB books written here with zipfile (and Debian's developers-reference EPUB when installed)
read by excerpt.ingest.documents.epub: spine order, chapter titles, metadata, errors."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from excerpt.errors import CorpusError
from excerpt.ingest.documents import epub
from excerpt.ingest.documents.blocks import Block

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
</rootfiles></container>"""

OPF = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:identifier id="id">urn:test:1</dc:identifier><dc:title>The Pump Book</dc:title>
<dc:creator>Ada Engineer</dc:creator><dc:creator>Bo Fitter</dc:creator>
<dc:language>en</dc:language></metadata>
<manifest>
<item id="c2" href="text/chapter%202.xhtml" media-type="application/xhtml+xml"/>
<item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
<item id="c3" href="text/ch3.xhtml" media-type="application/xhtml+xml"/>
<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
<item id="css" href="style.css" media-type="text/css"/>
</manifest>
<spine toc="ncx"><itemref idref="nav"/><itemref idref="c1"/><itemref idref="c2"/>
<itemref idref="c3" linear="no"/></spine></package>"""

NAV = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>Contents</title></head><body>
<nav epub:type="landmarks"><ol><li><a href="text/ch3.xhtml">Landmark, not a title</a></li>
</ol></nav>
<nav epub:type="toc"><h1>Contents</h1><ol>
<li><a href="text/ch1.xhtml">Installing</a></li>
<li><a href="text/chapter%202.xhtml#start">Wiring the pump</a>
<ol><li><a href="text/chapter%202.xhtml#earth">Earth</a></li></ol></li>
</ol></nav></body></html>"""

NCX = """<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>
<navPoint id="n1"><navLabel><text>NCX Installing</text></navLabel>
<content src="text/ch1.xhtml"/></navPoint>
<navPoint id="n2"><navLabel><text>NCX Wiring</text></navLabel>
<content src="text/chapter%202.xhtml"/></navPoint>
</navMap></ncx>"""


def chapter(body: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"'
            ' xmlns:epub="http://www.idpf.org/2007/ops"><head><title>t</title></head>'
            f"<body>{body}</body></html>")


CH1 = chapter('<header><h1>Chapter 1. Installing</h1></header><a id="top"/>'
              "<p>Mount the pump on a level base.</p>"
              '<p>Check the seals<a epub:type="noteref" href="#n1">1</a>.</p>'
              '<aside epub:type="footnote" id="n1"><p>Seals wear out.</p></aside>')
# Not well-formed XML (&nbsp; without a DTD): read with the HTML parser instead.
CH2 = chapter("<h1>Chapter 2</h1><p>Earth&nbsp;first.</p><pre>  earth -&gt; pin 1\n"
              "  live  -&gt; pin 2</pre><table><tr><td>Wire</td><td>Pin</td></tr></table>"
              '<aside epub:type="footnote"><p>Pin 1 is brown.</p></aside>')
CH3 = chapter("<h2>Appendix: tools</h2><ul><li>Screwdriver</li></ul>")


def write_epub(path: Path, members: dict[str, str] | None = None, *,
               drop: tuple[str, ...] = (), folder: str = "") -> Path:
    """A book of the members below; ``folder`` zips it inside that folder (``epub/mimetype``,
    ``epub/META-INF/...``), as some packagers do."""
    files = {"META-INF/container.xml": CONTAINER, "OEBPS/content.opf": OPF,
             "OEBPS/nav.xhtml": NAV, "OEBPS/toc.ncx": NCX, "OEBPS/text/ch1.xhtml": CH1,
             "OEBPS/text/chapter 2.xhtml": CH2, "OEBPS/text/ch3.xhtml": CH3,
             "OEBPS/style.css": "p {}"}
    files.update(members or {})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(folder + "mimetype"), "application/epub+zip",
                         compress_type=zipfile.ZIP_STORED)
        for name, text in reversed(files.items()):  # zip order is not reading order
            if name not in drop:
                archive.writestr(folder + name, text)
    return path


def test_chapters_in_spine_order_with_titles(tmp_path: Path) -> None:
    doc = epub.read(write_epub(tmp_path / "pump.epub"), "pump.epub")
    firsts = {}
    for block in doc.blocks:
        firsts.setdefault(block.chapter, (block.chapter_title, block.text))
    # The book's numbers (its headings: "Chapter 1. Installing"); the nav document is no
    # chapter, nor is the appendix the book does not number (issue 28 item 13).
    assert firsts == {1: ("Installing", "Chapter 1. Installing"),
                      2: ("Wiring the pump", "Chapter 2"),
                      None: ("Appendix: tools", "Appendix: tools")}  # no toc entry: its heading


def test_chapter_blocks_by_the_html_rules(tmp_path: Path) -> None:
    doc = epub.read(write_epub(tmp_path / "pump.epub"), "pump.epub")
    blocks = [Block(b.kind, b.text, b.level) for b in doc.blocks]
    assert blocks == [
        Block("heading", "Chapter 1. Installing", 1),
        Block("paragraph", "Mount the pump on a level base."),
        Block("paragraph", "Check the seals1."),
        Block("footnote", "Seals wear out."),
        Block("heading", "Chapter 2", 1),
        Block("paragraph", "Earth first."),
        Block("code", "  earth -> pin 1\n  live  -> pin 2"),
        Block("table_row", "Wire | Pin"),
        Block("footnote", "Pin 1 is brown."),
        Block("heading", "Appendix: tools", 2),
        Block("list_item", "Screwdriver", 0),
    ]


def test_book_metadata(tmp_path: Path) -> None:
    doc = epub.read(write_epub(tmp_path / "pump.epub"), "pump.epub")
    assert doc.title == "The Pump Book"
    assert doc.metadata == {"format": "epub", "author": "Ada Engineer, Bo Fitter",
                            "language": "en"}


def test_epub2_titles_from_toc_ncx(tmp_path: Path) -> None:
    opf = OPF.replace(' properties="nav"', "").replace('<itemref idref="nav"/>', "")
    doc = epub.read(write_epub(tmp_path / "old.epub", {"OEBPS/content.opf": opf}), "old.epub")
    titles = {b.chapter: b.chapter_title for b in doc.blocks}
    assert titles == {1: "NCX Installing", 2: "NCX Wiring", None: "Appendix: tools"}


def test_looks_like(tmp_path: Path) -> None:
    assert epub.looks_like(write_epub(tmp_path / "pump.epub"))
    assert epub.looks_like(write_epub(tmp_path / "nested", folder="epub/"))  # no extension
    plain = tmp_path / "a.zip"
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("readme.txt", "hello")
    assert not epub.looks_like(plain)
    (tmp_path / "t.epub").write_text("not a zip")
    assert not epub.looks_like(tmp_path / "t.epub")


ENCRYPTED = """<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
  xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
  <enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
  <enc:CipherData><enc:CipherReference URI="OEBPS/text/ch1.xhtml"/></enc:CipherData>
  </enc:EncryptedData></encryption>"""


def test_drm_encrypted_book_refused(tmp_path: Path) -> None:
    book = write_epub(tmp_path / "drm.epub", {"META-INF/encryption.xml": ENCRYPTED})
    with pytest.raises(CorpusError, match=r"drm\.epub: DRM-encrypted EPUB"):
        epub.read(book, "drm.epub")
    fonts = ENCRYPTED.replace("http://www.w3.org/2001/04/xmlenc#aes128-cbc",
                               "http://www.idpf.org/2008/embedding")
    book = write_epub(tmp_path / "fonts.epub", {"META-INF/encryption.xml": fonts})
    assert epub.read(book, "fonts.epub").blocks  # font obfuscation is not DRM


def test_broken_books_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "text.epub").write_text("not a zip")
    with pytest.raises(CorpusError, match=r"text\.epub: not an EPUB book"):
        epub.read(tmp_path / "text.epub", "text.epub")
    missing = write_epub(tmp_path / "missing.epub", drop=("OEBPS/text/ch1.xhtml",))
    with pytest.raises(CorpusError, match=r"missing\.epub: .*OEBPS/text/ch1\.xhtml.*missing"):
        epub.read(missing, "missing.epub")
    no_container = write_epub(tmp_path / "nc.epub", drop=("META-INF/container.xml",))
    with pytest.raises(CorpusError, match=r"nc\.epub: .*container\.xml"):
        epub.read(no_container, "nc.epub")
    bad_opf = write_epub(tmp_path / "opf.epub", {"OEBPS/content.opf": "<package"})
    with pytest.raises(CorpusError, match=r"opf\.epub: not a readable EPUB book: OEBPS/"):
        epub.read(bad_opf, "opf.epub")


def test_book_zipped_inside_a_folder_is_read(tmp_path: Path) -> None:
    # Debian's debian-edu-doc-en ships its manual so (epub/META-INF/container.xml, ...).
    flat = epub.read(write_epub(tmp_path / "flat.epub"), "b.epub")
    nested = epub.read(write_epub(tmp_path / "nested.epub", folder="epub/"), "b.epub")
    assert nested == flat
    drm = write_epub(tmp_path / "drm.epub", {"META-INF/encryption.xml": ENCRYPTED},
                     folder="epub/")
    with pytest.raises(CorpusError, match="DRM"):  # the folder's encryption.xml is read too
        epub.read(drm, "drm.epub")
    two = write_epub(tmp_path / "two.epub", {"other/META-INF/container.xml": CONTAINER},
                     folder="epub/")
    with pytest.raises(CorpusError, match=r"two\.epub: .*no META-INF/container\.xml \(one in "
                                          r"each of 2 folders\)"):
        epub.read(two, "two.epub")


def test_zip_slip_name_refused(tmp_path: Path) -> None:
    book = write_epub(tmp_path / "slip.epub", {"../../etc/evil.xhtml": "<p>x</p>"})
    with pytest.raises(CorpusError, match=r"slip\.epub: refused: member name"):
        epub.read(book, "slip.epub")


REAL_EPUB = Path("/usr/share/doc/developers-reference/docs/developers-reference.epub")


def test_real_epub_developers_reference() -> None:
    if not REAL_EPUB.exists():
        pytest.skip(f"{REAL_EPUB} not installed: apt-get install developers-reference")
    doc = epub.read(REAL_EPUB, "developers-reference.epub")
    titles: dict[int, str | None] = {}
    for block in doc.blocks:
        titles.setdefault(block.chapter or 0, block.chapter_title)
    assert list(titles) == sorted(titles) and len(titles) >= 9
    # the book's numbers ("5. Managing Packages"), not spine positions (its title page is 1)
    assert (titles[1], titles[5]) == ("Scope of This Document", "Managing Packages")
    assert doc.metadata["format"] == "epub" and doc.metadata.get("language") == "en"


def test_contents_page_chapter_is_navigation(tmp_path: Path) -> None:
    """A chapter that is only a list of links (a contents page, an index) gives no blocks,
    and the chapters keep the book's numbers."""
    contents = chapter('<h2 class="toc">Contents</h2><ul><li><a href="ch1.xhtml">One</a></li>'
                       '<li><a href="chapter%202.xhtml">Two</a></li>'
                       '<li><a href="ch3.xhtml">Three</a></li></ul>')
    book = write_epub(tmp_path / "c.epub", {"OEBPS/text/ch3.xhtml": contents})
    chapters = {b.chapter for b in epub.read(book, "c.epub").blocks}
    assert chapters == {1, 2}


def test_book_in_one_file_titles_follow_the_toc_anchors(tmp_path: Path) -> None:
    """One content file, three chapters by fragment: each block has the title and number of
    the entry before it (sections under a chapter do not replace the chapter's title)."""
    whole = chapter('<p>Front matter.</p><h2 id="c1">One</h2><p>First text.</p>'
                    '<div><a id="c2"></a></div><h2>Two</h2><pre>  indented code</pre>'
                    '<section id="c3"><h2>Three</h2><h3 id="c3s1">Detail</h3>'
                    "<p>Third text.</p></section>")
    nav = NAV.replace('<li><a href="text/ch1.xhtml">Installing</a></li>', "").replace(
        '<li><a href="text/chapter%202.xhtml#start">Wiring the pump</a>\n'
        '<ol><li><a href="text/chapter%202.xhtml#earth">Earth</a></li></ol></li>',
        '<li><a href="text/ch1.xhtml#c1">Chapter One</a></li>'
        '<li><a href="text/ch1.xhtml#c2">Chapter Two</a></li>'
        '<li><a href="text/ch1.xhtml#c3">Chapter Three</a>'
        '<ol><li><a href="text/ch1.xhtml#c3s1">A section</a></li></ol></li>')
    assert nav.count("Chapter") == 3
    book = write_epub(tmp_path / "one.epub", {"OEBPS/text/ch1.xhtml": whole,
                                               "OEBPS/nav.xhtml": nav})
    blocks = [b for b in epub.read(book, "one.epub").blocks if b.chapter_title != "Chapter 2"]
    assert [(b.chapter, b.chapter_title, b.kind, b.text) for b in blocks][:8] == [
        (1, "Chapter One", "paragraph", "Front matter."),
        (1, "Chapter One", "heading", "One"),
        (1, "Chapter One", "paragraph", "First text."),
        (2, "Chapter Two", "heading", "Two"),
        (2, "Chapter Two", "code", "  indented code"),
        (3, "Chapter Three", "heading", "Three"),
        (3, "Chapter Three", "heading", "Detail"),
        (3, "Chapter Three", "paragraph", "Third text."),
    ]
