"""Running headers, footers and page numbers of a PDF, found across its pages and left out.

A run in the top or bottom :data:`MARGIN` of its page is furniture when it is a bare page
number ("12", "iv", "- 3 -", "Page 3", "3 / 57"), or when it stands at a height that carries
furniture: where texts that repeat (digits ignored, so "Page 3 of 9" matches "Page 4 of 9")
stand on a good share of the pages. Every margin run at such a height goes, so a chapter's
running title that repeats on only two pages still goes with the others; a section number
such as "1.2" is no text to compare (sections often start at the top of a page), and a table
of contents whose page numbers line up on three pages makes no such height.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from excerpt.ingest.documents.pdf_blocks import HEADING_RATIO
from excerpt.ingest.documents.pdf_chars import Run

MARGIN = 0.12  # share of the page height at the top and at the bottom
_SAME_Y = 2.5  # points
_REPEATS = 3  # a text on this many pages at one height repeats
_SHARE = 0.25  # furniture stands at its height on at least this share of the pages
_PAGE_NUMBER = re.compile(
    r"^[\W_]*(page|p\.|seite|pág\.?)?\s*(\d{1,5}|[ivxlcdm]{1,7})(\s*(/|of|von|de)\s*\d{1,5})?[\W_]*$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")


def zone(run: Run, height: float) -> str | None:
    """``"top"`` or ``"bottom"`` when the run lies in a page margin, else None."""
    if run.mid_y >= height * (1 - MARGIN):
        return "top"
    if run.mid_y <= height * MARGIN:
        return "bottom"
    return None


def is_page_number(text: str) -> bool:
    return bool(_PAGE_NUMBER.match(text.strip()))


def _key(text: str) -> str:
    return " ".join(_DIGITS.sub("#", text.lower()).split())


@dataclass
class Furniture:
    """Where a document's headers and footers stand (heights per zone), and the font size above
    which a run is a heading, never furniture, however often it repeats."""

    heights: dict[str, list[float]]
    larger: float


def furniture_heights(pages: Sequence[tuple[float, list[Run]]]) -> Furniture:
    """Heights (per zone) at which headers, footers or page numbers stand, from all pages
    (each given as its height and its runs): a height where texts that repeat (each on
    :data:`_REPEATS` pages or more) stand on at least :data:`_SHARE` of the pages. A table of
    contents whose page numbers line up at the top of three pages makes no such height, nor
    do headings (set larger than the body text) that sit at the top of many pages."""
    sizes = Counter(round(run.size) for _, runs in pages for run in runs)
    larger = HEADING_RATIO * (sizes.most_common(1)[0][0] if sizes else 10.0)
    seen: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for number, (height, runs) in enumerate(pages):
        for run in runs:
            where = zone(run, height)
            if where is not None and (
                is_page_number(run.text)
                or (run.size <= larger and re.search(r"[^\W\d_]{2}", run.text))
            ):
                seen[(where, _key(run.text))].append((number, run.mid_y))
    need = min(_REPEATS, max(2, len(pages)))
    bands: dict[tuple[str, int], set[int]] = defaultdict(set)
    for (where, _), places in seen.items():
        by_y: dict[int, set[int]] = defaultdict(set)
        for number, y in places:
            by_y[round(y / _SAME_Y)].add(number)
        for bucket, numbers in by_y.items():
            near = numbers | by_y.get(bucket - 1, set()) | by_y.get(bucket + 1, set())
            if len(near) >= need:
                bands[(where, bucket)] |= near
    heights: dict[str, list[float]] = {"top": [], "bottom": []}
    for (where, bucket), numbers in bands.items():
        if len(numbers) >= max(need, _SHARE * len(pages)):
            heights[where].append(bucket * _SAME_Y)
    return Furniture(heights, larger)


def strip_furniture(height: float, runs: list[Run], furniture: Furniture) -> list[Run]:
    """The page's runs without its header, footer and page number."""
    kept = []
    for run in runs:
        where = zone(run, height)
        if where is not None and (
            is_page_number(run.text)
            or (run.size <= furniture.larger
                and any(abs(run.mid_y - y) <= _SAME_Y * 1.5 for y in furniture.heights[where]))
        ):
            continue
        kept.append(run)
    return kept
