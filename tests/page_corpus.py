"""Documents with pages and numbered sections for the ``ask`` scope and citation tests
(issue 19 item 4): a Markdown manual with numbered headings (read by the real Markdown reader),
and PDF-like nodes carrying the page metadata the PDF reader writes
(ingest/documents/blocks.py), published as BEIR corpora."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MANUAL = """---
title: Boiler Operation Manual
---

# 1 Scope

This manual covers the operation of the steam boiler in the east plant room. The boiler
pressure and the water level are the two readings every operator keeps in view.

# 2 Operation

Operation follows the daily schedule posted beside the boiler. Nobody operates the boiler
alone during the night shift, and the boiler pressure is read at every change of shift.

## 2.1 Requirements

Operators must check the boiler pressure gauge before each shift and write the reading in
the log book. The boiler pressure must stay below ten bar at all times.

## 2.2 Procedures

To start the boiler, open the feed water valve, then light the burner. Raise the boiler
pressure slowly, by no more than one bar every five minutes.

# 3 Maintenance

The boiler pressure relief valve is tested every month by the maintenance crew, who check
that the boiler pressure relief opens below twelve bar.
"""


def page_meta(page: int, end: int | None = None, label: str | None = None,
              section: str | None = None) -> dict[str, Any]:
    """A PDF node's metadata as the document readers write it."""
    meta: dict[str, Any] = {"path": "pump.pdf", "format": "pdf", "page": page,
                            "pages": list(range(page, (end or page) + 1))}
    if end is not None:
        meta["page_end"] = end
    if label is not None:
        meta["page_label"] = label
    if section is not None:
        number = section.split()[0]
        meta.update(section=section, headings=[section], section_number=number,
                    section_numbers=[number])
    return meta


PAGES = {
    "p11": ("The pump pressure is set by the left dial on the front panel.", page_meta(11)),
    "p11-12": ("The pump pressure alarm sounds when the dial passes the red mark, and the "
               "pump pressure then falls by itself.", page_meta(11, 12, section="4.2 Alarms")),
    "p12": ("A pump pressure above six bar needs the supervisor.", page_meta(12)),
    "p13": ("The pump pressure log is kept for a year.", page_meta(13)),
}
LABELLED = {  # front matter numbered i, ii …: the page printed "12" is the file's page 24
    "front": ("The valve pressure table of contents lists the chapters.",
              page_meta(2, label="ii")),
    "at-12": ("The valve pressure on the twelfth sheet of the file is a figure.",
              page_meta(12, label="2")),
    "at-24": ("The valve pressure printed on page twelve is four bar.", page_meta(24, label="12")),
}


def beir(path: Path, records: dict[str, tuple[str, dict[str, Any]]]) -> Path:
    path.mkdir(parents=True)
    (path / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": i, "title": "Pump Manual", "text": text, "metadata": meta}) + "\n"
        for i, (text, meta) in records.items()), "utf-8")
    return path
