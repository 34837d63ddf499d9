from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from excerpt.errors import CorpusError, InputError
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.books.gutenberg import (
    find_divisions,
    load_gutenberg,
    parse_gutenberg,
    parse_heading,
    roman_to_int,
)

HEADER = """\
The Project Gutenberg eBook of A Small Test Book, by Ann Author

This eBook is for the use of anyone anywhere in the United States and
most other parts of the world at no cost and with almost no restrictions
whatsoever. You may copy it under the terms of the Project Gutenberg License.

Title: A Small Test Book
       With a Subtitle

Author: Ann Author

Release Date: May 1, 2001 [eBook #{no}]

Language: English

*** START OF {which} PROJECT GUTENBERG EBOOK A SMALL TEST BOOK ***
"""
FOOTER = """
*** END OF {which} PROJECT GUTENBERG EBOOK A SMALL TEST BOOK ***

Section 1. General Terms of Use and Redistributing Project Gutenberg-tm
electronic works. PLEASE READ THIS BEFORE YOU DISTRIBUTE OR USE THIS WORK.
"""


def _para(tag: str, n: int = 6) -> str:
    return " ".join(f"{tag} sentence {i} tells a little more of the story." for i in range(n))


def _book(chapters: list[str], toc: str = "", front: str = "", which: str = "THE") -> str:
    body = "\n\n\nA SMALL TEST BOOK\n\nby Ann Author\n\n\n" + toc + "\n\n" + front + "\n\n"
    for k, heading in enumerate(chapters):
        body += f"\n\n\n{heading}\n\n\n" + _para(f"Part{k}") + "\n\n" + _para(f"Part{k} again")
    return HEADER.replace("{which}", which) + body + FOOTER.replace("{which}", which)


def _write(path: Path, text: str, no: int = 99, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.replace("{no}", str(no)).encode(encoding))
    return path


def _divisions(corpus: LoadedCorpus) -> list[str]:
    seen: list[str] = []
    for n in corpus.nodes:
        if n.metadata["division"] not in seen:
            seen.append(n.metadata["division"])
    return seen


# --- synthetic books: run everywhere --------------------------------------------------------------


def test_header_body_and_chapters(tmp_path: Path) -> None:
    toc = "Contents\n\n PREFACE\n CHAPTER I.\n CHAPTER II.\n CHAPTER III."
    text = _book(["CHAPTER I.", "CHAPTER II.", "CHAPTER III."], toc, "PREFACE\n\n" + _para("pre"))
    f = _write(tmp_path / "pg99_small.txt", text)
    corpus = load_gutenberg([f], LoadOptions(chunk_chars=200, overlap_chars=40))
    [doc] = corpus.documents
    assert doc.id == "pg99"
    assert doc.title == "A Small Test Book With a Subtitle"
    assert doc.metadata["author"] == "Ann Author"
    assert doc.metadata["release_date"] == "May 1, 2001"
    assert doc.metadata["divisions"] == 3
    assert _divisions(corpus) == ["front", "ch01", "ch02", "ch03"]
    body = parse_gutenberg(f).body
    for node in corpus.nodes:
        assert node.text == body[node.start : node.end]
        assert node.metadata["author"] == "Ann Author"
        assert "Gutenberg" not in node.text and "PLEASE READ" not in node.text
        assert re.fullmatch(r"pg99:(front|ch0[123]):\d{4}", node.id)
        if node.metadata["division"] != "front":
            assert node.metadata["chapter"] == int(node.metadata["division"][2:])
            assert "book" not in node.metadata
            # a chunk never spans two chapters
            assert node.text.count("CHAPTER") <= 1
    # the table of contents stays in the front matter
    assert "CHAPTER III." in next(n.text for n in corpus.nodes if n.id == "pg99:front:0000")
    assert corpus.nodes[0].id == "pg99:front:0000"
    assert any(n.id == "pg99:ch02:0000" for n in corpus.nodes)


