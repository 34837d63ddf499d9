"""The place on an ``excerpt ask`` citation line: a document's chapter, page and section as the
readers write them (ingest/documents/blocks.py); books and regulations as ``key=value``."""

from __future__ import annotations

from typing import Any

import pytest

from excerpt.cli.places import citation_place


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"path": "m.pdf", "page": 12, "pages": [12], "section": "2 Design > 2.1 Requirements",
          "headings": ["2 Design", "2.1 Requirements"]}, "p. 12, section 2.1 Requirements"),
        ({"path": "m.pdf", "page": 11, "page_end": 12, "pages": [11, 12]}, "p. 11–12"),
        ({"path": "m.pdf", "page": 5, "pages": [5], "page_label": "iv"}, "p. iv"),
        ({"path": "m.pdf", "page": 17, "page_end": 18, "page_label": "11",
          "page_end_label": "12"}, "p. 11–12"),
        ({"path": "m.pdf", "page": 17, "page_label": "11", "page_end_label": "11"}, "p. 11"),
        ({"path": "b.epub", "chapter": 3, "chapter_title": "Storms", "section": "At sea",
          "headings": ["At sea"]}, "chapter 3 Storms, section At sea"),
        ({"path": "notes.md", "section": "Setup > Keys"}, "section Keys"),  # no headings list
        ({"path": "notes.txt", "chunk": 0}, ""),
        ({"book": 1, "chapter": 3, "author": "Homer", "language": "en"},
         "book=1, chapter=3, author=Homer"),
        ({"regulation": "교원인사규정", "chapter": "제2장 임용", "article": "제15조",
          "path": "x"}, "regulation=교원인사규정, chapter=제2장 임용, article=제15조"),
        ({"file": "src/a.py", "code_language": "python"}, ""),
    ],
)
def test_citation_place(metadata: dict[str, Any], expected: str) -> None:
    assert citation_place(metadata) == expected
