"""One chunk -> Node function for the text, Markdown and Gutenberg loaders: the ids and fields
they emitted before it was shared are the ids and fields they emit now (a changed id would
re-import every node of a source on its next sync)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.unit.ingest.files import write_file

from excerpt.ingest.base import LoadOptions
from excerpt.ingest.books.gutenberg import load_gutenberg
from excerpt.ingest.documents.loader import load_documents
from excerpt.ingest.nodes import chunk_node, chunk_node_id
from excerpt.types import Node

# sha256 of every node's id, start, end, text and metadata, taken from the loaders as they were
# before chunk_node (commit 1ed9835): a change to any node of the book changes it.
BOOK_FINGERPRINTS = {
    "pg174_dorian_gray.txt":
        (666, "5c016f87a769f5712838b8e7da5129107f0577d97a9620f891623db6e23b8c6b"),
    "pg6130_iliad_pope.txt":
        (1786, "c6aa067ac7cd486a0203185ad742a151bcc143da3e9b3c771fa275810658f2e2"),
}


def fingerprint(nodes: list[Node]) -> str:
    rows = (f"{n.id}\t{n.document_id}\t{n.title}\t{n.start}\t{n.end}\t"
            f"{hashlib.sha256(n.text.encode()).hexdigest()}\t"
            f"{json.dumps(dict(n.metadata), sort_keys=True)}\t{n.acl_tags}\t"
            f"{n.classification_labels}" for n in nodes)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def test_chunk_node_id_pads_the_chunk_to_four_digits() -> None:
    assert chunk_node_id("notes/a.md", 7) == "notes/a.md:0007"
    assert chunk_node_id("pg1:ch2", 12345) == "pg1:ch2:12345"


def test_chunk_node_carries_span_labels_and_prefix() -> None:
    options = LoadOptions(acl_tags=("b", "a", "a", ""), classification_labels=("secret",))
    node = chunk_node("pg9", 3, "text", (10, 14), title="T", source="/s", options=options,
                      metadata={"chunk": 3}, prefix="pg9:ch1")
    assert node == Node(id="pg9:ch1:0003", document_id="pg9", text="text", title="T",
                        source="/s", start=10, end=14, acl_tags=("a", "b"),
                        classification_labels=("secret",), metadata={"chunk": 3})
    assert chunk_node("d", 0, "x", (0, 1), title="", source="", options=LoadOptions(),
                      metadata={}).id == "d:0000"


@pytest.mark.parametrize("name", sorted(BOOK_FINGERPRINTS))
def test_gutenberg_nodes_unchanged(shared_data: object, name: str) -> None:
    path = shared_data("books", name)  # type: ignore[operator]
    corpus = load_gutenberg([path])
    count, expected = BOOK_FINGERPRINTS[name]
    assert len(corpus.nodes) == count
    assert fingerprint(corpus.nodes) == expected


def test_text_and_markdown_nodes_unchanged(tmp_path: Path) -> None:
    """Ids, spans and metadata of a plain-text file and a Markdown file with nested headings,
    as the loaders wrote them before chunk_node."""
    write_file(tmp_path / "plain.txt", "Title line\n\n" + "word " * 300)
    write_file(tmp_path / "guide.md", "# Guide\n\nIntro text.\n\n## Setup\n\n- one\n- two\n\n"
               "### Deeper\n\n```sh\nrun it\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    corpus = load_documents([tmp_path], LoadOptions(chunk_chars=400, overlap_chars=50,
                                                    acl_tags=("team",)))
    got = [(n.id, n.start, n.end, dict(n.metadata), n.acl_tags) for n in corpus.nodes]
    markdown = {"format": "markdown", "path": "guide.md"}
    text = {"path": "plain.txt"}
    assert got == [
        ("guide.md:0000", 0, 18,
         {**markdown, "chunk": 0, "headings": ["Guide"], "section": "Guide"}, ("team",)),
        ("guide.md:0001", 20, 65, {**markdown, "chunk": 1, "headings": ["Guide", "Setup"],
                                   "section": "Guide > Setup"}, ("team",)),
        ("plain.txt:0000", 0, 396, {**text, "chunk": 0}, ("team",)),
        ("plain.txt:0001", 347, 796, {**text, "chunk": 1, "overlap": 50}, ("team",)),
        ("plain.txt:0002", 747, 1196, {**text, "chunk": 2, "overlap": 50}, ("team",)),
        ("plain.txt:0003", 1147, 1511, {**text, "chunk": 3, "overlap": 50}, ("team",)),
    ]
