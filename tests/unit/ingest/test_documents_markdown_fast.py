"""The Markdown reader's fast path (an inline token without markup is taken as its text, not
parsed) reads exactly what markdown-it's full inline parse reads: same blocks, same title, on
this repository's docs and handbook, generated notes and inline cases chosen to be close calls."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from excerpt.ingest.documents.markdown import FULL_PARSER, parse

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench"))
from markdown_ingest import sample_markdown  # noqa: E402

CLOSE_CALLS = [
    "Plain words only\nand a second line",
    "Trailing two spaces  \nmake a hard break",
    "Trailing backslash\\\nis a hard break too",
    "Tabs\tinside\tand   runs   of spaces\n   indented continuation",
    "Non\u00a0breaking\u2003spaces and \u3000ideographic ones",
    "Escaped \\*stars\\* and \\_under\\_ and \\[brackets\\]",
    "Entities &amp; &copy; &#169; &nosuch; and a lone & sign",
    "Colons: dashes - pluses + equals = carets ^ braces {} hashes # dollars $ percent %",
    "An autolink <https://example.org> and <b>inline html</b> and a < b > c",
    "Ref [link][r] and [r]\n\n[r]: https://example.org \"T\"",
    "![alt *text*](img.png) and ![](empty.png) then ~~gone~~ and ~single~",
    "Code `a  b` and ``x ` y`` and an unclosed ` tick",
    "snake_case_word and 2*3*4 and **bold _nested_**",
    "# Heading with `code` #\n\nSetext *one*\n===\n\nSetext two\n---",
    "| a | b \\| c |\n|---|---|\n| `x|y` | **z** |\n| plain | cells |",
    "- item\n  - nested *em*\n    1. deep\n\n> quote with [link](u)\n> second line",
    "```\n*not* markup\n```\n\n    indented code\n\n<div>\nraw *html*\n</div>",
    "---\ntitle: \"Front\"\n---\n# Body\n\ntext",
    "Line one\r\nline two\r\n\r\nnull\x00char",
]


def _same(text: str) -> None:
    fast = parse(text, "d", "d.md")
    full = parse(text, "d", "d.md", parser=FULL_PARSER)
    assert fast.blocks == full.blocks
    assert fast.title == full.title


@pytest.mark.parametrize("text", CLOSE_CALLS)
def test_fast_path_reads_close_calls_as_the_full_parse(text: str) -> None:
    _same(text)


def test_fast_path_reads_repo_markdown_as_the_full_parse() -> None:
    files = sorted((REPO / "docs").glob("*.md")) + sorted((REPO / "examples").rglob("*.md"))
    assert files
    for path in files:
        _same(path.read_text(encoding="utf-8"))


def test_fast_path_reads_generated_notes_as_the_full_parse() -> None:
    rng = random.Random(7)
    for n in range(200):
        _same(sample_markdown(rng, n))


def test_full_parser_differs_from_a_naive_reading() -> None:
    """The comparison can fail: markup the fast path must not skip changes the text."""
    text = "Escaped \\*stars\\* and &amp;"
    assert parse(text, "d", "d.md", parser=FULL_PARSER).blocks[0].text != text  # naive: as written
    assert parse(text, "d", "d.md").blocks[0].text == "Escaped *stars* and &"
