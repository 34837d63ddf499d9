"""The Markdown reader: structure as a Markdown renderer sees it, and its nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.errors import InputError
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.documents.blocks import Block
from excerpt.ingest.documents.markdown import looks_like, parse, read
from excerpt.ingest.documents.text import load_text

GUIDE = """---
title: "The Operator's Guide"
layout: page
---

Setup
=====

Read **this** first: see [the index](https://example.org/index) and `excerpt --help`.
A second line of the same paragraph.

Options
-------

- top item
  - nested *item*
    - deeper
1. numbered

| Flag | Meaning |
|------|---------|
| `-q` | quiet   |
| -v   | verbose |

```bash
# a shell comment, not a heading
excerpt ingest docs/
```

    indented code block

### Notes ###

> Quoted ![a diagram](d.png) here.

<div align="center">Centered <b>banner</b></div>
"""


def test_blocks_of_a_markdown_document() -> None:
    doc = parse(GUIDE, "guide.md", "guide.md")
    assert doc.title == "The Operator's Guide"  # front matter wins, and is no text
    assert doc.metadata == {"format": "markdown"}
    assert doc.blocks == [
        Block("heading", "Setup", 1),  # setext =
        Block("paragraph", "Read this first: see the index and `excerpt --help`.\n"
                           "A second line of the same paragraph."),
        Block("heading", "Options", 2),  # setext -
        Block("list_item", "top item", 0),
        Block("list_item", "nested item", 1),
        Block("list_item", "deeper", 2),
        Block("list_item", "numbered", 0),
        Block("table_row", "Flag | Meaning"),  # the header row too
        Block("table_row", "`-q` | quiet"),
        Block("table_row", "-v | verbose"),
        Block("code", "# a shell comment, not a heading\nexcerpt ingest docs/"),
        Block("code", "indented code block"),
        Block("heading", "Notes", 3),  # ATX, closing hashes dropped
        Block("paragraph", "Quoted a diagram here."),
        Block("paragraph", "Centered banner"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "title"),
    [
        ("intro\n\n## Second level only\n\ntext\n", "Second level only"),
        ("## Two\n\n# One\n\ntext\n", "One"),  # a level-1 heading before any other
        ("\n\n### \n\nJust a line of text\n", "Just a line of text"),
        ("---\ntitle: From Front Matter\n---\n\n# H1\n", "From Front Matter"),
        ("```\ncode only\n```\n", "code only"),
    ],
)
def test_titles(source: str, title: str) -> None:
    assert parse(source, "a.md", "a.md").title == title


def test_nodes_follow_the_structure(tmp_path: Path) -> None:
    body = "Paragraph sentence that fills the section. " * 12
    table = "| a | b |\n|---|---|\n" + "".join(f"| row {i} | value {i} |\n" for i in range(30))
    code = "```\n" + "".join(f"step_{i}()\n" for i in range(40)) + "```\n"
    f = tmp_path / "guide.md"
    f.write_text(f"# Guide\n\n{body}\n\n## Table\n\n{table}\n## Code\n\n{code}\n### Tail\n\nEnd.\n")
    corpus = load_text([f], LoadOptions(chunk_chars=300, overlap_chars=40))
    texts = [n.text for n in corpus.nodes]
    code_text = "\n".join(f"step_{i}()" for i in range(40))
    assert "Code\n\n" + code_text in texts  # the heading with its code block, whole
    rows = [t for t in texts if "row 1 |" in t]
    assert all(line.startswith(("row ", "a | b", "Table")) for t in rows for line in
               t.split("\n\n"))  # rows are never cut: every piece is a whole row or a heading
    sections = {n.metadata.get("section") for n in corpus.nodes}
    assert sections == {"Guide", "Guide > Table", "Guide > Code", "Guide > Code > Tail"}
    assert texts[-1] == "Tail\n\nEnd."  # the code block filled its node: Tail starts one
    assert all(n.metadata["format"] == "markdown" for n in corpus.nodes)


def test_read_refuses_what_is_not_markdown_text(tmp_path: Path) -> None:
    binary = tmp_path / "x.md"
    binary.write_bytes(b"\x00\x01binary")
    with pytest.raises(InputError, match=r"x\.md: binary file"):
        read(binary, "x.md")
    front_only = tmp_path / "front.md"
    front_only.write_text("---\ntitle: Nothing else\n---\n")
    with pytest.raises(InputError, match=r"front\.md: no text"):
        read(front_only, "front.md")
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nText.\n")
    expected = [Block("heading", "Good", 1), Block("paragraph", "Text.")]
    assert read(good, "good.md").blocks == expected


def test_looks_like(tmp_path: Path) -> None:
    cases = {
        "a.md": "anything", "b.MARKDOWN": "x", "README": "# Project\n\ntext",
        "front": "---\ntitle: x\n---\n", "plain": "just words", "hashtag": "#nospace",
    }  # fmt: skip
    for name, content in cases.items():
        (tmp_path / name).write_text(content)
    assert {n for n in cases if looks_like(tmp_path / n)} == {"a.md", "b.MARKDOWN", "README",
                                                               "front"}
    (tmp_path / "bin").write_bytes(b"# \x00")
    assert not looks_like(tmp_path / "bin")
