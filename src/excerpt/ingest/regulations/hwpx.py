"""HWPX (OWPML, KS X 6101): the text of a Hangul word-processor document, paragraph by paragraph.

An .hwpx file is a zip: ``Contents/content.hpf`` lists the sections (``Contents/section0.xml``,
...) in reading order; each section is XML whose paragraphs are ``hp:p`` elements holding runs
(``hp:run``) of text (``hp:t``) and controls (``hp:ctrl``, ``hp:tbl``, ...).  Sections are read
with a streaming XML parser (the regulation book's main section is ~40 MB) and each finished
top-level paragraph is dropped from the tree, so memory stays flat.

What a paragraph yields, in document order (the order the word processor's own text export
keeps, which is what the plain-text edition of a regulation book is):

* its text, with ``hp:tab`` as a tab, ``hp:lineBreak`` as ``\\n`` (a line break inside a
  paragraph: ``①…<lineBreak/>② …`` puts each 항 on its own line), ``hp:fwSpace`` and
  ``hp:nbSpace`` as a space;
* a table (``hp:tbl``) inside it: the text before the table is yielded first (also when it is
  empty: the text export writes a blank line there), then each cell's paragraphs (row by row),
  then the text after the table as a paragraph of its own;
* page furniture is left out: the paragraphs of running headers and footers (``hp:header``,
  ``hp:footer``: the book repeats ``교원인사규정  3—1—5～`` and a rule on every page; they are
  not in the text edition and would fall between a regulation's title and its first article);
* footnotes and endnotes (``hp:footNote``, ``hp:endNote``) are read inline, where their mark
  stands in the paragraph, as the text edition has them;
* a paragraph whose style (``paraPrIDRef`` → ``hh:paraPr/hh:heading`` in ``Contents/header.xml``)
  numbers or bullets it gets that number or bullet written before its text, as the word
  processor draws it: ``1. ``, ``가. ``, ``- ``, ``■ `` (a counter per numbering and level,
  deeper levels restarting when a shallower one advances).  The text itself does not hold them.

Malformed XML, a file that is not a zip, a damaged zip, or a zip without sections is a
:class:`CorpusError` naming the file (and the member and position for XML errors).  Members are
read through :class:`~excerpt.ingest._archive.SafeZip`: a member that expands past the archive
limits (a zip bomb) is refused while it streams.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from excerpt.errors import CorpusError
from excerpt.ingest._archive import ArchiveLimits, Member, SafeZip

__all__ = ["hwpx_paragraphs", "section_names"]

HP = "{http://www.hancom.co.kr/hwpml/2011/paragraph}"
HH = "{http://www.hancom.co.kr/hwpml/2011/head}"
HEADER = "Contents/header.xml"
OPF = "{http://www.idpf.org/2007/opf/}"
_SECTION = re.compile(r"Contents/section(\d+)\.xml$")
_P, _T, _TBL = f"{HP}p", f"{HP}t", f"{HP}tbl"
_FURNITURE = frozenset({f"{HP}header", f"{HP}footer"})
_NOTES = frozenset({f"{HP}footNote", f"{HP}endNote"})
_INLINE = {f"{HP}tab": "\t", f"{HP}lineBreak": "\n", f"{HP}fwSpace": " ", f"{HP}nbSpace": " "}


def section_names(archive: SafeZip) -> list[str]:
    """Section files in reading order: the package's spine when it has one, else by number."""
    names = set(archive.names)
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


def hwpx_paragraphs(path: Path, limits: ArchiveLimits | None = None,
                    data: bytes | None = None) -> Iterator[str]:
    """The text of every paragraph in reading order (empty paragraphs included as '');
    see the module docstring for tables, line breaks, headers, notes and numbering.
    ``data``: the file's bytes, when already read (the file is not opened again)."""
    with SafeZip(path, limits or ArchiveLimits(), "an HWPX file", data) as archive:
        name = "Contents/content.hpf"
        try:
            sections = section_names(archive)
            if not sections:
                raise CorpusError(f"{path}: not an HWPX file (no Contents/section*.xml)")
            name = HEADER
            numbers = _Numbers.read(archive)
            for name in sections:
                with archive.open(name) as fh:
                    yield from _paragraphs(fh, numbers)
        except ET.ParseError as exc:
            raise CorpusError(f"{path}: {name}: malformed XML: {exc}") from None


@dataclass
class _Reader:
    """The state of one section's event stream: open paragraphs and what they hold so far."""

    numbers: _Numbers
    open: list[list[str]] = field(default_factory=list)  # text of each open paragraph
    skip: int = 0  # inside a running header or footer
    notes: int = 0  # inside a footnote or endnote

    def start(self, elem: ET.Element) -> Iterator[str]:
        tag = elem.tag
        if tag in _FURNITURE:
            self.skip += 1
        elif self.skip:
            return
        elif tag in _NOTES:
            self.notes += 1
        elif tag == _P:
            self.open.append([self.numbers.prefix(elem.get("paraPrIDRef", ""))])
        elif tag == _TBL and self.open and not self.notes:
            yield from self._flush(self.open[-1])

    def end(self, elem: ET.Element) -> Iterator[str]:
        tag = elem.tag
        if tag in _FURNITURE:
            self.skip -= 1
        elif self.skip:
            return
        elif tag in _NOTES:
            self.notes -= 1
        elif tag == _T and self.open:
            self.open[-1].extend(_t_text(elem))
        elif tag == _P and self.open:
            yield from self._close()

    def _close(self) -> Iterator[str]:
        text = "".join(self.open.pop())
        if self.notes and self.open:  # a note's paragraph: inline, where its mark stands
            self.open[-1].append(text)
            return
        yield text

    @staticmethod
    def _flush(buffer: list[str]) -> Iterator[str]:
        """The text before a table, as a line of its own (blank too, as the text export has)."""
        text = "".join(buffer)
        buffer.clear()
        yield text


