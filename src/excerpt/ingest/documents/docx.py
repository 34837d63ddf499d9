"""Word documents (.docx) read as blocks: headings, paragraphs, lists, table rows, footnotes.

python-docx opens the package and gives the parts; the body is then read from its XML, because
python-docx leaves out what a reader of the document sees and a search needs:

* a heading is a paragraph whose style is "Heading N" (or based on one), or that has an outline
  level (its own or its style's); "Title" is a level-1 heading;
* numbers Word draws and the text does not hold: a numbered heading's "2.1" and a numbered
  list's "3." are computed from numbering.xml (level formats, starts, restarts) and put before
  the text, so "section 2.1" and "step 3" can be found; bullets are left out;
* a list item's depth is its numbering level (``w:ilvl``), else the digit of a "List Bullet 2"
  style;
* a table is one block per row, its cells' text joined with ``" | "``; a cell merged across
  columns is one ``w:tc`` and comes once, and the continuation cells of a vertical merge are
  left out, so merged text is never repeated;
* a footnote reference becomes ``[n]`` in the text (n: the order of first reference, as Word
  shows it) and the footnote (word/footnotes.xml) a ``footnote`` block ``[n] text`` right after
  the paragraph or table row that refers to it; endnotes (word/endnotes.xml) the same, numbered
  ``[i]``, ``[ii]``… as Word numbers them (next to the text that cites them, not at the end,
  so a passage and its note are found together);
* deleted revisions, field codes and table-of-contents paragraphs (styles "TOC N": page
  numbers of the headings already read) are left out; text boxes too (they float outside the
  reading order).

The title is the core properties' title, else the first heading, else the file name; the author
goes into the metadata.  A file that is no zip, no Word document, or holds no text is a
:class:`CorpusError` naming the file.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml.ns import qn
from lxml import etree  # type: ignore[import-untyped, unused-ignore]

from excerpt.errors import CorpusError
from excerpt.ingest._archive import ArchiveLimits, SafeZip
from excerpt.ingest.documents.blocks import Block, StructuredDoc

__all__ = ["looks_like", "read"]

Element = Any  # lxml elements (lxml ships no type information)

_HEADING_NAME = re.compile(r"^heading\s*(\d)$", re.I)
_LIST_NAME = re.compile(r"^list(?: bullet| number| continue)?\s*(\d)?$", re.I)
_TOC_NAME = re.compile(r"^toc\s*(heading|\d)", re.I)
_BODY_TEXT_LEVEL = 9  # w:outlineLvl 9 is body text
_VAL = qn("w:val")
_ID = qn("w:id")
_TEXT_TAGS = {qn("w:t"): None, qn("w:tab"): " ", qn("w:br"): " ", qn("w:cr"): " ",
              qn("w:noBreakHyphen"): "-", qn("w:footnoteReference"): None,
              qn("w:endnoteReference"): None}
# Note references: footnotes numbered 1, 2, 3 and endnotes i, ii, iii, as Word shows them.
_NOTE_KINDS = {qn("w:footnoteReference"): "f", qn("w:endnoteReference"): "e"}
_PIECE = 1 << 20


def read(path: Path, doc_id: str, *, limits: ArchiveLimits | None = None,
         data: bytes | None = None) -> StructuredDoc:
    """One .docx file as a :class:`StructuredDoc` (see the module); ``data``: its bytes, when
    already read (the file is not opened again)."""
    _vet(path, limits or ArchiveLimits(), data)
    try:
        document = docx.Document(str(path) if data is None else io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile,
            etree.XMLSyntaxError) as exc:
        raise CorpusError(f"{path}: not a readable Word document ({exc})") from None
    reader = _Reader(document)
    reader.walk(document.element.body)
    if not reader.blocks:
        raise CorpusError(f"{path}: no text found in the Word document")
    core = document.core_properties
    first = next((b.text for b in reader.blocks if b.kind == "heading"), "")
    metadata: dict[str, Any] = {"format": "docx"}
    if core.author and core.author.strip():
        metadata["author"] = core.author.strip()
    title = (core.title or "").strip() or first or path.stem
    return StructuredDoc(doc_id=doc_id, title=title, blocks=reader.blocks, metadata=metadata)


def looks_like(path: Path) -> bool:
    """True for a zip archive holding word/document.xml (the central directory only is read)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def _vet(path: Path, limits: ArchiveLimits, data: bytes | None = None) -> None:
    """Stream every member through :class:`SafeZip` first: a zip bomb or a damaged archive is
    refused before python-docx (which trusts the archive) expands anything."""
    with SafeZip(path, limits, "a Word document (.docx; an old .doc must be saved as .docx)",
                 data) as archive:
        if not archive.has("word/document.xml"):
            raise CorpusError(f"{path}: not a Word document (no word/document.xml; "
                              "an .xlsx, .pptx or .odt?)")
        for name in archive.names:
            with archive.open(name) as member:
                while member.read(_PIECE):
                    pass