def test_this_variant_old_end_line_and_number_from_file_name(tmp_path: Path) -> None:
    text = _book(["Chapter 1", "Chapter 2"], which="THIS").replace("[eBook #{no}]", "")
    text = text.replace(
        "*** END OF THIS", "End of the Project Gutenberg EBook of X\n\n*** END OF THIS"
    )
    f = _write(tmp_path / "pg1234-old.txt", text)
    corpus = load_gutenberg([f], LoadOptions())
    assert corpus.documents[0].id == "pg1234"
    assert _divisions(corpus) == ["front", "ch01", "ch02"]
    assert not any("End of the Project" in n.text for n in corpus.nodes)


def test_old_small_print_header(tmp_path: Path) -> None:
    text = (
        "The Project Gutenberg Etext of Old Book, by Someone\n\n"
        "**Welcome To The World of Free Plain Vanilla Electronic Texts**\n\n"
        "*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*\n\n"
        + "\n\nCHAPTER I\n\n"
        + _para("old")
        + "\n\nCHAPTER II\n\n"
        + _para("older")
        + "\n"
    )
    f = _write(tmp_path / "oldbook.txt", text)
    corpus = load_gutenberg([f], LoadOptions())
    doc = corpus.documents[0]
    assert (doc.id, doc.title, doc.metadata["author"]) == ("oldbook", "Old Book", "Someone")
    assert _divisions(corpus) == ["ch01", "ch02"]
    assert not any("SMALL PRINT" in n.text for n in corpus.nodes)


def test_books_with_roman_numerals_and_both_levels(tmp_path: Path) -> None:
    heads = ["BOOK I.", "CHAPTER I.", "CHAPTER II.", "BOOK II.", "CHAPTER I.", "CHAPTER II."]
    # put BOOK headings straight before their first chapter (no text of their own)
    text = re.sub(r"(BOOK [IV]+\.)\n\n\n[^\n]+\n\n[^\n]+\n\n\n", r"\1\n\n\n", _book(heads))
    f = _write(tmp_path / "pg7.txt", text)
    corpus = load_gutenberg([f], LoadOptions())
    assert _divisions(corpus) == [
        "front",
        "b01",
        "b01:ch01",
        "b01:ch02",
        "b02",
        "b02:ch01",
        "b02:ch02",
    ]
    ids = [n.id for n in corpus.nodes]
    assert "pg99:b02:ch01:0000" in ids and len(set(ids)) == len(ids)
    node = next(n for n in corpus.nodes if n.id == "pg99:b02:ch02:0000")
    assert (node.metadata["book"], node.metadata["chapter"]) == (2, 2)


def test_blank_separated_contents_do_not_make_chapters(tmp_path: Path) -> None:
    toc = "CONTENTS\n\nCHAPTER THE FIRST\n\nCHAPTER THE SECOND\n\nCHAPTER THE THIRD\n\n"
    heads = ["CHAPTER THE FIRST", "CHAPTER THE SECOND", "CHAPTER THE THIRD"]
    f = _write(tmp_path / "pg5.txt", _book(heads, toc))
    corpus = load_gutenberg([f], LoadOptions())
    assert _divisions(corpus) == ["front", "ch01", "ch02", "ch03"]
    first = next(n for n in corpus.nodes if n.id == "pg99:ch01:0000")
    assert first.text.startswith("CHAPTER THE FIRST\n\n\nPart0 sentence 0")


def test_back_matter_and_book_without_divisions(tmp_path: Path) -> None:
    text = _book(["BOOK I.", "BOOK II."]).replace(
        "\n*** END", "\n\n\nFOOTNOTES\n\n\n1. A note about the text.\n\n2. Another one.\n\n*** END"
    )
    corpus = load_gutenberg([_write(tmp_path / "pg8.txt", text)], LoadOptions())
    assert _divisions(corpus) == ["front", "b01", "b02", "back"]
    assert "FOOTNOTES" in next(n.text for n in corpus.nodes if n.id == "pg99:back:0000")
    plain = _book([]).replace("\n\n\n\n", "\n\n" + _para("plain") + "\n\n")
    corpus = load_gutenberg([_write(tmp_path / "pg9.txt", plain, no=9)], LoadOptions())
    assert _divisions(corpus) == ["body"]
    assert corpus.documents[0].metadata["divisions"] == 0
    assert corpus.nodes[0].id == "pg9:body:0000"


