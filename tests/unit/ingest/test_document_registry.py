"""A document format is its reader module plus one line in documents/registry.py: detection
by name and by bytes, the per-format count and the nodes all follow from that line.  Shown
with a small real reader written here (Org-mode outlines), registered for the test only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.plugins import plugin_module

from excerpt.ingest.detect import LOADERS
from excerpt.ingest.documents import registry
from excerpt.ingest.documents.loader import (
    DOCUMENT_SUFFIXES,
    choose_format,
    load_documents,
    reader_module,
)
from excerpt.ingest.documents.registry import READERS, ReaderSpec
from excerpt.ingest.formats import FORMATS

ORG_READER = '''
"""Org-mode outlines: "* " lines are headings (one star per level), the rest paragraphs."""

from pathlib import Path

from excerpt.ingest.documents.blocks import Block, StructuredDoc


def read(path: Path, doc_id: str) -> StructuredDoc:
    blocks = []
    for line in path.read_text(encoding="utf-8").splitlines():
        stars = len(line) - len(line.lstrip("*"))
        if stars and line[stars:stars + 1] == " ":
            blocks.append(Block("heading", line[stars + 1:].strip(), level=stars))
        elif line.strip():
            blocks.append(Block("paragraph", line.strip()))
    title = next((b.text for b in blocks if b.kind == "heading"), path.stem)
    return StructuredDoc(doc_id, title, blocks)


def looks_like(path: Path) -> bool:
    return path.read_bytes().startswith(b"#+TITLE:")
'''


@pytest.fixture
def org(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The new file (a reader module on the path) and the one registry line."""
    with plugin_module(tmp_path, monkeypatch, "more_formats.org", ORG_READER) as module:
        monkeypatch.setattr(registry, "READERS", [
            *READERS, ReaderSpec("org", (".org",), module, sniffed=True)])
        yield notes(tmp_path / "notes")


def notes(folder: Path) -> Path:
    """A folder of two Org files (one named by its suffix, one by its first line) and a text."""
    folder.mkdir()
    (folder / "garden.org").write_text(
        "* Garden\nTomatoes want six hours of sun.\n** Watering\nWater at dawn, not at noon.\n",
        encoding="utf-8")
    (folder / "README").write_text("#+TITLE: Kitchen\n* Bread\nRest the dough overnight.\n",
                                   encoding="utf-8")
    (folder / "plain.txt").write_text("Plain text still reads as text.\n", encoding="utf-8")
    return folder


def test_a_format_is_one_reader_file_and_one_registry_line(org: Path) -> None:
    assert choose_format(org / "garden.org") == "org"  # by its name
    assert choose_format(org / "README") == "org"  # no name: asked, as HTML and Markdown are
    assert reader_module("org") is not None
    corpus = load_documents([org])
    org_counts = corpus.formats["org"]
    assert (org_counts["read"], org_counts["skipped"]) == (2, 0) and org_counts["nodes"] >= 2
    assert corpus.formats["text"]["read"] == 1
    texts = {n.text for n in corpus.nodes}
    assert any("six hours of sun" in t for t in texts)
    assert any("Rest the dough overnight" in t for t in texts)
    watering = next(n for n in corpus.nodes if "dawn" in n.text)
    assert "Watering" in (watering.metadata.get("section") or watering.text)


def test_the_shipped_formats_are_their_registry_lines() -> None:
    """What the loader, detection and the --format names use is READERS, not tables of
    their own."""
    documents = [spec.format for spec in READERS]
    assert documents == ["pdf", "docx", "epub", "html", "markdown", "text"]
    assert FORMATS[-6:] == ("documents", *documents[:-1])
    assert set(LOADERS) >= set(documents)
    assert set(DOCUMENT_SUFFIXES) == {".pdf", ".docx", ".epub", ".html", ".htm", ".xhtml"}