def _paragraphs(fh: Member, numbers: _Numbers) -> Iterator[str]:
    reader = _Reader(numbers)
    root: ET.Element | None = None
    for event, elem in ET.iterparse(fh, events=("start", "end")):
        if root is None:
            root = elem
        if event == "start":
            yield from reader.start(elem)
            continue
        yield from reader.end(elem)
        if elem.tag == _P and not reader.open:
            root.clear()  # the finished top-level paragraph is no longer needed


def _t_text(t: ET.Element) -> Iterator[str]:
    if t.text:
        yield t.text
    for child in t:  # hp:tab, hp:lineBreak, hp:fwSpace, markers ... inside a text element
        yield _INLINE.get(child.tag, "")
        if child.tail:
            yield child.tail


# --- paragraph numbering and bullets (Contents/header.xml) ---------------------------------------

# Two of the book's bullets are symbol-font code points (Private Use Area); the word processor's
# text export writes them as these characters (seen in the 9-340 text edition).  Others as is.
_SYMBOLS = {"\uf0a7": "■", "\uf09f": "●"}
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"
_SYLLABLES = "가나다라마바사아자차카타파하"
_JAMO = "ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ"
_LEVEL = re.compile(r"\^(\d+)")


@dataclass
class _Numbers:
    """Paragraph styles that number or bullet their paragraphs, and the running counters."""

    # paraPr id -> (NUMBER/BULLET/OUTLINE, numbering or bullet id, level from 0)
    heading: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    bullets: dict[str, str] = field(default_factory=dict)  # bullet id -> character
    formats: dict[str, dict[int, tuple[str, str, int]]] = field(default_factory=dict)
    counters: dict[str, list[int]] = field(default_factory=dict)  # numbering id -> per level

    @classmethod
    def read(cls, archive: SafeZip) -> _Numbers:
        """The styles of ``Contents/header.xml`` (none when the package has no header)."""
        numbers = cls()
        if not archive.has(HEADER):
            return numbers
        with archive.open(HEADER) as fh:
            for _, elem in ET.iterparse(fh):
                numbers._take(elem)
        return numbers

    def _take(self, elem: ET.Element) -> None:
        if elem.tag == f"{HH}paraPr":
            head = elem.find(f"{HH}heading")
            if head is not None and head.get("type") in ("NUMBER", "BULLET", "OUTLINE"):
                self.heading[elem.get("id", "")] = (
                    head.get("type", ""), head.get("idRef", ""), int(head.get("level") or 0))
        elif elem.tag == f"{HH}bullet":
            char = elem.get("char", "")
            self.bullets[elem.get("id", "")] = _SYMBOLS.get(char, char)
        elif elem.tag == f"{HH}numbering":
            self.formats[elem.get("id", "")] = {
                int(h.get("level") or 1): (h.text or "", h.get("numFormat", "DIGIT"),
                                           int(h.get("start") or 1))
                for h in elem.findall(f"{HH}paraHead")}
        else:
            return
        elem.clear()

    def prefix(self, para_pr: str) -> str:
        """What the word processor draws before a paragraph of style ``para_pr``: ``""``,
        ``"- "`` or the next number (``"1. "``) of its numbering; advances the counter."""
        kind, ref, level = self.heading.get(para_pr, ("", "", 0))
        if kind == "BULLET":
            char = self.bullets.get(ref, "")
            return f"{char} " if char else ""
        if kind == "NUMBER":
            return self._number(ref, level + 1)
        return ""  # OUTLINE: the book's outline numbering draws nothing

    def _number(self, ref: str, level: int) -> str:
        formats = self.formats.get(ref, {})
        if level not in formats:
            return ""
        counters = self.counters.setdefault(ref, [0] * 11)
        level = min(level, 10)
        counters[level] = counters[level] + 1 if counters[level] else formats[level][2]
        for deeper in range(level + 1, len(counters)):
            counters[deeper] = 0
        text = _LEVEL.sub(lambda m: _format(formats, counters, int(m.group(1))), formats[level][0])
        return f"{text} " if text else ""


def _format(formats: dict[int, tuple[str, str, int]], counters: list[int], level: int) -> str:
    fmt = formats.get(level, ("", "DIGIT", 1))[1]
    value = counters[level] if level < len(counters) and counters[level] else 1
    table = {"CIRCLED_DIGIT": _CIRCLED, "HANGUL_SYLLABLE": _SYLLABLES, "HANGUL_JAMO": _JAMO,
             "LATIN_SMALL": "abcdefghijklmnopqrstuvwxyz",
             "LATIN_CAPITAL": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}.get(fmt)
    if table and value <= len(table):
        return table[value - 1]
    if fmt in ("ROMAN_SMALL", "ROMAN_CAPITAL"):
        roman = _roman(value)
        return roman.lower() if fmt == "ROMAN_SMALL" else roman
    return str(value)


def _roman(value: int) -> str:
    out = []
    for number, letters in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"),
                            (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
                            (4, "IV"), (1, "I")):
        count, value = divmod(value, number)
        out.append(letters * count)
    return "".join(out)
