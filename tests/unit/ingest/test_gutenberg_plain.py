"""Books saved as plain text (no Gutenberg header or licence) keep their books and chapters."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from excerpt.ingest.base import LoadOptions
from excerpt.ingest.books.gutenberg import find_divisions, load_gutenberg
from excerpt.ingest.detect import detect_format, load

START = re.compile(rb"^\*\*\* START OF THE PROJECT GUTENBERG EBOOK .*$\n", re.M)
END = re.compile(rb"^\*\*\* END OF THE PROJECT GUTENBERG EBOOK", re.M)


def _strip_frame(book: Path, to: Path) -> Path:
    """The book as a translation saved as text: the header and the licence cut off."""
    data = book.read_bytes().replace(b"\r\n", b"\n")
    start, end = START.search(data), END.search(data)
    assert start and end
    to.write_bytes(data[start.end() : end.start()])
    return to


@pytest.mark.data
@pytest.mark.parametrize(("name", "ebook"), [("pg174_dorian_gray.txt", "pg174"),
                                             ("pg6130_iliad_pope.txt", "pg6130")])
def test_a_stripped_shared_book_keeps_its_structure(
        shared_data: Callable[..., Path], tmp_path: Path, name: str, ebook: str) -> None:
    framed = load_gutenberg([shared_data("books", name)], LoadOptions())
    plain = _strip_frame(shared_data("books", name), tmp_path / "translation.txt")
    assert detect_format([plain]) == "gutenberg"  # auto picks the loader that keeps chapters
    for corpus in (load_gutenberg([plain], LoadOptions()), load([plain], "auto")):
        [doc] = corpus.documents
        assert doc.id == "translation" and doc.metadata["frame"] == "none"
        got = [(n.id.removeprefix("translation:"), n.text, _structure(n.metadata))
               for n in corpus.nodes]
        want = [(n.id.removeprefix(f"{ebook}:"), n.text, _structure(n.metadata))
                for n in framed.nodes]
        assert got == want
    assert load_gutenberg([plain], LoadOptions()).documents[0].title == framed.nodes[0].text.split(
        "\n")[0]


def _structure(meta: Mapping[str, object]) -> tuple[object, ...]:
    return tuple(meta.get(k) for k in ("book", "chapter", "division", "part"))


def _plain(headings: list[str],
           front: str = "A TALE\n\nby Ann Author\n\nTranslated by Bo Ng") -> str:
    para = "She walked along the river and thought of the town she had left behind. " * 4
    return front + "".join(f"\n\n\n{h}\n\n\n{para}\n\n{para}" for h in headings) + "\n"


@pytest.mark.parametrize(
    ("headings", "keys", "meta"),
    [
        (["PART ONE", "CHAPTER 1", "CHAPTER 2", "PART TWO", "CHAPTER 1"],
         ["b01", "b01:ch01", "b01:ch02", "b02", "b02:ch01"], [(1, None), (1, 1), (1, 2), (2, None),
                                                              (2, 1)]),
        (["Book the First", "Book the Second"], ["b01", "b02"], [(1, None), (2, None)]),
        (["Part I", "Part II."], ["b01", "b02"], [(1, None), (2, None)]),
        (["I.", "II.", "III."], ["ch01", "ch02", "ch03"], [(None, 1), (None, 2), (None, 3)]),
        (["1", "2"], ["ch01", "ch02"], [(None, 1), (None, 2)]),
        (["Chapter 1: The River", "Chapter 2: The Town"], ["ch01", "ch02"],
         [(None, 1), (None, 2)]),
    ],
)
def test_heading_styles_of_plain_books(tmp_path: Path, headings: list[str], keys: list[str],
                                       meta: list[tuple[int | None, int | None]]) -> None:
    path = tmp_path / "tale.txt"
    path.write_text(_plain(headings), "utf-8")
    assert detect_format([path]) == "gutenberg"
    corpus = load([path], "auto")
    [doc] = corpus.documents
    assert (doc.title, doc.metadata["author"], doc.metadata["translator"]) == (
        "A TALE", "Ann Author", "Bo Ng")
    divisions = list(dict.fromkeys(n.metadata["division"] for n in corpus.nodes))
    assert divisions == ["front", *keys]
    found = list(dict.fromkeys((n.metadata.get("book"), n.metadata.get("chapter"))
                               for n in corpus.nodes if n.metadata["division"] != "front"))
    assert found == meta
    assert all(n.metadata["part"] == "body" for n in corpus.nodes
               if n.metadata["division"] != "front")


def test_lone_numerals_are_chapters_only_in_a_run() -> None:
    para = "Words of the story go on for a while here, long enough to be a chapter. " * 3
    out_of_order = f"\n\n3\n\n{para}\n\n7\n\n{para}\n"
    assert [d.key for d in find_divisions(out_of_order)] == ["body"]
    with_named = f"CHAPTER I.\n\n{para}\n\n1\n\n{para}\n\nCHAPTER II.\n\n{para}\n"
    assert [d.key for d in find_divisions(with_named)] == ["ch01", "ch02"]


def test_a_plain_text_without_chapters_stays_text(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Meeting notes\n\nChapter 1 of the plan was read aloud.\n", "utf-8")
    assert detect_format([notes]) == "text"
    assert [d.key for d in find_divisions(notes.read_text())] == ["body"]
