"""EPUB chapter numbers as the book gives them (issue 28 item 13): Debian Policy's EPUB was
cited "chapter 4 Binary packages, section 3.8" (its title page counted as chapter 1), and "in
chapter 3" searched its chapter 2. Books written here with zipfile: numbers from the table of
contents or the headings, a title page and appendices that are no chapter, a chapter split in
two files; a book with no numbers counted without the front matter it marks."""

from __future__ import annotations

import zipfile
from pathlib import Path

from excerpt.cli.places import citation_place
from excerpt.engine import Engine
from excerpt.ingest.documents import epub
from excerpt.types import Filters

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>
</rootfiles></container>"""


def page(body: str, body_type: str = "") -> str:
    attribute = f' epub:type="{body_type}"' if body_type else ""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"'
            ' xmlns:epub="http://www.idpf.org/2007/ops"><head><title>t</title></head>'
            f"<body{attribute}>{body}</body></html>")


def opf(files: list[str], *, title: str = "The Manual", guide: str = "",
        linear_no: tuple[str, ...] = ()) -> str:
    items = "".join(f'<item id="f{i}" href="{f}" media-type="application/xhtml+xml"/>'
                    for i, f in enumerate(files))
    no = ' linear="no"'
    refs = "".join(f'<itemref idref="f{i}"{no if f in linear_no else ""}/>'
                   for i, f in enumerate(files))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<package xmlns="http://www.idpf.org/2007/'
            'opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/'
            f'elements/1.1/"><dc:identifier id="id">urn:x</dc:identifier><dc:title>{title}'
            '</dc:title></metadata><manifest><item id="nav" href="nav.xhtml" media-type='
            f'"application/xhtml+xml" properties="nav"/>{items}</manifest><spine>{refs}</spine>'
            f"<guide>{guide}</guide></package>")


def nav(entries: list[tuple[str, str]], landmarks: str = "") -> str:
    links = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in entries)
    marks = f'<nav epub:type="landmarks"><ol>{landmarks}</ol></nav>' if landmarks else ""
    return page(f'{marks}<nav epub:type="toc"><ol>{links}</ol></nav>')


def write(path: Path, files: dict[str, str], package: str, toc: str) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("META-INF/container.xml", CONTAINER)
        archive.writestr("content.opf", package)
        archive.writestr("nav.xhtml", toc)
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def chapters(path: Path) -> dict[str | None, int | None]:
    """Each chapter title -> its chapter number (the first block's)."""
    out: dict[str | None, int | None] = {}
    for block in epub.read(path, path.name).blocks:
        out.setdefault(block.chapter_title, block.chapter)
    return out


POLICY_LIKE = {
    "index.xhtml": page("<h1>The Manual</h1><p>This manual describes the policy.</p>"),
    "ch-scope.xhtml": page("<h1>1. About this manual</h1><p>Scope of the manual.</p>"),
    "ch-archive.xhtml": page("<h1>2. The archive</h1><p>Archive areas.</p>"),
    "ch-binary.xhtml": page('<h1><span class="section-number">3. </span>Binary packages</h1>'
                            "<h2>3.1. The package name</h2><p>Every package has a name.</p>"),
    "ch-binary-2.xhtml": page("<p>The rest of the binary packages chapter.</p>"),
    "ap-scope.xhtml": page("<h1>1. Scope of these appendices</h1><p>Old manual.</p>"),
    "ap-source.xhtml": page("<h1>2. Source packages (old manual)</h1><p>Old source.</p>"),
}


def policy_like(tmp_path: Path, titles: dict[str, str]) -> Path:
    files = list(POLICY_LIKE)
    entries = [(f, titles[f]) for f in files if f in titles]
    return write(tmp_path / "manual.epub", POLICY_LIKE, opf(files), nav(entries))


def test_numbers_from_the_headings_when_the_contents_has_none(tmp_path: Path) -> None:
    """Debian Policy's shape: contents titles without numbers, headings "3. Binary
    packages"; the title page is no chapter, a file with neither entry nor heading continues
    the chapter before it, and the appendices numbered again from 1 are no chapters."""
    book = policy_like(tmp_path, {"index.xhtml": "The Manual", "ch-scope.xhtml": "About",
                                  "ch-archive.xhtml": "The archive",
                                  "ch-binary.xhtml": "Binary packages",
                                  "ap-scope.xhtml": "Scope of these appendices",
                                  "ap-source.xhtml": "Source packages (old manual)"})
    assert chapters(book) == {"The Manual": None, "About": 1, "The archive": 2,
                              "Binary packages": 3, "Scope of these appendices": None,
                              "Source packages (old manual)": None}
    rest = [b for b in epub.read(book, "m.epub").blocks if "rest of" in b.text]
    assert [(b.chapter, b.chapter_title) for b in rest] == [(3, "Binary packages")]


def test_numbers_from_the_contents_titles(tmp_path: Path) -> None:
    book = policy_like(tmp_path, {"index.xhtml": "The Manual",
                                  "ch-scope.xhtml": "1. About this manual",
                                  "ch-archive.xhtml": "Chapter 2: The archive",
                                  "ch-binary.xhtml": "CHAPTER III. Binary packages"})
    found = chapters(book)
    assert (found["1. About this manual"], found["Chapter 2: The archive"],
            found["CHAPTER III. Binary packages"]) == (1, 2, 3)


def test_a_book_that_numbers_nothing_is_counted_without_its_front_matter(
        tmp_path: Path) -> None:
    """Dedication (before the landmark bodymatter), cover (epub:type on the body), title page
    (the OPF guide), preface (epub:type on its section), a non-linear note page and an
    appendix are no chapters; the chapters count from 1."""
    files = {
        "dedication.xhtml": page("<p>For Ada.</p>"),
        "cover.xhtml": page("<p>A Cover Line</p>", "cover"),
        "title.xhtml": page("<h1>Storms</h1><p>A novel.</p>"),
        "preface.xhtml": page('<section epub:type="preface"><h1>Preface</h1><p>Why.</p>'
                              "</section>"),
        "one.xhtml": page("<h1>The harbour</h1><p>The boats came in.</p>"),
        "note.xhtml": page("<h1>A note</h1><p>Aside.</p>"),
        "two.xhtml": page("<h1>The gale</h1><p>The wind rose.</p>"),
        "appendix.xhtml": page("<h1>Appendix: tides</h1><p>High water.</p>"),
    }
    package = opf(list(files), title="Storms", linear_no=("note.xhtml",),
                  guide='<reference type="title-page" href="title.xhtml"/>')
    toc = nav([], '<li><a epub:type="bodymatter" href="cover.xhtml">Start</a></li>')
    book = write(tmp_path / "storms.epub", files, package, toc)
    assert chapters(book) == {None: None, "Storms": None, "Preface": None,
                              "The harbour": 1, "A note": None, "The gale": 2,
                              "Appendix: tides": None}


def test_a_first_page_titled_as_the_book_is_its_title_page(tmp_path: Path) -> None:
    files = {"a.xhtml": page("<h1>Storms</h1><p>Published 2024.</p>"),
             "b.xhtml": page("<h1>The harbour</h1><p>The boats came in.</p>"),
             "c.xhtml": page("<h1>The gale</h1><p>The wind rose.</p>")}
    book = write(tmp_path / "s.epub", files, opf(list(files), title="Storms"), nav([]))
    assert chapters(book) == {"Storms": None, "The harbour": 1, "The gale": 2}


def test_a_citation_and_a_question_use_the_books_numbers(tmp_path: Path) -> None:
    folder = tmp_path / "books"
    folder.mkdir()
    policy_like(folder, {"index.xhtml": "The Manual", "ch-binary.xhtml": "Binary packages"})
    engine = Engine(tmp_path / "home")
    engine.ingest(folder, collection="m", embedder="none")
    answer = engine.ask("In chapter 3, what does every package have?", Filters("m"),
                        mode="bm25")
    assert answer.scope == {"chapter": 3}
    places = [citation_place(c.metadata) for c in answer.composed.citations]
    assert places and places[0].startswith("chapter 3 Binary packages, section 3.1.")
    hits = engine.search("archive", Filters("m", metadata={"chapter": 2}), None, "bm25").hits
    assert [h.node.metadata["chapter_title"] for h in hits] == ["2. The archive"]