@dataclass(frozen=True)
class _Style:
    name: str
    outline: int | None  # 0-based outline level, None for none
    num_id: str | None
    ilvl: int | None


class _Styles:
    """Paragraph styles by id, with what they inherit from their ``basedOn`` chain."""

    def __init__(self, document: Any) -> None:
        self._raw: dict[str, Element] = {}
        self.default = ""
        for style in document.styles.element.iterchildren(qn("w:style")):
            sid = style.get(qn("w:styleId"), "")
            self._raw[sid] = style
            if style.get(qn("w:default")) in ("1", "true") and \
                    style.get(qn("w:type")) == "paragraph":
                self.default = sid
        self._cache: dict[str, _Style] = {}

    def get(self, sid: str) -> _Style:
        if sid not in self._cache:
            self._cache[sid] = self._resolve(sid, set())
        return self._cache[sid]

    def _resolve(self, sid: str, seen: set[str]) -> _Style:
        raw = self._raw.get(sid)
        if raw is None or sid in seen:
            return _Style("", None, None, None)
        seen.add(sid)
        based = raw.find(qn("w:basedOn"))
        parent = self._resolve(based.get(_VAL, ""), seen) if based is not None else None
        name = _val(raw.find(qn("w:name"))) or sid
        ppr = raw.find(qn("w:pPr"))
        outline, num_id, ilvl = _ppr_numbers(ppr)
        if parent is not None:
            outline = parent.outline if outline is None else outline
            num_id = parent.num_id if num_id is None else num_id
            ilvl = parent.ilvl if ilvl is None else ilvl
            if not _HEADING_NAME.match(name) and _HEADING_NAME.match(parent.name):
                name = parent.name  # a custom style based on "Heading 2" is a heading 2
        return _Style(name, outline, num_id, ilvl)


def _val(el: Element | None) -> str | None:
    return None if el is None else el.get(_VAL)


def _ppr_numbers(ppr: Element | None) -> tuple[int | None, str | None, int | None]:
    """A ``w:pPr``'s outline level, numbering id and numbering level (None: not set)."""
    if ppr is None:
        return None, None, None
    outline = _val(ppr.find(qn("w:outlineLvl")))
    num = ppr.find(qn("w:numPr"))
    num_id = _val(num.find(qn("w:numId"))) if num is not None else None
    ilvl = _val(num.find(qn("w:ilvl"))) if num is not None else None
    return (_int(outline), num_id, _int(ilvl))


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


@dataclass(frozen=True)
class _Level:
    fmt: str
    text: str
    start: int


