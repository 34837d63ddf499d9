"""Running headers, footers and page numbers of a PDF, found across its pages and left out.

A run in the top or bottom :data:`MARGIN` of its page is furniture when the same text (digits
ignored, so "Page 3 of 9" matches "Page 4 of 9") stands at the same height on several pages, or
when it is a bare page number ("12", "iv", "- 3 -", "Page 3", "3 / 57"). Once a height is known
to carry furniture, every margin run at that height goes too: a chapter's running title that
repeats on only two pages still sits where the other running titles sit.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from excerpt.ingest.documents.pdf_chars import Run

MARGIN = 0.12  # share of the page height at the top and at the bottom
_SAME_Y = 2.5  # points
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


def furniture_heights(pages: Sequence[tuple[float, list[Run]]]) -> dict[str, list[float]]:
    """Heights (per zone) at which headers, footers or page numbers stand, from all pages
    (each given as its height and its runs)."""
    seen: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    heights: dict[str, list[float]] = {"top": [], "bottom": []}
    for number, (height, runs) in enumerate(pages):
        for run in runs:
            where = zone(run, height)
            if where is None:
                continue
            seen[(where, _key(run.text))].append((number, run.mid_y))
    need = min(3, max(2, len(pages)))
    for (where, _), places in seen.items():
        by_y: dict[int, set[int]] = defaultdict(set)
        for number, y in places:
            by_y[round(y / _SAME_Y)].add(number)
        for bucket, numbers in by_y.items():
            near = numbers | by_y.get(bucket - 1, set()) | by_y.get(bucket + 1, set())
            if len(near) >= need:
                heights[where].append(bucket * _SAME_Y)
    return heights


def strip_furniture(height: float, runs: list[Run], heights: dict[str, list[float]]
                    ) -> list[Run]:
    """The page's runs without its header, footer and page number."""
    kept = []
    for run in runs:
        where = zone(run, height)
        if where is not None and (
            is_page_number(run.text)
            or any(abs(run.mid_y - y) <= _SAME_Y * 1.5 for y in heights[where])
        ):
            continue
        kept.append(run)
    return kept
