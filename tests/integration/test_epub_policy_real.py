"""Debian Policy's EPUB (issue 28 item 13): its chapters carry the manual's own numbers, so
"Binary packages" is chapter 3 (it was 4: the title page counted), a citation reads "chapter 3
Binary packages, section 3.x", and a question naming chapter 3 searches it (it searched
chapter 2). Skipped, naming the package, when the Debian file is absent (``apt-get install
debian-policy``; ``make test`` installs it as root). The ingest takes ~2 s."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.cli.places import citation_place
from excerpt.engine import Engine
from excerpt.ingest.documents import epub
from excerpt.types import Filters

POLICY = Path("/usr/share/doc/debian-policy/policy.epub")


@pytest.fixture(scope="module")
def policy() -> Path:
    if not POLICY.is_file():
        pytest.skip(f"{POLICY} is absent: the Debian package debian-policy is not installed "
                    "(apt-get install debian-policy)")
    return POLICY


def test_chapters_are_the_manuals_numbers(policy: Path) -> None:
    titles: dict[int | None, set[str | None]] = {}
    for block in epub.read(policy, "policy.epub").blocks:
        titles.setdefault(block.chapter, set()).add(block.chapter_title)
    assert titles[3] == {"Binary packages"} and titles[1] == {"About this manual"}
    assert titles[12] == {"Documentation"} and max(n for n in titles if n) == 12
    # the title page and the appendices (numbered 1 to 11 again) are no chapters
    assert {"Debian Policy Manual", "License"} <= titles[None]


def test_a_question_naming_chapter_3_searches_binary_packages(
        policy: Path, tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    engine.ingest([policy], collection="policy", embedder="none")
    answer = engine.ask("What does chapter 3 say about the version of a package?",
                        Filters("policy"), mode="bm25")
    assert answer.scope == {"chapter": 3}
    places = [citation_place(c.metadata) for c in answer.composed.citations]
    assert places and all(p.startswith("chapter 3 Binary packages, section 3.") for p in places)