class _Numbering:
    """The numbers Word draws before numbered paragraphs (counters per abstract numbering)."""

    def __init__(self, document: Any) -> None:
        self._abstract: dict[str, dict[int, _Level]] = {}
        self._nums: dict[str, tuple[str, dict[int, int]]] = {}
        self._counters: dict[str, dict[int, int]] = {}
        self._started: set[str] = set()
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError):
            return
        for abstract in root.iterchildren(qn("w:abstractNum")):
            levels = {}
            for lvl in abstract.iterchildren(qn("w:lvl")):
                levels[_int(lvl.get(qn("w:ilvl"))) or 0] = _Level(
                    _val(lvl.find(qn("w:numFmt"))) or "decimal",
                    _val(lvl.find(qn("w:lvlText"))) or "",
                    _int(_val(lvl.find(qn("w:start")))) or 1)
            self._abstract[abstract.get(qn("w:abstractNumId"), "")] = levels
        for num in root.iterchildren(qn("w:num")):
            overrides = {}
            for over in num.iterchildren(qn("w:lvlOverride")):
                start = _int(_val(over.find(qn("w:startOverride"))))
                if start is not None:
                    overrides[_int(over.get(qn("w:ilvl"))) or 0] = start
            abstract_id = _val(num.find(qn("w:abstractNumId"))) or ""
            self._nums[num.get(qn("w:numId"), "")] = (abstract_id, overrides)

    def label(self, num_id: str, ilvl: int) -> str:
        """The next number of level ``ilvl`` in list ``num_id`` ('' for a bullet)."""
        abstract_id, overrides = self._nums.get(num_id, ("", {}))
        levels = self._abstract.get(abstract_id)
        if not levels or ilvl not in levels:
            return ""
        counters = self._counters.setdefault(abstract_id, {})
        if num_id not in self._started:
            self._started.add(num_id)
            for lvl, start in overrides.items():
                counters[lvl] = start - 1
        counters[ilvl] = counters.get(ilvl, levels[ilvl].start - 1) + 1
        for deeper in [k for k in counters if k > ilvl]:
            del counters[deeper]
        level = levels[ilvl]
        if level.fmt in ("bullet", "none"):
            return ""

        def number(found: re.Match[str]) -> str:
            k = int(found.group(1)) - 1
            at = levels.get(k, level)
            return _format(counters.get(k, at.start), at.fmt)

        return re.sub(r"%(\d)", number, level.text).strip()


def _format(n: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        letter = chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)
        return letter.upper() if fmt == "upperLetter" else letter
    if fmt in ("lowerRoman", "upperRoman"):
        roman = _roman(n)
        return roman if fmt == "upperRoman" else roman.lower()
    return f"{n:02d}" if fmt == "decimalZero" else str(n)


def _roman(n: int) -> str:
    out = ""
    for value, digits in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"),
                          (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
                          (4, "IV"), (1, "I")):
        while n >= value:
            out, n = out + digits, n - value
    return out


def _notes(document: Any) -> dict[str, str]:
    """``f:<id>`` (footnotes.xml) and ``e:<id>`` (endnotes.xml) -> the note's text
    (separators left out)."""
    notes = {}
    for rel in document.part.rels.values():
        kind = {RT.FOOTNOTES: "footnote", RT.ENDNOTES: "endnote"}.get(rel.reltype)
        if kind is None or rel.is_external:
            continue
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        try:
            root = etree.fromstring(rel.target_part.blob, parser)
        except etree.XMLSyntaxError:
            continue  # damaged notes: the body is still worth reading
        for note in root.iterchildren(qn(f"w:{kind}")):
            if note.get(qn("w:type")) in (None, "normal"):
                texts = [_run_text(p, lambda _: "")[0] for p in note.iter(qn("w:p"))]
                notes[f"{kind[0]}:{note.get(_ID, '')}"] = " ".join(t for t in texts if t)
    return notes


def _run_text(p: Element, reference: Any) -> tuple[str, list[str]]:
    """A paragraph's visible text (not its text boxes') and the footnote ids it refers to;
    ``reference(key)`` gives the marker put where a note is referred to (key: ``f:<id>``
    for a footnote, ``e:<id>`` for an endnote)."""
    parts: list[str] = []
    refs: list[str] = []
    for el in p.iter(*_TEXT_TAGS):
        if next(el.iterancestors(qn("w:p")), None) is not p:
            continue
        if el.tag == qn("w:t"):
            parts.append(el.text or "")
        elif el.tag in _NOTE_KINDS:
            refs.append(f"{_NOTE_KINDS[el.tag]}:{el.get(_ID, '')}")
            parts.append(reference(refs[-1]))
        else:
            parts.append(_TEXT_TAGS[el.tag] or "")
    return re.sub(r"\s+", " ", "".join(parts)).strip(), refs


