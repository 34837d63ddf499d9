"""Documents: auto-detection, a reader per file by content then name, the per-format report."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.unit.ingest.files import write_file

from excerpt.cli.main import cli
from excerpt.errors import CorpusError
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.detect import detect_format, load
from excerpt.ingest.documents.loader import choose_format, load_documents, reader_module

PAGE = (
    "<!DOCTYPE html><html><head><title>Install page</title></head><body>"
    "<nav><a href='/'>Home</a></nav><main><h1>Installing</h1>"
    "<p>Run the installer and follow the steps on screen.</p></main></body></html>"
)


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    root = tmp_path / "mixed"
    write_file(root / "page.html", PAGE)
    write_file(root / "fake.pdf", "this is a text file wearing a .pdf name\n")
    write_file(root / "guides" / "guide.md", "# Guide\n\nSome *markdown*.\n\n## Part\n\n| a | b |\n"
                                         "|---|---|\n| 1 | 2 |\n")
    write_file(root / "notes.txt", "Plain notes about the release.\n")
    write_file(root / "README", "# Project\n\nA README without a suffix.\n")
    write_file(root / "data.json", "{}\n")
    write_file(root / ".hidden.html", PAGE)
    return root


def test_auto_detection_picks_documents(mixed: Path, tmp_path: Path) -> None:
    assert detect_format([mixed]) == "documents"
    assert detect_format([mixed / "page.html"]) == "documents"
    for name in ("a.htm", "b.docx", "c.epub", "d.pdf", "e.xhtml"):
        assert detect_format([write_file(tmp_path / "one" / name, "x")]) == "documents"
    # text and Markdown alone stay text; with documents they are read by the documents loader
    assert detect_format([mixed / "guides"]) == "text"
    assert detect_format([mixed / "guides" / "guide.md"]) == "text"
    assert detect_format([mixed / "guides", mixed / "page.html"]) == "documents"
    # the formats detected before documents existed keep winning
    write_file(tmp_path / "hwpx" / "book.hwpx", "x")
    write_file(tmp_path / "hwpx" / "manual.pdf", "x")
    assert detect_format([tmp_path / "hwpx"]) == "hwpx"
    write_file(tmp_path / "code" / "a.cs", "class A {}")
    write_file(tmp_path / "code" / "b.cs", "class B {}")
    write_file(tmp_path / "code" / "help.html", PAGE)
    assert detect_format([tmp_path / "code"]) == "code"


def test_a_mixed_folder_is_read_per_format_and_nothing_is_skipped_silently(mixed: Path) -> None:
    corpus = load([mixed], "auto", LoadOptions(acl_tags=("staff",)))
    assert [d.id for d in corpus.documents] == ["README", "guides/guide.md", "notes.txt",
                                                "page.html"]
    assert {d.id: d.metadata["format"] for d in corpus.documents} == {
        "README": "markdown", "guides/guide.md": "markdown", "notes.txt": "text",
        "page.html": "html"}  # fmt: skip
    issues = {Path(i.path).name: i.reason for i in corpus.errors}
    assert set(issues) == {"fake.pdf", "data.json"}  # hidden files are not content
    assert "unsupported file type" in issues["data.json"] and ".json" in issues["data.json"]
    assert issues["fake.pdf"]  # the PDF reader's reason (or: no PDF reader installed)
    nodes = {fmt: sum(n.document_id == d.id for n in corpus.nodes for d in corpus.documents
                      if d.metadata["format"] == fmt) for fmt in ("markdown", "text", "html")}
    assert corpus.formats == {
        "html": {"read": 1, "skipped": 0, "nodes": nodes["html"]},
        "markdown": {"read": 2, "skipped": 0, "nodes": nodes["markdown"]},
        "other": {"read": 0, "skipped": 1, "nodes": 0},
        "pdf": {"read": 0, "skipped": 1, "nodes": 0},
        "text": {"read": 1, "skipped": 0, "nodes": nodes["text"]},
    }
    assert all(n.acl_tags == ("staff",) for n in corpus.nodes)
    [page] = [n for n in corpus.nodes if n.document_id == "page.html"]
    assert "Run the installer" in page.text and page.metadata["format"] == "html"
    [part] = [n for n in corpus.nodes if n.metadata.get("section") == "Guide > Part"]
    assert part.text == "Part\n\na | b\n\n1 | 2"


def test_one_format_by_name(mixed: Path) -> None:
    md = load([mixed], "markdown", LoadOptions())
    assert [d.id for d in md.documents] == ["README", "guides/guide.md"]
    reasons = {Path(i.path).name: i.reason for i in md.errors}
    assert reasons["page.html"] == "a html file; --format markdown reads only markdown"
    assert md.formats["markdown"]["read"] == 2 and md.formats["html"]["skipped"] == 1
    # a file named directly is read as the format named, whatever its name
    as_md = load([mixed / "notes.txt"], "markdown", LoadOptions())
    assert as_md.documents[0].metadata["format"] == "markdown"
    with pytest.raises(CorpusError, match=r"fake\.pdf"):  # nothing read: the reasons are named
        load([mixed], "pdf", LoadOptions())


def test_content_decides_over_the_name_for_binary_formats(tmp_path: Path) -> None:
    pdf = write_file(tmp_path / "report.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
    docx = _zip(tmp_path / "letter.bin", {"[Content_Types].xml": b"<x/>",
                                          "word/document.xml": b"<w:document/>"})
    epub = _zip(tmp_path / "book.zip", {"mimetype": b"application/epub+zip",
                                        "META-INF/container.xml": b"<x/>"})
    other_zip = _zip(tmp_path / "archive.docx", {"readme.txt": b"hi"})
    html = write_file(tmp_path / "page", PAGE)
    md_with_html = write_file(tmp_path / "README.md", '<div align="center">Logo</div>\n\n# Title\n')
    assert choose_format(pdf) == "pdf"
    assert choose_format(docx) == "docx"
    assert choose_format(epub) == "epub"
    assert choose_format(other_zip) == "docx"  # by its name: the reader says what is wrong
    assert choose_format(html) == ("html" if reader_module("html") else None)
    assert choose_format(md_with_html) == "markdown"  # a text file's name decides
    assert choose_format(write_file(tmp_path / "x.json", "{}")) is None


def test_reader_modules_and_document_ids(tmp_path: Path) -> None:
    assert reader_module("no_such_format") is None
    assert reader_module("markdown") is not None
    write_file(tmp_path / "x" / "README.md", "# One\n")
    write_file(tmp_path / "y" / "README.md", "# Two\n")
    with pytest.raises(CorpusError, match=r"README\.md"):
        load_documents([tmp_path / "x" / "README.md", tmp_path / "y" / "README.md"])
    corpus = load_documents([tmp_path / "x", tmp_path / "x" / "README.md"])  # the same file twice
    assert [d.id for d in corpus.documents] == ["README.md"]


def _ingest_json(home: Path, folder: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["--home", str(home), "ingest", str(folder), "--embedder",
                                      "none", "--no-progress", "--json"], obj={"json": False})
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def test_excerpt_ingest_of_a_mixed_folder_names_every_file_it_skips(
        mixed: Path, tmp_path: Path) -> None:
    payload = _ingest_json(tmp_path / "home", mixed)
    assert (payload["status"], payload["documents"], payload["skipped"]) == ("completed", 4, 2)
    assert {Path(e["path"]).name for e in payload["errors"]} == {"fake.pdf", "data.json"}


def test_excerpt_ingest_reports_per_format(mixed: Path, tmp_path: Path) -> None:
    payload = _ingest_json(tmp_path / "home", mixed)
    assert {fmt: (c["read"], c["skipped"]) for fmt, c in payload["formats"].items()} == {
        "html": (1, 0), "markdown": (2, 0), "other": (0, 1), "pdf": (0, 1), "text": (1, 0)}
