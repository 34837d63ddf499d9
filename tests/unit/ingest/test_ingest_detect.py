from __future__ import annotations

import json
from pathlib import Path

import pytest

from excerpt.errors import InputError
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.detect import FORMATS, detect_format, load

GUTENBERG = (
    "The Project Gutenberg eBook of Tiny, by Nobody\n\nTitle: Tiny\n\nAuthor: Nobody\n\n"
    "Release Date: 2001 [eBook #42]\n\n*** START OF THE PROJECT GUTENBERG EBOOK TINY ***\n\n"
    "CHAPTER I.\n\n" + "Once upon a time there was a tiny book. " * 10 + "\n\n"
    "*** END OF THE PROJECT GUTENBERG EBOOK TINY ***\n\nLicence text of Project Gutenberg.\n"
)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    beir = tmp_path / "scifact"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text(json.dumps({"_id": "1", "text": "abstract"}) + "\n")
    book = tmp_path / "pg42_tiny.txt"
    book.write_text(GUTENBERG)
    notes = tmp_path / "docs"
    notes.mkdir()
    (notes / "a.md").write_text("# Notes\n\nMentions Project Gutenberg but is not a book.\n")
    (notes / "book.txt").write_text(GUTENBERG)  # inside a folder: the folder is text
    plain = tmp_path / "plain.txt"
    plain.write_text("The Project Gutenberg story, retold: no START marker here.\n")
    return {"beir": beir, "book": book, "notes": notes, "plain": plain}


def test_detect_format(tree: dict[str, Path]) -> None:
    assert detect_format([tree["beir"]]) == "beir"
    assert detect_format([tree["beir"] / "corpus.jsonl"]) == "beir"
    assert detect_format([tree["book"]]) == "gutenberg"
    assert detect_format([tree["notes"]]) == "text"
    assert detect_format([tree["notes"] / "a.md"]) == "text"
    assert detect_format([tree["plain"]]) == "text"
    assert detect_format([tree["plain"], tree["notes"]]) == "text"


def test_mixed_formats_and_missing_paths_are_refused(tree: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(InputError, match="different formats") as info:
        detect_format([tree["book"], tree["beir"]])
    assert "gutenberg" in str(info.value) and "beir" in str(info.value)
    with pytest.raises(InputError, match="nowhere"):
        detect_format([tmp_path / "nowhere"])
    with pytest.raises(InputError):
        detect_format([])


def test_load_dispatches(tree: dict[str, Path]) -> None:
    options = LoadOptions(acl_tags=("team",))
    beir = load([tree["beir"]], "auto", options)
    assert [n.id for n in beir.nodes] == ["1"]
    book = load([tree["book"]], "auto", options)
    assert book.documents[0].id == "pg42" and book.nodes[0].id == "pg42:ch01:0000"
    notes = load([tree["notes"]], "auto", options)
    assert [d.id for d in notes.documents] == ["a.md", "book.txt"]
    as_text = load([tree["book"]], "text", options)  # a named format wins over detection
    assert as_text.documents[0].id == "pg42_tiny.txt"
    assert all(n.acl_tags == ("team",) for c in (beir, book, notes) for n in c.nodes)
    assert load([tree["plain"]]).documents[0].id == "plain.txt"  # defaults: auto, no options


def test_unknown_formats(tree: dict[str, Path]) -> None:
    with pytest.raises(InputError, match="unknown format 'xlsx'") as info:
        load([tree["plain"]], "xlsx", LoadOptions())
    for name in ("auto", "text", "gutenberg", "beir"):
        assert name in str(info.value)
    assert set(FORMATS) == {"auto", "text", "gutenberg", "beir", "code", "code-bundle",
                            "regulations", "hwpx", "documents", "pdf", "docx", "epub", "html",
                            "markdown"}


@pytest.mark.data
def test_real_data_detection(dorian_path: Path, iliad_path: Path, scifact_dir: Path) -> None:
    assert detect_format([dorian_path]) == "gutenberg"
    assert detect_format([iliad_path]) == "gutenberg"  # despite the stray '?' and cp1252 bytes
    assert detect_format([dorian_path, iliad_path]) == "gutenberg"
    assert detect_format([scifact_dir]) == "beir"
    assert detect_format([dorian_path.parent]) == "gutenberg"  # a folder of Gutenberg books


def test_a_folder_is_gutenberg_only_when_every_file_is(dorian_path: Path, tmp_path: Path) -> None:
    (tmp_path / "dorian.txt").write_bytes(dorian_path.read_bytes())
    assert detect_format([tmp_path]) == "gutenberg"
    (tmp_path / "notes.txt").write_text("My own notes on the novel.", "utf-8")
    assert detect_format([tmp_path]) == "text"


def test_a_folder_of_source_code_is_detected(tmp_path: Path) -> None:
    code = tmp_path / "repo"
    (code / "src").mkdir(parents=True)
    (code / "src" / "A.cs").write_text("class A { }")
    (code / "db.sql").write_text("CREATE TABLE t (x INT)")
    (code / "README.md").write_text("# repo")
    assert detect_format([code]) == "code"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# a")
    (notes / "b.md").write_text("# b")
    (notes / "schema.sql").write_text("CREATE TABLE t (x INT)")
    assert detect_format([notes]) == "text"


def test_the_format_names_are_the_loaders_and_a_search_imports_no_reader() -> None:
    import subprocess
    import sys

    from excerpt.ingest import detect
    from excerpt.ingest.formats import FORMATS as NAMES

    assert NAMES == detect.FORMATS == ("auto", *detect.LOADERS)
    probe = ("import sys, excerpt.cli.main, excerpt.engine; "
             "print(sorted(m for m in sys.modules if m.startswith('excerpt.ingest.')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True).stdout
    for reader in ("detect", "documents.pdf", "documents.loader", "code.csharp", "code.tsql",
                   "books.gutenberg"):
        assert f"'excerpt.ingest.{reader}'" not in loaded, reader