class _Reader:
    """Walks the body in order and collects blocks."""

    def __init__(self, document: Any) -> None:
        self.blocks: list[Block] = []
        self.styles = _Styles(document)
        self.numbering = _Numbering(document)
        self.notes = _notes(document)
        self.note_numbers: dict[str, dict[str, int]] = {"f": {}, "e": {}}

    def walk(self, container: Element) -> None:
        for child in container.iterchildren():
            if child.tag == qn("w:p"):
                self.paragraph(child)
            elif child.tag == qn("w:tbl"):
                self.table(child)
            elif child.tag in (qn("w:sdt"), qn("w:customXml"), qn("w:sdtContent")):
                self.walk(child.find(qn("w:sdtContent")) if child.tag == qn("w:sdt")
                          else child)

    def marker(self, key: str) -> str:
        numbers = self.note_numbers[key[0]]
        number = numbers.setdefault(key, len(numbers) + 1)
        return f"[{number}]" if key[0] == "f" else f"[{_roman(number).lower()}]"

    def paragraph(self, p: Element) -> None:
        text, refs = _run_text(p, self.marker)
        ppr = p.find(qn("w:pPr"))
        named = _val(ppr.find(qn("w:pStyle"))) if ppr is not None else None
        style = self.styles.get(named or self.styles.default)
        if _TOC_NAME.match(style.name):
            return
        outline, num_id, ilvl = _ppr_numbers(ppr)
        outline = style.outline if outline is None else outline
        num_id = style.num_id if num_id is None else num_id
        listed = num_id not in (None, "0")
        label = self.numbering.label(num_id or "", ilvl if ilvl is not None
                                     else style.ilvl or 0) if listed else ""
        if text:
            text = f"{label} {text}" if label else text
            self.blocks.append(self.kind_of(style, outline, listed, ilvl, text))
        self.footnotes(refs)

    def kind_of(self, style: _Style, outline: int | None, listed: bool, ilvl: int | None,
                text: str) -> Block:
        heading = _HEADING_NAME.match(style.name)
        if heading:
            return Block("heading", text, level=int(heading.group(1)))
        if style.name.lower() == "title":
            return Block("heading", text, level=1)
        if outline is not None and outline < _BODY_TEXT_LEVEL:
            return Block("heading", text, level=outline + 1)
        named = _LIST_NAME.match(style.name)
        if listed or named:
            if ilvl is None and named and named.group(1):
                ilvl = int(named.group(1)) - 1
            return Block("list_item", text, level=ilvl if ilvl is not None else style.ilvl or 0)
        return Block("paragraph", text)

    def table(self, tbl: Element) -> None:
        for tr in tbl.iterchildren(qn("w:tr")):
            cells: list[str] = []
            refs: list[str] = []
            for tc in tr.iter(qn("w:tc")):
                if next(tc.iterancestors(qn("w:tr"))) is not tr or _merged_below(tc):
                    continue
                texts = [_run_text(p, self.marker) for p in tc.iter(qn("w:p"))]
                cells.append(" ".join(t for t, _ in texts if t))
                refs += [r for _, found in texts for r in found]
            row = " | ".join(c for c in cells if c)
            if row:
                self.blocks.append(Block("table_row", row))
            self.footnotes(refs)

    def footnotes(self, refs: list[str]) -> None:
        for ref in refs:
            text = self.notes.get(ref)
            if text:
                self.blocks.append(Block("footnote", f"{self.marker(ref)} {text}"))


def _merged_below(tc: Element) -> bool:
    """A cell that continues a vertical merge (its text is the first cell's)."""
    merge = tc.find(f"{qn('w:tcPr')}/{qn('w:vMerge')}")
    return merge is not None and merge.get(_VAL) != "restart"