def test_cp1252_book_is_decoded(tmp_path: Path) -> None:
    text = "?" + _book(["BOOK I."]).replace("sentence 0", "Achilles’ wrath sentence 0")
    f = _write(tmp_path / "pg6.txt", text, encoding="cp1252")
    corpus = load_gutenberg([f], LoadOptions())
    assert corpus.documents[0].metadata["encoding"] == "cp1252"
    assert any("Achilles’ wrath" in n.text for n in corpus.nodes)


def test_bad_files(tmp_path: Path) -> None:
    # a file without the frame is a plain book now (test_gutenberg_plain.py), not refused
    f = _write(tmp_path / "plain.txt", "Just some text.\n\nCHAPTER I.\n\nMore.")
    assert load_gutenberg([f], LoadOptions()).documents[0].metadata["frame"] == "none"
    with pytest.raises(CorpusError, match="holds no text"):
        load_gutenberg([_write(tmp_path / "blank.txt", "\n \n")], LoadOptions())
    with pytest.raises(CorpusError, match="binary"):
        load_gutenberg([_write(tmp_path / "bin.txt", "\x00\x01")], LoadOptions())
    empty = _write(tmp_path / "pg3.txt", (HEADER + "\n\n" + FOOTER).replace("{which}", "THE"))
    with pytest.raises(CorpusError, match="no text between"):
        load_gutenberg([empty], LoadOptions())
    with pytest.raises(InputError, match=r"missing\.txt"):
        load_gutenberg([tmp_path / "missing.txt"], LoadOptions())


def test_same_ebook_twice_is_refused(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.txt", _book(["CHAPTER I."]))
    b = _write(tmp_path / "b.txt", _book(["CHAPTER I."]))
    with pytest.raises(CorpusError, match="both ebook pg99"):
        load_gutenberg([a, b], LoadOptions())


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("CHAPTER I.", ("chapter", 1)),
        (" CHAPTER XIX.", ("chapter", 19)),
        ("BOOK XXIV.", ("book", 24)),
        ("Chapter 12", ("chapter", 12)),
        ("Chapter iv: The Storm", ("chapter", 4)),
        ("CHAPTER THE FIRST", ("chapter", 1)),
        ("CHAPTER TWENTY-ONE", ("chapter", 21)),
        ("BOOK ONE. THE RIVER", ("book", 1)),
        ("CHAPTER V THE RIVER BANK", ("chapter", 5)),
        ("Book I have read twice.", None),
        ("CHAPTER IIII.", None),
        ("chapter I.", None),
        ("The CHAPTER I.", None),
        ("BOOK", None),
        ("CHAPTER " + "X" * 90, None),
    ],
)
def test_parse_heading(line: str, expected: tuple[str, int] | None) -> None:
    assert parse_heading(line) == expected


def test_roman_to_int() -> None:
    assert [roman_to_int(s) for s in ("I", "IV", "ix", "XXIV", "XL", "MCMXCIV")] == [
        1, 4, 9, 24, 40, 1994,
    ]  # fmt: skip
    assert roman_to_int("IIII") is None and roman_to_int("Iv") is None and roman_to_int("") is None


def test_divisions_cover_the_body() -> None:
    body = "front\n\nCHAPTER I.\n\n" + "x " * 200 + "\n\nCHAPTER II.\n\n" + "y " * 200
    divs = find_divisions(body)
    assert [d.key for d in divs] == ["front", "ch01", "ch02"]
    assert divs[0].start == 0 and divs[-1].end == len(body)
    assert all(a.end == b.start for a, b in itertools.pairwise(divs))


# --- the real books from ../shared/data ---------------------------------------------------------


@pytest.fixture(scope="module")
def dorian(dorian_path: Path) -> LoadedCorpus:
    return load_gutenberg([dorian_path], LoadOptions())


@pytest.fixture(scope="module")
def iliad(iliad_path: Path) -> LoadedCorpus:
    return load_gutenberg([iliad_path], LoadOptions())


