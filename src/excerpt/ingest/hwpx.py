"""HWPX (OWPML, KS X 6101): the text of a Hangul word-processor document, paragraph by paragraph.

An .hwpx file is a zip: ``Contents/content.hpf`` lists the sections (``Contents/section0.xml``,
...) in reading order; each section is XML whose paragraphs are ``hp:p`` elements holding runs
(``hp:run``) of text (``hp:t``). Tables hold their cells' paragraphs inside the paragraph that
anchors the table. Sections are read with a streaming XML parser (the book's main section is
~40 MB), keeping memory flat; each paragraph's own text is yielded when the paragraph ends, so
a table's cell paragraphs come before the (usually empty) paragraph that holds the table.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from excerpt.errors import CorpusError

HP = "{http://www.hancom.co.kr/hwpml/2011/paragraph}"
OPF = "{http://www.idpf.org/2007/opf/}"
_SECTION = re.compile(r"Contents/section(\d+)\.xml$")


def section_names(archive: zipfile.ZipFile) -> list[str]:
    """Section files in reading order: the package's spine when it has one, else by number."""
    names = set(archive.namelist())
    ordered: list[str] = []
    if "Contents/content.hpf" in names:
        root = ET.fromstring(archive.read("Contents/content.hpf"))
        items = {i.get("id"): i.get("href", "") for i in root.iter(f"{OPF}item")}
        for ref in root.iter(f"{OPF}itemref"):
            href = items.get(ref.get("idref"), "")
            full = href if href.startswith("Contents/") else f"Contents/{href}"
            if _SECTION.search(full) and full in names:
                ordered.append(full)
    if not ordered:
        found = [(int(m.group(1)), n) for n in names if (m := _SECTION.search(n))]
        ordered = [n for _, n in sorted(found)]
    return ordered


def hwpx_paragraphs(path: Path) -> Iterator[str]:
    """The text of every paragraph, in reading order (empty paragraphs included as '')."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise CorpusError(f"{path}: not an HWPX file (not a zip archive)") from None
    with archive:
        sections = section_names(archive)
        if not sections:
            raise CorpusError(f"{path}: not an HWPX file (no Contents/section*.xml)")
        for name in sections:
            with archive.open(name) as fh:
                try:
                    yield from _paragraphs(fh)
                except ET.ParseError as exc:
                    raise CorpusError(f"{path}: {name}: malformed XML: {exc}") from None


def _paragraphs(fh: IO[bytes]) -> Iterator[str]:
    depth = 0
    for event, elem in ET.iterparse(fh, events=("start", "end")):
        if elem.tag != f"{HP}p":
            continue
        if event == "start":
            depth += 1
            continue
        depth -= 1
        yield "".join(_own_text(elem))
        if depth == 0:
            elem.clear()  # free the finished top-level paragraph


def _own_text(paragraph: ET.Element) -> Iterator[str]:
    """Text of the paragraph's own runs (not of paragraphs nested in its tables)."""
    for run in paragraph.findall(f"{HP}run"):
        for t in run.findall(f"{HP}t"):
            yield from _t_text(t)


def _t_text(t: ET.Element) -> Iterator[str]:
    if t.text:
        yield t.text
    for child in t:  # hp:tab, hp:lineBreak, ... inside a text element
        if child.tag == f"{HP}tab":
            yield "\t"
        elif child.tag == f"{HP}lineBreak":
            yield "\n"
        if child.tail:
            yield child.tail