BOILERPLATE = ("Project Gutenberg", "gutenberg.org", "START OF THE", "END OF THE PROJECT",
               "PLEASE READ THIS", "Gutenberg-tm")  # fmt: skip


@pytest.mark.data
def test_dorian_gray(dorian: LoadedCorpus) -> None:
    [doc] = dorian.documents
    assert (doc.id, doc.title) == ("pg174", "The Picture of Dorian Gray")
    assert doc.metadata["author"] == "Oscar Wilde"
    chapters = sorted({n.metadata["chapter"] for n in dorian.nodes if "chapter" in n.metadata})
    assert chapters == list(range(1, 21))
    assert _divisions(dorian) == ["front"] + [f"ch{i:02d}" for i in range(1, 21)]
    assert not any("book" in n.metadata for n in dorian.nodes)
    assert all(n.metadata["author"] == "Oscar Wilde" for n in dorian.nodes)
    for phrase in BOILERPLATE:
        assert not any(phrase in n.text for n in dorian.nodes), phrase
    assert any("influence" in n.text and "Lord Henry" in n.text for n in dorian.nodes)
    first = next(n for n in dorian.nodes if n.id == "pg174:ch01:0000")
    assert first.text.startswith(
        "CHAPTER I.\n\n\nThe studio was filled with the rich odour of roses"
    )
    assert "pg174:ch01:0003" in {n.id for n in dorian.nodes}
    # the preface is front matter; the last chapter ends the book
    assert any(
        "The artist is the creator" in n.text
        for n in dorian.nodes
        if n.id.startswith("pg174:front")
    )
    assert dorian.nodes[-1].text.endswith("recognized who it was.\n\nTHE END")


@pytest.mark.data
def test_iliad(iliad: LoadedCorpus, iliad_path: Path) -> None:
    [doc] = iliad.documents
    assert (doc.id, doc.title) == ("pg6130", "The Iliad")
    assert doc.metadata["author"] == "Homer"
    assert doc.metadata["translator"] == "Alexander Pope"
    assert doc.metadata["encoding"] == "cp1252"  # the file is Windows-1252 despite its header
    books = sorted({n.metadata["book"] for n in iliad.nodes if "book" in n.metadata})
    assert books == list(range(1, 25))
    assert _divisions(iliad) == ["front"] + [f"b{i:02d}" for i in range(1, 25)] + ["back"]
    for phrase in BOILERPLATE:
        assert not any(phrase in n.text for n in iliad.nodes), phrase
    book1 = " ".join(n.text for n in iliad.nodes if n.metadata.get("book") == 1)
    assert "Achilles’ wrath, to Greece the direful spring" in book1
    assert "THE CONTENTION OF ACHILLES AND AGAMEMNON" in book1
    assert iliad.nodes[0].text.startswith("The Iliad of Homer")  # the stray '?' is gone
    body = parse_gutenberg(iliad_path).body
    assert all(n.text == body[n.start : n.end] for n in iliad.nodes)
    back = [n for n in iliad.nodes if n.metadata["division"] == "back"]
    assert back[0].text.startswith("CONCLUDING NOTE.")
    book24 = " ".join(n.text for n in iliad.nodes if n.metadata.get("book") == 24)
    assert "peaceful slept the mighty Hector’s shade" in book24
    assert "CONCLUDING NOTE" not in book24


@pytest.mark.data
def test_real_ids_are_unique_and_stable(
    dorian: LoadedCorpus, iliad: LoadedCorpus, dorian_path: Path, iliad_path: Path
) -> None:
    for corpus, path in ((dorian, dorian_path), (iliad, iliad_path)):
        ids = [n.id for n in corpus.nodes]
        assert len(ids) == len(set(ids))
        again = load_gutenberg([path], LoadOptions())
        assert [n.id for n in again.nodes] == ids
        assert again.nodes == corpus.nodes
        assert all(re.fullmatch(r"pg\d+:(front|back|b\d\d|ch\d\d):\d{4}", i) for i in ids)
